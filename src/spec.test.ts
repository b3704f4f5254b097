import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  SPECS_DIR,
  createAjv,
  formatAjvErrors,
  loadCatalogue,
  loadOpenApi,
  parameter,
  readJson,
  requirement,
  strongestLevel,
  loadProfile,
  field,
} from './spec.js';
import { matchesGrep } from './harness.js';

describe('the contracts as data', () => {
  test('both catalogues validate against their schema, with unique prefixed ids', () => {
    const all = loadCatalogue();
    expect([...all.values()].filter((r) => r.service === 'feed').length).toBeGreaterThan(50);
    expect([...all.values()].filter((r) => r.service === 'gateway').length).toBeGreaterThan(40);
  });

  test('every schema file in specs/ is valid against the JSON Schema meta-schema and compiles strictly', () => {
    // A run compiles them without checking them against the meta-schema (createAjv): it is checked here.
    const files = readdirSync(SPECS_DIR).filter((f) => f.endsWith('.schema.json'));
    expect(files).toContain('requirements.schema.json');
    for (const f of files) {
      const ajv = createAjv({ checkSchemas: true });
      const schema = readJson<object>(path.join(SPECS_DIR, f));
      expect(ajv.validateSchema(schema), `${f}: ${formatAjvErrors(ajv.errors)}`).toBe(true);
      expect(() => ajv.compile(schema), f).not.toThrow();
    }
  });

  test('an unknown requirement id is an error that names it', () => {
    expect(() => requirement('feed-no-such-thing')).toThrow(/unknown requirement id "feed-no-such-thing"/);
  });

  test('a check takes the strongest level of its requirements', () => {
    expect(strongestLevel(['MAY', 'SHOULD'])).toBe('SHOULD');
    expect(strongestLevel(['SHOULD', 'MUST', 'MAY'])).toBe('MUST');
  });

  test('the OpenAPI descriptions load offline with every $ref resolved', async () => {
    const feed = await loadOpenApi('feed');
    expect(parameter(feed, 'listItems', 'limit').schema).toMatchObject({ minimum: 1, maximum: 100, default: 50 });
    expect(parameter(feed, 'listItems', 'q').schema).toMatchObject({ minLength: 2, maxLength: 200, 'x-trim': true });
    const gw = await loadOpenApi('gateway');
    expect(gw.paths['/v1/chat/completions']!.post!.security).toEqual([{ bearer: [] }]);
    expect(JSON.stringify(gw)).not.toContain('"$ref"');
  });

  test('the default profile validates, and fields are read by dotted path', () => {
    const p = loadProfile();
    expect(field({ page: { nextCursor: 'c' } }, p.feed.items.nextCursor!)).toBe('c');
    expect(field({ page: null }, 'page.nextCursor')).toBeUndefined();
  });

  test('--grep matches id, title or requirement id, with comma-separated alternatives', () => {
    const spec = { id: 'feed-etag-stable-list-items', title: 'listItems: the ETag stays', requirements: ['feed-etag-stable'] };
    expect(matchesGrep(spec, undefined)).toBe(true);
    expect(matchesGrep(spec, 'ETAG-STABLE')).toBe(true);
    expect(matchesGrep(spec, 'gw-,feed-etag')).toBe(true);
    expect(matchesGrep(spec, 'gw-models')).toBe(false);
  });
});
