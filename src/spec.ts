/**
 * Loads the contracts in specs/ as data: requirement catalogues (validated with ajv), OpenAPI descriptions
 * (dereferenced with json-schema-ref-parser, never touching the network) and the deployment profile.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Ajv2020, type ValidateFunction, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import $RefParser from '@apidevtools/json-schema-ref-parser';

export const SPECS_DIR = fileURLToPath(new URL('../specs/', import.meta.url));

export type Level = 'MUST' | 'SHOULD' | 'MAY';
export type Service = 'feed' | 'gateway';
export const SERVICES: readonly Service[] = ['feed', 'gateway'];

/** kebab-case of an operationId (listModels → list-models), as check ids spell it. */
export const kebab = (s: string): string => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export interface Requirement {
  id: string;
  level: Level;
  section: string;
  summary: string;
  text: string;
  subject: 'server' | 'client';
  unverifiable?: string;
  notApplicable?: string;
  note?: string;
  /** Facts of the requirement the tables and the OpenAPI description do not spell out (src/facets.ts). */
  facets?: FacetSpec[];
}
export interface FacetSpec {
  id: string;
  kind: 'bound' | 'place' | 'field' | 'step' | 'condition';
  text: string;
  checks?: string[];
  reason?: string;
}
export interface Catalogue {
  document: string;
  title: string;
  prefix: string;
  requirements: Requirement[];
}
export interface CatalogueEntry extends Requirement {
  service: Service;
  document: string;
  documentTitle: string;
}

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * One ajv instance that understands OpenAPI 3.1 schema objects and this project's extensions. Every schema it compiles
 * is one of this project's own (specs/*.schema.json, the OpenAPI descriptions' schemas, or a wrapper around parts of
 * them): a user's profile or known-deviations file is data validated against them, never compiled. So a run does not
 * validate each schema against the JSON Schema meta-schema before compiling it (compiling the meta-schema cost about
 * 0.07 s of CPU in every run's checks); the project's tests check every one of them with `checkSchemas`
 * (src/spec.test.ts, src/openapi-documents.test.ts). Strict mode still refuses an unknown keyword or format at
 * compile time.
 */
export function createAjv(o: { checkSchemas?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, strictRequired: false, allowUnionTypes: true, validateSchema: o.checkSchemas ?? false });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addVocabulary(['example', 'xml', 'externalDocs', 'discriminator', 'x-trim', 'x-profile-name', 'x-requirement']);
  return ajv;
}

let processAjv: Ajv2020 | undefined;
/**
 * The process's one ajv instance, for this project's schema files and the OpenAPI descriptions' schemas alike: each
 * schema is compiled once per process, whoever asks for it.
 */
function sharedAjv(): Ajv2020 {
  return (processAjv ??= createAjv());
}

const schemaFileValidators = new Map<string, ValidateFunction>();
/** The validator of one of this project's schema files in specs/ (`profile.schema.json`), compiled once per process. */
export function schemaFileValidator(name: string): ValidateFunction {
  let v = schemaFileValidators.get(name);
  if (!v) {
    v = sharedAjv().compile(readJson(path.join(SPECS_DIR, name)));
    schemaFileValidators.set(name, v);
  }
  return v;
}

export function readJson<T = unknown>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

export function formatAjvErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`.trim()).join('; ');
}

let catalogueCache: Map<string, CatalogueEntry> | undefined;

/** Every requirement of both documents by id. Throws if a catalogue breaks its schema or ids collide. */
export function loadCatalogue(): Map<string, CatalogueEntry> {
  if (catalogueCache) return catalogueCache;
  const validate = schemaFileValidator('requirements.schema.json');
  const all = new Map<string, CatalogueEntry>();
  for (const service of SERVICES) {
    const file = path.join(SPECS_DIR, service, 'requirements.json');
    const cat = readJson<Catalogue>(file);
    if (!validate(cat)) throw new Error(`${file}: ${formatAjvErrors(validate.errors)}`);
    for (const r of cat.requirements) {
      if (!r.id.startsWith(`${cat.prefix}-`)) throw new Error(`${file}: id ${r.id} lacks the prefix ${cat.prefix}-`);
      if (all.has(r.id)) throw new Error(`${file}: duplicate requirement id ${r.id}`);
      all.set(r.id, { ...r, service, document: cat.document, documentTitle: cat.title });
    }
  }
  catalogueCache = all;
  return all;
}

export function requirement(id: string): CatalogueEntry {
  const r = loadCatalogue().get(id);
  if (!r) throw new Error(`unknown requirement id "${id}": add it to specs/<service>/requirements.json or fix the typo`);
  return r;
}

const LEVEL_RANK: Record<Level, number> = { MUST: 3, SHOULD: 2, MAY: 1 };
/** The level of a check is the strongest level among the requirements it verifies. */
export function strongestLevel(levels: Level[]): Level {
  return levels.reduce<Level>((a, b) => (LEVEL_RANK[b] > LEVEL_RANK[a] ? b : a), 'MAY');
}

// ---------------------------------------------------------------- OpenAPI

export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: Record<string, Record<string, unknown>>;
}
export interface ParameterObject {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: JsonSchema;
  /** The catalogue requirement this parameter's rule belongs to. */
  'x-requirement'?: string;
}
export interface OperationObject {
  operationId: string;
  parameters?: ParameterObject[];
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
  [ext: `x-${string}`]: unknown;
}
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  'x-trim'?: boolean;
  [k: string]: unknown;
}

const openApiCache = new Map<Service, Promise<OpenApiDoc>>();

/** The service's OpenAPI description with every $ref resolved in place (no network, no files beyond it). */
export function loadOpenApi(service: Service): Promise<OpenApiDoc> {
  let p = openApiCache.get(service);
  if (!p) {
    const file = path.join(SPECS_DIR, service, 'openapi.json');
    const doc = readJson<Record<string, unknown>>(file);
    p = $RefParser
      .dereference(file, doc, { resolve: { http: false, external: false }, dereference: { circular: false } })
      .then((d) => d as unknown as OpenApiDoc);
    openApiCache.set(service, p);
  }
  return p;
}

export function operation(doc: OpenApiDoc, operationId: string): { path: string; method: string; op: OperationObject } {
  for (const [p, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.operationId === operationId) return { path: p, method: method.toUpperCase(), op };
    }
  }
  throw new Error(`no operation ${operationId} in the OpenAPI description`);
}

export function parameter(doc: OpenApiDoc, operationId: string, name: string): ParameterObject {
  const found = operation(doc, operationId).op.parameters?.find((p) => p.name === name);
  if (!found) throw new Error(`operation ${operationId} has no parameter ${name}`);
  return found;
}

const schemaValidators = new Map<unknown, ValidateFunction>();
/** Compile (once) a dereferenced schema object taken from an OpenAPI description. */
export function validator(schema: object): ValidateFunction {
  let v = schemaValidators.get(schema);
  if (!v) {
    v = sharedAjv().compile(schema);
    schemaValidators.set(schema, v);
  }
  return v;
}

export async function componentSchema(service: Service, name: string): Promise<object> {
  const doc = await loadOpenApi(service);
  const s = doc.components.schemas?.[name];
  if (!s) throw new Error(`no schema ${name} in the ${service} OpenAPI description`);
  return s as object;
}

// ---------------------------------------------------------------- deployment profile

export interface Profile {
  name?: string;
  feed: Record<'items' | 'hotTopics' | 'story' | 'dailies' | 'daily' | 'snapshot' | 'changes' | 'problem', Record<string, string>>;
  gateway: {
    versionHeader: string;
    versionValue: string;
    vendorCKeyHeader: string;
    realtimeProtocol: string;
    realtimeKeyProtocolPrefix: string;
    realtimeBetaProtocol: string;
    responsesPath: string;
    realtimePath: string;
    errorTypes: Record<string, string>;
  };
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepMerge<T>(base: T, over: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(over)) return (over === undefined ? base : over) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(out[k], v);
  return out as T;
}

/** The default profile, with an optional override (partial, merged over it) validated against the profile schema. */
export function loadProfile(override?: unknown, source = 'profile'): Profile {
  const merged = deepMerge(readJson<Profile>(path.join(SPECS_DIR, 'profiles', 'default.json')), override ?? {});
  const validate = schemaFileValidator('profile.schema.json');
  if (!validate(merged)) throw new Error(`${source}: ${formatAjvErrors(validate.errors)}`);
  return merged;
}

/** Read a dotted field path (page.nextCursor) out of a JSON value. */
export function field(value: unknown, dotted: string): unknown {
  let cur: unknown = value;
  for (const key of dotted.split('.')) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

export interface ClientRules {
  retryOn: (number | '5xx')[];
  /**
   * Refusals that say the target is unavailable for now (rate limited, no upstream), not what it answers to this
   * request: retried whatever the request expects, and past the retry cap the target is unavailable.
   */
  transient: {
    statuses: number[];
    answerCodes?: { on: number[]; codes: string[] };
    /**
     * Transient statuses that, answered to one request on every try while the origin answers other requests, are
     * the target's answer to that request (the feed's 503: every operation may answer it).
     */
    answerWhenPersistent?: number[];
  };
  retryAfterRequired?: boolean;
  backoff?: { baseMs: number; maxMs: number; jitter: 'equal' };
  requirements: string[];
}
export function clientRules(service: Service): ClientRules {
  return readJson<Record<Service, ClientRules>>(path.join(SPECS_DIR, 'client-rules.json'))[service];
}

/** One fact of a requirement, derived from the contracts (src/facets.ts) or written in the catalogue. */
export interface Facet extends FacetSpec {
  /** `<requirement>/<facet id>`: unique over both catalogues. */
  key: string;
  requirement: string;
  /** Where the facet comes from: the data it was derived from, or the catalogue. */
  source: string;
}
