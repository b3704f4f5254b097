/**
 * The parameter generators and the raw 304 reader, on their own: near misses of every enum rule in the feed's
 * OpenAPI description, boundaries tried whatever --runs says, and bytes after a 304's header section seen.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadOpenApi, type JsonSchema } from './spec.js';
import { setFeedTestContext } from './context.js';
import { scratchDir } from '../fixtures/scratch.js';

let server: Server;
let url: string;

beforeAll(async () => {
  // A bare server: /ok answers a clean 304, /dirty writes bytes after the 304's header section.
  server = createServer((req, res) => {
    res.writeHead(304, { etag: '"x"', 'cache-control': 'max-age=60', connection: 'close' });
    res.end();
    if (req.url === '/dirty') res.socket?.write('{"stale":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  setFeedTestContext(url, scratchDir('generate-test-'));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('near misses of enum rules', () => {
  test('every enum parameter of the feed description gets its near misses, none of them an allowed value', async () => {
    const { nearMissEnumValues } = await import('./generate.js');
    const doc = await loadOpenApi('feed');
    const enums = Object.values(doc.paths)
      .flatMap((m) => m.get?.parameters ?? [])
      .filter((p) => p.in === 'query' && p.schema.enum);
    expect(enums.map((p) => p.name).sort()).toEqual(['by', 'fields', 'mode', 'window']);
    for (const p of enums) {
      const near = nearMissEnumValues(p.schema);
      const allowed = p.schema.enum!.map(String);
      expect(near).toContain('');
      for (const v of near) expect(allowed).not.toContain(v);
      for (const a of allowed) {
        expect(near, `${p.name}: another case of ${a}`).toContain(a.toUpperCase());
        expect(
          near.some((v) => v !== a && v.trim() === a),
          `${p.name}: ${a} padded`,
        ).toBe(true);
      }
    }
  });

  test('a duration gets its neighbour in the same unit and the same span in another unit', async () => {
    const { nearMissEnumValues } = await import('./generate.js');
    const near = nearMissEnumValues({ type: 'string', enum: ['24h', '7d'] } as JsonSchema);
    expect(near).toEqual(expect.arrayContaining(['25h', '1d', '8d', '168h']));
  });
});

describe('boundaries are always tried', () => {
  test('with runs 1, both examples are checked before any generated value', async () => {
    const { property } = await import('./generate.js');
    const fc = (await import('fast-check')).default;
    const seen: number[] = [];
    await property(
      fc.integer({ min: 2, max: 99 }),
      async (v) => {
        seen.push(v);
      },
      { runs: 1, examples: [1, 100] },
    );
    expect(seen.slice(0, 2)).toEqual([1, 100]);
    expect(seen.length).toBe(3);
  });
});

describe("the input forms at a length rule's edges", () => {
  const q = { type: 'string', minLength: 2, maxLength: 200, 'x-trim': true } as unknown as JsonSchema;
  const cps = (v: string) => [...v].length;
  const clusters = (v: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(v)].length;
  test('a length in UTF-16 units or in grapheme clusters differs from code points at one edge', async () => {
    const { boundaries } = await import('./generate.js');
    const valid = boundaries(q, 'valid') as string[];
    const invalid = boundaries(q, 'invalid') as string[];
    for (const v of valid) expect(cps(v.trim()), JSON.stringify(v)).toBeGreaterThanOrEqual(2);
    for (const v of valid) expect(cps(v.trim()), JSON.stringify(v)).toBeLessThanOrEqual(200);
    for (const v of invalid) expect(cps(v.trim()) < 2 || cps(v.trim()) > 200, JSON.stringify(v)).toBe(true);
    // One astral character: 1 code point, 2 UTF-16 units (refused); combining marks: 2 code points, 1 cluster (served).
    expect(invalid.some((v) => cps(v) === 1 && v.length === 2)).toBe(true);
    expect(valid.some((v) => cps(v) === 2 && clusters(v) === 1)).toBe(true);
    expect(invalid.some((v) => cps(v) === 201 && clusters(v) <= 200)).toBe(true);
  });
  test('a trimmed rule: Unicode whitespace beyond ASCII is trimmed, and a blank value is refused', async () => {
    const { boundaries } = await import('./generate.js');
    const ascii = (v: string) => v.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, '');
    const valid = boundaries(q, 'valid') as string[];
    const invalid = boundaries(q, 'invalid') as string[];
    expect(valid.some((v) => cps(ascii(v)) > 200)).toBe(true);
    expect(invalid.some((v) => cps(ascii(v)) >= 2 && cps(v.trim()) < 2)).toBe(true);
    expect(invalid).toEqual(expect.arrayContaining(['', '   ']));
    expect(invalid.some((v) => v !== '' && ascii(v) !== '' && v.trim() === '')).toBe(true);
  });
});

describe('the raw reader sees what an HTTP client hides', () => {
  test('no byte after a clean 304; the stray body after a dirty one', async () => {
    const { rawGet } = await import('./raw-http.js');
    const clean = await rawGet(new URL(`${url}/ok`), { 'if-none-match': '"x"' }, 'feed');
    expect(clean.status).toBe(304);
    expect(clean.headers.etag).toBe('"x"');
    expect(clean.after.length).toBe(0);
    const dirty = await rawGet(new URL(`${url}/dirty`), { 'if-none-match': '"x"' }, 'feed');
    expect(dirty.status).toBe(304);
    expect(dirty.after.toString()).toBe('{"stale":true}');
  });
});
