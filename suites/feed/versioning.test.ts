/**
 * content-feed-service.md — Versioning: /openapi-v1.json, and every operation under /api/v1.
 */
import { describe } from 'vitest';
import { check, expect, jsonBody } from '../../src/harness.js';
import { feedGet, once } from '../../src/feed.js';
import { loadOpenApi } from '../../src/spec.js';

const published = () =>
  once('openapi-v1', async () => {
    const res = await feedGet('/openapi-v1.json');
    expect(res.status, 'GET /openapi-v1.json').toBe(200);
    return {
      res,
      doc: jsonBody<{
        openapi?: string;
        info?: { version?: string };
        paths?: Record<string, Record<string, { parameters?: { name?: string; in?: string; $ref?: string }[] }>>;
      }>(res),
    };
  });

describe('the machine-readable description', () => {
  check(
    { id: 'feed-openapi-served', title: '/openapi-v1.json is served: OpenAPI 3.1.0, version 2.0.0', requirements: ['feed-openapi-published'] },
    async (t) => {
      const { res, doc } = await published();
      t.cite(res);
      expect(doc.openapi, 'openapi').toBe('3.1.0');
      expect(doc.info?.version, 'info.version').toBe('2.0.0');
    },
  );

  check({ id: 'feed-openapi-paths-v1', title: 'every operation the description lists is under /api/v1', requirements: ['feed-paths-v1-prefix'] }, async (t) => {
    const { res, doc } = await published();
    t.cite(res);
    // Path keys begin with "/" (OpenAPI 3.1 4.8.8); other keys are extensions.
    const outside = Object.keys(doc.paths ?? {}).filter((p) => p.startsWith('/') && !p.startsWith('/api/v1/') && p !== '/api/v1');
    expect(outside, 'paths outside /api/v1').toEqual([]);
  });

  check(
    {
      id: 'feed-openapi-lists-operations',
      title: 'the description lists every documented operation with its documented query parameters',
      requirements: ['feed-openapi-operations'],
    },
    async (t) => {
      const { res, doc } = await published();
      t.cite(res);
      const ours = await loadOpenApi('feed');
      const missing: string[] = [];
      for (const [path, methods] of Object.entries(ours.paths)) {
        const theirs = doc.paths?.[path]?.get;
        if (!theirs) {
          missing.push(`GET ${path}`);
          continue;
        }
        const declared = JSON.stringify(theirs.parameters ?? []) + JSON.stringify(doc.paths?.[path] ?? {});
        for (const p of methods.get?.parameters ?? []) {
          // Parameters may be inline or $ref'd components: look for the name anywhere in the operation or the components it uses.
          if (p.in !== 'query') continue;
          const inComponents = JSON.stringify((doc as { components?: unknown }).components ?? {}).includes(`"name":"${p.name}"`);
          if (!declared.includes(`"name":"${p.name}"`) && !(declared.includes('$ref') && inComponents)) missing.push(`${p.name} of GET ${path}`);
        }
      }
      expect(missing, 'documented operations and parameters missing from /openapi-v1.json').toEqual([]);
    },
  );
});
