/**
 * content-feed-service.md — Versioning: /openapi-v1.json, and every operation under /api/v1.
 */
import { check, expect, jsonBody, checkGroup, PreconditionFailed } from '../../src/harness.js';
import { feedGet, once } from '../../src/feed.js';
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { isPlainObject, loadOpenApi, type JsonSchema } from '../../src/spec.js';
import { ENTITY_TAG } from '../../src/caching.js';

interface Param {
  name?: unknown;
  in?: unknown;
  schema?: JsonSchema;
}
interface Doc {
  paths?: Record<string, { parameters?: Param[]; get?: { parameters?: Param[] } }>;
}

/** Rules of a parameter the published description states differently (a rule it leaves out is not a difference). */
function ruleDifferences(ours: JsonSchema, theirs: JsonSchema | undefined): string[] {
  if (!theirs) return [];
  const out: string[] = [];
  if (ours.enum && theirs.enum) {
    const a = ours.enum.map(String).sort();
    const b = (Array.isArray(theirs.enum) ? theirs.enum : []).map(String).sort();
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`enum ${JSON.stringify(b)}, the document says ${JSON.stringify(a)}`);
  }
  for (const k of ['minimum', 'maximum', 'minLength', 'maxLength'] as const) {
    if (ours[k] !== undefined && theirs[k] !== undefined && ours[k] !== theirs[k]) out.push(`${k} ${String(theirs[k])}, the document says ${ours[k]}`);
  }
  // A default both state (the document's parameter tables give one): a client generated from the description sends
  // nothing and expects the description's.
  if (ours.default !== undefined && theirs.default !== undefined && String(ours.default) !== String(theirs.default))
    out.push(`default ${JSON.stringify(theirs.default)}, the document says ${JSON.stringify(ours.default)}`);
  return out;
}

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

/** The published description with its $refs in place (local ones only), once per run; rejects when they do not resolve. */
const resolved = () =>
  once('openapi-v1-resolved', async () =>
    $RefParser.dereference(structuredClone(jsonBody<Doc>((await published()).res)), {
      resolve: { http: false, external: false },
      dereference: { circular: 'ignore' },
    }),
  );

checkGroup('the machine-readable description', () => {
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
      const { res } = await published();
      t.cite(res);
      // The published document resolved (its $refs in place), then compared with ours operation by operation.
      let theirs: Doc;
      try {
        theirs = (await resolved()) as Doc;
      } catch (e) {
        return t.violation(`/openapi-v1.json cannot be resolved: ${(e as Error).message}`);
      }
      const ours = await loadOpenApi('feed');
      const missing: string[] = [];
      const differing: string[] = [];
      for (const [path, methods] of Object.entries(ours.paths)) {
        const item = theirs.paths?.[path];
        const op = item?.get;
        if (!item || !op) {
          missing.push(`GET ${path}`);
          continue;
        }
        // Path-level parameters apply to every operation of the path unless the operation overrides them (OAS 3.1 4.8.9).
        const declared = new Map<string, Param>();
        for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) if (p && typeof p.name === 'string') declared.set(`${p.in}:${p.name}`, p);
        for (const p of methods.get?.parameters ?? []) {
          if (p.in !== 'query' && p.in !== 'path') continue;
          const q = declared.get(`${p.in}:${p.name}`);
          if (!q) {
            missing.push(`${p.in} parameter ${p.name} of GET ${path}`);
            continue;
          }
          for (const d of ruleDifferences(p.schema, q.schema)) differing.push(`${p.name} of GET ${path}: ${d}`);
        }
      }
      t.observe('operations compared', String(Object.keys(ours.paths).length));
      const problems = [
        ...(missing.length ? [`missing from /openapi-v1.json: ${missing.join('; ')}`] : []),
        ...(differing.length ? [`stated otherwise than the document: ${differing.join('; ')}`] : []),
      ];
      if (problems.length) t.violation(problems.join('. '));
    },
  );
});

/**
 * Where a description declares a push channel: its webhooks (OAS 3.1 4.8.1), an operation's callbacks, a response
 * body of type text/event-stream. Only there: a schema property or an example named so is not a declaration.
 */
function pushDeclared(doc: unknown): string[] {
  const out: string[] = [];
  const obj = (v: unknown): Record<string, unknown> => (isPlainObject(v) ? v : {});
  const webhooks = Object.keys(obj(obj(doc).webhooks));
  if (webhooks.length) out.push(`webhooks (${webhooks.join(', ')})`);
  for (const [path, item] of Object.entries(obj(obj(doc).paths)))
    for (const [method, op] of Object.entries(obj(item))) {
      const callbacks = Object.keys(obj(obj(op).callbacks));
      if (callbacks.length) out.push(`${method.toUpperCase()} ${path} callbacks (${callbacks.join(', ')})`);
      for (const [status, r] of Object.entries(obj(obj(op).responses)))
        for (const type of Object.keys(obj(obj(r).content))) if (/event-stream/i.test(type)) out.push(`${method.toUpperCase()} ${path} ${status}: ${type}`);
    }
  return out;
}

checkGroup('the machine-readable description declares no push channel', () => {
  check(
    {
      id: 'feed-openapi-no-push',
      title: 'the description declares no push channel: no webhooks, no callbacks, no text/event-stream body',
      requirements: ['feed-no-push-channel'],
    },
    async (t) => {
      // The description served as JSON is feed-openapi-served's to judge; here it is only read.
      const { res, doc } = await published().catch((e: unknown) => {
        throw new PreconditionFailed(`/openapi-v1.json could not be read: ${(e as Error).message.split('\n')[0]}`, ['feed-openapi-published']);
      });
      t.cite(res);
      const found = pushDeclared(doc);
      if (found.length) t.violation(`/openapi-v1.json declares a push channel ("no SSE, no webhooks, no streaming"): ${found.slice(0, 5).join('; ')}`);
    },
  );
});

/**
 * The operations of a published description that require a credential (OAS 3.1 4.8.30: an operation's `security`, else
 * the document's, is a list of alternatives, one of which must be met; an empty alternative `{}` makes it optional).
 */
function credentialRequired(doc: { security?: unknown; paths?: Record<string, unknown> }): string[] {
  const demands = (security: unknown) =>
    Array.isArray(security) && security.length > 0 && !security.some((alt) => alt !== null && typeof alt === 'object' && Object.keys(alt).length === 0);
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith('/') || item === null || typeof item !== 'object') continue;
    for (const [method, op] of Object.entries(item as Record<string, unknown>)) {
      if (!['get', 'head'].includes(method) || op === null || typeof op !== 'object') continue;
      const own = (op as { security?: unknown }).security;
      const security = own ?? doc.security;
      if (demands(security)) out.push(`${method.toUpperCase()} ${path} (security ${JSON.stringify(security).slice(0, 120)})`);
    }
  }
  return out;
}

checkGroup('the machine-readable description: its access', () => {
  check(
    {
      id: 'feed-openapi-no-credential',
      title: 'the description makes no operation require a credential (no security requirement without an empty alternative)',
      requirements: ['feed-anonymous-access'],
    },
    async (t) => {
      const { res, doc } = await published().catch((e: unknown) => {
        throw new PreconditionFailed(`/openapi-v1.json could not be read: ${(e as Error).message.split('\n')[0]}`, ['feed-openapi-published']);
      });
      t.cite(res);
      // Path items may be references (OAS 3.1: to components/pathItems): read with them in place, where they resolve.
      const read = await resolved().catch(() => doc);
      const required = credentialRequired(read as Parameters<typeof credentialRequired>[0]);
      if (required.length)
        t.violation(`/openapi-v1.json requires a credential ("The service is anonymous and needs no API key"): ${required.slice(0, 5).join('; ')}`);
    },
  );
});

checkGroup('the machine-readable description: its methods', () => {
  check(
    {
      id: 'feed-openapi-get-only',
      title: 'the description lists no operation with a method other than GET (HEAD and OPTIONS, which read, are let be)',
      requirements: ['feed-get-only'],
    },
    async (t) => {
      const { res, doc } = await published();
      t.cite(res);
      // "All operations are GET, with no request body": a described PUT, POST, PATCH, DELETE or TRACE is an operation the document does not have.
      const other = Object.entries(doc.paths ?? {})
        .filter(([p]) => p.startsWith('/'))
        .flatMap(([p, item]) =>
          Object.keys(item ?? {}).flatMap((m) => (['put', 'post', 'patch', 'delete', 'trace'].includes(m) ? [`${m.toUpperCase()} ${p}`] : [])),
        );
      expect(other, 'operations other than GET in /openapi-v1.json').toEqual([]);
    },
  );
});

checkGroup("the description's caching headers", () => {
  check(
    {
      id: 'feed-openapi-etag-cache-control',
      title: 'the 200 of /openapi-v1.json carries ETag and Cache-Control, as every 200 of the service does',
      requirements: ['feed-200-etag-cache-control'],
    },
    async (t) => {
      // "Every response carries ETag and Cache-Control" (the overview) and "Every 200 carries" them (Endpoints): the
      // published description is a 200 of the service at its base URL, one a client revalidates like any other.
      const { res } = await published();
      t.cite(res);
      expect(res.header('etag'), 'ETag of GET /openapi-v1.json').toMatch(ENTITY_TAG, 'an entity-tag, [W/]"…"');
      expect(res.header('cache-control'), 'Cache-Control of GET /openapi-v1.json').toBeTruthy();
    },
  );
});
