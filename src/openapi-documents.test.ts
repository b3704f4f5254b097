/**
 * The OpenAPI documents in specs/ are given to teams' own tools, so they must be valid OpenAPI 3.1 on their own:
 * checked against the official OAS 3.1 schema (bundled with @seriousme/openapi-schema-validator, no network),
 * with every $ref a local `#/components/...` pointer any tool can follow, and every JSON response body a schema a
 * documentation tool can show. `npm run lint` lints the same documents with Redocly CLI (redocly.yaml).
 */
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { SERVICES, SPECS_DIR, componentSchema, createAjv, formatAjvErrors, readJson, validator, type Service } from './spec.js';

type Json = Record<string, unknown>;

const document = (service: Service): Json => readJson<Json>(path.join(SPECS_DIR, service, 'openapi.json'));

async function validateOas(doc: Json): Promise<{ valid: boolean; version: string; errors: string }> {
  const v = new Validator();
  const res = await v.validate(structuredClone(doc));
  return { valid: res.valid, version: v.version, errors: JSON.stringify(res.errors ?? []) };
}

/** Every `$ref` value in the document, with the JSON path it sits at. */
function refs(node: unknown, at = '#'): { at: string; ref: string }[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => refs(v, `${at}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [{ at, ref: v }] : refs(v, `${at}/${k}`)));
}

/** Follow a local `#/components/...` pointer (only those: a tool given the file alone can follow nothing else). */
function follow(doc: Json, node: unknown): unknown {
  let cur = node;
  for (let hops = 0; cur !== null && typeof cur === 'object' && typeof (cur as Json).$ref === 'string'; hops++) {
    const ref = (cur as Json).$ref as string;
    if (!ref.startsWith('#/components/') || hops > 20) throw new Error(`cannot follow $ref ${ref}`);
    cur = ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((o, key) => (o as Json | undefined)?.[key], doc);
    if (cur === undefined) throw new Error(`$ref ${ref} points at nothing`);
  }
  return cur;
}

const JSON_MEDIA = /^application\/(?:[\w.-]+\+)?json$/;
/** What a documentation tool shows of a body: its fields, its items or values, or at least why its fields are not shown. */
const SHOWN = ['properties', 'items', 'enum', 'const', 'oneOf', 'anyOf', 'allOf', 'description'];

/** Each JSON response body whose schema, after following `#/components` refs, gives a tool nothing to show. */
function emptyBodies(doc: Json): string[] {
  const out: string[] = [];
  for (const [p, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      for (const [status, r] of Object.entries(((op as Json).responses ?? {}) as Json)) {
        const response = follow(doc, r) as Json;
        for (const [media, mt] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
          if (!JSON_MEDIA.test(media)) continue;
          const schema = follow(doc, mt.schema) as Json | undefined;
          const where = `${method.toUpperCase()} ${p} ${status} ${media}`;
          if (!schema || typeof schema !== 'object' || !SHOWN.some((k) => k in schema)) out.push(`${where}: ${JSON.stringify(schema ?? null)}`);
        }
      }
    }
  }
  return out;
}

describe('the OpenAPI documents in specs/ are valid OpenAPI 3.1 for any tool', () => {
  for (const service of SERVICES) {
    test(`${service}: validates against the official OpenAPI 3.1 schema, offline`, async () => {
      const res = await validateOas(document(service));
      expect(res.errors).toBe('[]');
      expect(res).toMatchObject({ valid: true, version: '3.1' });
    });

    test(`${service}: has no root $id (not an OpenAPI Object field; refs resolve against the file itself)`, () => {
      expect(document(service)).not.toHaveProperty('$id');
    });

    test(`${service}: every $ref is a local #/components pointer that resolves`, () => {
      const doc = document(service);
      const all = refs(doc);
      expect(all.length).toBeGreaterThan(0);
      for (const { at, ref } of all) expect(() => follow(doc, { $ref: ref }), `${at}: ${ref}`).not.toThrow();
    });

    test(`${service}: every JSON response body has a schema a documentation tool can show`, () => {
      expect(emptyBodies(document(service))).toEqual([]);
    });

    test(`${service}: every component schema compiles as JSON Schema 2020-12 (the suite's own ajv, strict) and is valid against its meta-schema`, async () => {
      const names = Object.keys(((document(service).components as Json).schemas ?? {}) as Json);
      expect(names.length).toBeGreaterThan(0);
      // A run compiles them without checking them against the meta-schema (createAjv): it is checked here.
      const checking = createAjv({ checkSchemas: true });
      for (const name of names) {
        const schema = await componentSchema(service, name);
        expect(checking.validateSchema(schema), `${name}: ${formatAjvErrors(checking.errors)}`).toBe(true);
        expect(validator(schema), name).toBeTypeOf('function');
      }
    });
  }

  test('the feed states at the root that every operation is anonymous (security: [])', () => {
    const doc = document('feed');
    expect(doc.security).toEqual([]);
    const ops = Object.values(doc.paths as Record<string, Json>).flatMap((item) => Object.values(item) as Json[]);
    expect(ops.filter((op) => 'security' in op)).toEqual([]);
  });

  test('the gateway states on every operation the key forms valid on its path', () => {
    const ops = Object.values(document('gateway').paths as Record<string, Json>).flatMap((item) => Object.values(item) as Json[]);
    for (const op of ops) expect((op.security as unknown[] | undefined)?.length ?? 0, String(op.operationId)).toBeGreaterThan(0);
  });

  // The checks above can fail: each one against a document carrying the defect it looks for.
  test('a root $id makes a document invalid OpenAPI 3.1', async () => {
    const res = await validateOas({ $id: 'https://conformance.invalid/specs/feed/openapi.json', ...document('feed') });
    expect(res.valid).toBe(false);
    expect(res.errors).toContain('$id');
  });

  test('an empty or bare-object JSON body schema, or a $ref no tool can follow, is found', () => {
    const doc = document('gateway');
    const ops = doc.paths as Record<string, Record<string, { responses: Json }>>;
    ops['/v1/models']!.get!.responses['200'] = { description: 'd', content: { 'application/json': { schema: {} } } };
    ops['/v1/messages']!.post!.responses['200'] = { description: 'd', content: { 'application/json': { schema: { type: 'object' } } } };
    expect(emptyBodies(doc)).toEqual(['GET /v1/models 200 application/json: {}', 'POST /v1/messages 200 application/json: {"type":"object"}']);
    ops['/v1/models']!.get!.responses['200'] = {
      description: 'd',
      content: { 'application/json': { schema: { $ref: 'https://conformance.invalid/specs/gateway/openapi.json#/components/schemas/ModelList' } } },
    };
    expect(() => emptyBodies(doc)).toThrow(/cannot follow \$ref https:/);
  });
});
