/**
 * The gateway suite's view of the target: requests that keep the gateway's client rules, the configured keys, the
 * key forms of the document's Authentication table (read from the OpenAPI security schemes, named through the
 * profile), the model to use, and the per-vendor error envelopes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type WebSocketClass from 'ws';
import { http, once, secret, runContext, serviceUrl } from './context.js';
import {
  clientRules,
  componentSchema,
  field,
  formatAjvErrors,
  kebab,
  loadOpenApi,
  validator,
  type JsonSchema,
  type OpenApiDoc,
  type OperationObject,
} from './spec.js';
import { TargetUnavailableError, USER_AGENT, type HttpResponse, type SendOptions } from './http.js';
import { AssertionViolation, expect, jsonBody, PreconditionFailed, type CheckTools } from './harness.js';
import type { SecretVar } from './config.js';
import type { RetryMode } from './retry-policy.js';
import { brokenBodies } from './generate.js';

/** ws as CommonJS, what `require('ws')` gives (its ES module entry is a wrapper of it): in a fresh worker thread it loads
 * in about 60 ms less CPU that way on Node 20, as the vendor SDKs do in suites/gateway/official-clients.checks.ts. */
const WebSocket = createRequire(import.meta.url)('ws') as typeof WebSocketClass;

const rules = clientRules('gateway');

const WHAT: Record<SecretVar, string> = {
  GATEWAY_API_KEY: 'a valid sk- key',
  GATEWAY_EXPIRED_KEY: 'a key past its validity period',
  GATEWAY_DISABLED_KEY: 'a disabled key',
  GATEWAY_EXHAUSTED_KEY: 'a key beyond its quota ceiling',
  GATEWAY_IP_DENIED_KEY: "a key whose IP allow list excludes the runner's address",
  GATEWAY_ACCOUNT_DISABLED_KEY: 'a key valid in itself whose account is disabled',
  GATEWAY_RATE_LIMITED_KEY: 'a key over its per-user request limit',
  GATEWAY_MANAGEMENT_TOKEN: 'a management-panel personal access token',
};

/**
 * The key states the documents name besides the valid key, each with the statuses they allow for it: 401 for an
 * expired or disabled key (rule 7), any refusal for a key beyond its quota ceiling (rule 6 says only "rejected"),
 * 401/403 for the management token (rule 8: "rejected"), 403 for a caller outside the IP allow list (rule 5), 403 for
 * a key whose account is disabled (States; the 403 row). Each names the id of its check on the authentication check
 * (kept from before the states were checked on every path). A state marked `alone` is checked under its own
 * requirement only: a deployment that does not set its variable leaves that one requirement undecided, and the
 * requirements the other states verify stay verified (see stateRequirements).
 */
/** The requirements of the key states given: a precondition on their refusals depends on them. */
export const refusalRequirements = (states: { reqs: string[] }[]): string[] => [...new Set(states.flatMap((st) => st.reqs))];

/**
 * A refusal message that speaks of the IP (rule 5: "a message that the IP is not in the token's allowed list"): "IP",
 * "IPv4"/"IPv6", "ip address", "ip_whitelist"-like names, or the Chinese 地址 after IP.
 */
export const IP_MESSAGE = /\bIP(?:v[46])?\b|\bip[\s_-]?addr|\bip_|IP地址/i;

/** Rule 5's message in a refusal's body (its error.message, else the whole body), on every path and the handshake. */
export function expectIpMessage(body: string, what = 'the error message'): void {
  expect(String(errorMessage(body) ?? body), what).toMatch(IP_MESSAGE, 'a message that speaks of the IP');
}

export const KEY_STATES: { v: SecretVar; slug: string; authCheck: string; what: string; reqs: string[]; statuses: number[]; alone?: true }[] = [
  {
    v: 'GATEWAY_EXPIRED_KEY',
    slug: 'expired-key',
    authCheck: 'gw-expired-key-401',
    what: 'an expired key',
    reqs: ['gw-key-invalid-401', 'gw-status-401-key'],
    statuses: [401],
  },
  {
    v: 'GATEWAY_DISABLED_KEY',
    slug: 'disabled-key',
    authCheck: 'gw-disabled-key-401',
    what: 'a disabled key',
    reqs: ['gw-key-invalid-401', 'gw-status-401-key'],
    statuses: [401],
  },
  {
    v: 'GATEWAY_EXHAUSTED_KEY',
    slug: 'exhausted-key',
    authCheck: 'gw-exhausted-key-rejected',
    what: 'a key beyond its quota ceiling',
    reqs: ['gw-key-quota-validity'],
    statuses: [400, 401, 402, 403, 429],
  },
  {
    v: 'GATEWAY_MANAGEMENT_TOKEN',
    slug: 'management-token',
    authCheck: 'gw-management-token-refused',
    what: 'the management-panel access token',
    reqs: ['gw-management-token-refused'],
    statuses: [401, 403],
  },
  {
    v: 'GATEWAY_IP_DENIED_KEY',
    slug: 'ip-denied-key',
    authCheck: 'gw-ip-denied-403',
    what: 'a key whose IP allow list excludes the caller',
    reqs: ['gw-key-ip-allow-list'],
    statuses: [403],
  },
  {
    v: 'GATEWAY_ACCOUNT_DISABLED_KEY',
    slug: 'account-disabled-key',
    authCheck: 'gw-account-disabled-403',
    what: 'a key whose account is disabled',
    reqs: ['gw-account-disabled-403'],
    statuses: [403],
    alone: true,
  },
];

/**
 * The requirements a check of key state `st` cites: the state's own, and `shared` (what the other states' checks
 * also show: the forms' equivalence, the type and code tables) unless the state stands alone.
 */
export const stateRequirements = (st: (typeof KEY_STATES)[number], ...shared: string[]): string[] => (st.alone ? st.reqs : [...st.reqs, ...shared]);

/**
 * The ids of the checks the matrices generate (one per key state, key form and path): the suites register them and
 * the facets (src/facets.ts) name them, from this one place.
 */
export const GW_CHECK_IDS = {
  /** A key state on an operation (the authentication check keeps the ids it had before the states were on every path). */
  keyState(slug: string, operationId: string): string {
    if (operationId === 'listModels') return KEY_STATES.find((st) => st.slug === slug)!.authCheck;
    if (operationId === 'realtime') return `gw-realtime-${slug}-refused`;
    return `gw-${slug}-refused-on-${kebab(operationId)}`;
  },
  formAccepted: (form: KeyForm, operationId: string): string => `gw-key-${kebab(form)}-on-${kebab(operationId)}`,
  formRefused: (form: KeyForm, operationId: string, family: string): string =>
    form === 'queryKey' && family === 'vendor-a' ? `gw-query-key-refused-on-${kebab(operationId)}` : `gw-${kebab(form)}-refused-on-${kebab(operationId)}`,
  noCredential: (operationId: string): string => `gw-no-credential-refused-on-${kebab(operationId)}`,
  brokenPayload: (operationId: string): string => `gw-broken-payload-400-${kebab(operationId)}`,
  /** The per-path refusals of requests.checks.ts; chat completions keep the ids they had when only that path was checked. */
  unknownModelCode: (operationId: string): string =>
    operationId === 'chatCompletions' ? 'gw-unknown-model-code-chat' : `gw-unknown-model-code-${kebab(operationId)}`,
  unknownModel404: (operationId: string): string => (operationId === 'chatCompletions' ? 'gw-unknown-model-404' : `gw-unknown-model-404-${kebab(operationId)}`),
  malformedJson: (operationId: string): string => (operationId === 'chatCompletions' ? 'gw-malformed-json-400' : `gw-malformed-json-400-${kebab(operationId)}`),
  malformedJsonCode: (operationId: string): string => `gw-malformed-json-code-${kebab(operationId)}`,
  perUser429: (operationId: string): string => (operationId === 'chatCompletions' ? 'gw-per-user-429' : `gw-per-user-429-on-${kebab(operationId)}`),
  keyRefusalType: (operationId: string): string => `gw-key-refusal-gateway-error-on-${kebab(operationId)}`,
  /** The refusals that precede a stream (streams.checks.ts): each class of refusal with `"stream": true`. */
  streamKeyState: (slug: string, operationId: string): string => `gw-stream-${slug}-refused-on-${kebab(operationId)}`,
  streamKeyRefusalType: (operationId: string): string => `gw-stream-key-refusal-gateway-error-on-${kebab(operationId)}`,
  streamUnknownModel: (operationId: string): string => `gw-stream-unknown-model-404-${kebab(operationId)}`,
  streamNoCredential: (operationId: string): string => `gw-stream-no-credential-refused-on-${kebab(operationId)}`,
  streamKeyForms: (operationId: string): string => `gw-stream-key-forms-taken-on-${kebab(operationId)}`,
  streamFormRefused: (form: KeyForm, operationId: string): string => `gw-stream-${kebab(form)}-refused-on-${kebab(operationId)}`,
  streamMalformedJson: (operationId: string): string => `gw-stream-malformed-json-400-${kebab(operationId)}`,
  streamBrokenPayload: (operationId: string): string => `gw-stream-broken-payload-400-${kebab(operationId)}`,
  streamPerUser429: (operationId: string): string => `gw-stream-per-user-429-on-${kebab(operationId)}`,
  streamFalseJson: (operationId: string): string => `gw-stream-false-json-${kebab(operationId)}`,
};

/**
 * The operations whose protocol streams on request with `"stream": true` in the body (vendor A chat completions and
 * the Responses-style operation, vendor B messages); vendor C streams on another path, which the document does not show.
 */
export const STREAM_OPERATIONS = ['chatCompletions', 'messages', 'responses'];

/** Whether an answer is an event stream (its content type), whatever its status. */
export const isEventStream = (res: HttpResponse): boolean => /text\/event-stream/i.test(res.header('content-type') ?? '');

/** The statuses that refuse a key (or a request without one). */
export const KEY_REFUSED = [401, 403];

/**
 * A key sent in a form the path does not list is no credential there: `res` is refused (401 or 403). Not refused, the
 * request without any credential (`none`, asked only then) tells whether the path takes no key at all, which is
 * gw-credential-required's finding: then no form can be refused, and the check is not applicable.
 */
export async function expectFormRefused(
  t: CheckTools,
  res: HttpResponse,
  none: () => Promise<HttpResponse>,
  what: { open: (status: number) => string; refused: string },
): Promise<void> {
  if (!KEY_REFUSED.includes(res.status)) {
    const control = await none();
    t.cite(control);
    if (!KEY_REFUSED.includes(control.status)) t.notApplicable(what.open(control.status));
  }
  expect(res.status, what.refused).toBeOneOf(KEY_REFUSED);
}

/** The forms a path may refuse: every form but Bearer is listed for some paths only. */
export const LIMITED_FORMS = ['xApiKey', 'vendorCKey', 'queryKey'] as const;

/** The requirement of a form refused where the table does not list it. */
export const formRefusedRequirement = (form: KeyForm): string => (form === 'queryKey' ? 'gw-auth-query-key-not-vendor-a' : 'gw-auth-header-forms-listed-paths');

/**
 * The operations whose payload the Endpoints table spells out: each refuses a broken body, an unknown model and a
 * body that is not JSON as the others do. The Responses-style operation is among them (its payload is `model` and
 * `input`), but some models do not support it: the run generates nothing there, its control is its unknown-model answer.
 */
export const PAYLOAD_OPERATIONS = ['chatCompletions', 'messages', 'generateContent', 'responses'];

/** The error message wherever an envelope carries it (vendor A and B alike: error.message). */
export function errorMessage(body: string): unknown {
  try {
    return field(JSON.parse(body) as unknown, 'error.message');
  } catch {
    return undefined;
  }
}

/** The configured secret, or the check ends as skipped, naming the variable to set. */
export function requireKey(t: CheckTools, name: SecretVar): string {
  const v = secret(name);
  if (!v) t.notConfigured(`set ${name} to ${WHAT[name]}`);
  return v;
}

export function gatewaySend(path: string, o: Omit<SendOptions, 'rules' | 'service'> = {}): Promise<HttpResponse> {
  return http().send(serviceUrl('gateway', path), { ...o, rules, service: 'gateway' });
}

export function gatewayGet(path: string, o: Omit<SendOptions, 'rules' | 'service' | 'method'> = {}): Promise<HttpResponse> {
  return gatewaySend(path, { ...o, method: 'GET' });
}

export function gw() {
  return runContext().profile.gateway;
}

// ---------------------------------------------------------------- key forms

export type KeyForm = 'bearer' | 'xApiKey' | 'vendorCKey' | 'queryKey';
export const FORM_LABEL: Record<KeyForm, string> = {
  bearer: 'Authorization: Bearer',
  xApiKey: 'x-api-key',
  vendorCKey: 'the vendor C key header',
  queryKey: '?key=',
};
export const FORM_REQUIREMENT: Record<KeyForm, string> = {
  bearer: 'gw-auth-bearer',
  xApiKey: 'gw-auth-x-api-key',
  vendorCKey: 'gw-auth-vendorc-header',
  queryKey: 'gw-auth-query-key',
};

/** Headers and query that place `key` in `form`, with the deployment's header names. */
export function placeKey(form: KeyForm, key: string): Pick<SendOptions, 'headers' | 'query'> {
  switch (form) {
    case 'bearer':
      return { headers: { authorization: `Bearer ${key}` } };
    case 'xApiKey':
      return { headers: { 'x-api-key': key } };
    case 'vendorCKey':
      return { headers: { [gw().vendorCKeyHeader]: key } };
    case 'queryKey':
      return { query: { key } };
  }
}

export interface GatewayOperation {
  operationId: string;
  method: string;
  /** The path as requested (profile paths substituted, the model filled in). */
  path(model: string): string;
  /** The path for people: the template, {model} left as is. */
  display: string;
  forms: KeyForm[];
  family: string;
  billable: boolean;
  websocket: boolean;
  op: OperationObject;
}

/** The operations of the gateway description, with the key forms its security lists, paths as the run's profile names them. */
export async function gatewayOperations(): Promise<GatewayOperation[]> {
  return operationsOf(await loadOpenApi('gateway'), (p, op) => {
    const fromProfile = op['x-path-from-profile'] as 'responsesPath' | 'realtimePath' | undefined;
    return fromProfile === 'realtimePath' ? runContext().realtimePath : fromProfile ? gw()[fromProfile] : p;
  });
}

/** The operations of a gateway description, each path given by `template` (the description's own path, or the profile's). */
export function operationsOf(doc: OpenApiDoc, template: (path: string, op: OperationObject) => string): GatewayOperation[] {
  return Object.entries(doc.paths).flatMap(([p, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const display = template(p, op);
      return {
        operationId: op.operationId,
        method: method.toUpperCase(),
        path: (model: string) => display.replace('{model}', encodeURIComponent(model)),
        display,
        forms: (op.security ?? []).flatMap((s) => Object.keys(s)).filter((f): f is KeyForm => f in FORM_LABEL),
        family: String(op['x-family']),
        billable: op['x-billable'] === true,
        websocket: op['x-websocket'] === true,
        op,
      };
    }),
  );
}

/** The start of every model name the suite makes up (unknownModel), by which the run-wide checks know its requests. */
export const UNKNOWN_MODEL_PREFIX = 'conformance-no-such-model-';
/** A model id no deployment has. */
export function unknownModel(): string {
  return `${UNKNOWN_MODEL_PREFIX}${randomBytes(5).toString('hex')}`;
}

/**
 * The body of a small generation of an operation, naming `model`: what the document makes required and nothing more,
 * so chat completions go without max_tokens (optional on vendor A) and the others with a cap of 16.
 */
export function requiredOnlyBody(operationId: string, model: string): unknown {
  return minimalBody(operationId, model, operationId === 'chatCompletions' ? null : 16);
}

/**
 * A minimal, token-capped request body of an operation, naming `model`. `maxTokens: null` leaves the cap out where
 * the document makes it optional (vendor A chat completions): the prompt needs one word.
 */
export function minimalBody(operationId: string, model: string, maxTokens: number | null = 16): unknown {
  const prompt = 'Reply with the single word OK.';
  switch (operationId) {
    case 'chatCompletions':
      return { model, messages: [{ role: 'user', content: prompt }], ...(maxTokens === null ? {} : { max_tokens: maxTokens }) };
    case 'responses':
      return { model, input: prompt, max_output_tokens: maxTokens ?? 16 };
    case 'messages':
      return { model, max_tokens: maxTokens ?? 16, messages: [{ role: 'user', content: prompt }] };
    case 'generateContent':
      return { contents: [{ parts: [{ text: prompt }] }], generationConfig: { maxOutputTokens: maxTokens ?? 16 } };
    default:
      return undefined;
  }
}

/**
 * The broken bodies of an operation's payload the run sends (payloads.checks.ts) and its facets name: each required
 * field left out, and each typed field retyped with at most two values of another kind (the first two of
 * brokenBodies: a scalar or a structure where the other is due, then the next), so that the remote budget holds.
 */
export function payloadExamples(schema: JsonSchema, valid: unknown): ReturnType<typeof brokenBodies> {
  const all = brokenBodies(schema, valid);
  const perField = new Map<string, number>();
  const fixed = all.fixed.filter((b) => {
    const m = / as .* \(not an? \w+\)$/.exec(b.label);
    if (!m) return true;
    const name = b.label.slice(0, m.index);
    perField.set(name, (perField.get(name) ?? 0) + 1);
    return perField.get(name)! <= 2;
  });
  return { fixed, generated: all.generated };
}

/** Headers an operation needs besides the key (the vendor B version header). */
export function protocolHeaders(operationId: string): Record<string, string> {
  return operationId === 'messages' ? { [gw().versionHeader]: gw().versionValue } : {};
}

/** The model to generate with: GATEWAY_MODEL, else the first one the listing names. */
export function chosenModel(): Promise<string> {
  return once('gateway-model', async () => {
    const configured = runContext().gatewayModel;
    const key = secret('GATEWAY_API_KEY');
    if (configured && !key) return configured;
    if (!key) throw new PreconditionFailed('setup error (precondition): no GATEWAY_API_KEY to list models with');
    const res = await gatewayGet('/v1/models', { headers: { authorization: `Bearer ${key}` } });
    const data = res.status === 200 ? field(jsonBody(res), 'data') : undefined;
    if (configured) {
      // A configured model the key's own listing does not name is the configuration's problem, not the gateway's.
      const ids = Array.isArray(data) ? data.map((m) => field(m, 'id')) : undefined;
      if (ids && ids.length > 0 && !ids.includes(configured))
        throw new PreconditionFailed(
          `setup error (precondition): GATEWAY_MODEL=${configured} is not among the ${ids.length} model(s) GET /v1/models lists for GATEWAY_API_KEY: check the configured model`,
        );
      return configured;
    }
    const first = Array.isArray(data) ? field(data[0], 'id') : undefined;
    if (typeof first !== 'string')
      throw new PreconditionFailed(`setup error (precondition): /v1/models listed no model id (status ${res.status}); set GATEWAY_MODEL`);
    return first;
  });
}

// ---------------------------------------------------------------- errors

/** The deployment's names for the document's error types, and back. */
export function typeNames(): { deployed: Set<string>; gatewayError: string } {
  const t = gw().errorTypes;
  const doc = ['gateway_error', 'vendora_error', 'vendorb_error', 'vendorc_error', 'upstream_error', 'rerank_error', 'vendord_error'];
  return { deployed: new Set(doc.map((d) => t[d] ?? d)), gatewayError: t.gateway_error ?? 'gateway_error' };
}

export async function gatewayCodes(): Promise<Set<string>> {
  const s = (await componentSchema('gateway', 'GatewayErrorCode')) as { enum: string[] };
  return new Set(s.enum);
}

/** The code tables by name (request problems, quota and pricing, upstream and channel): which table a code is of. */
export async function gatewayCodeTables(): Promise<Record<string, string[]>> {
  const doc = (await loadOpenApi('gateway')) as unknown as { components: { 'x-gateway-code-tables': Record<string, string[]> } };
  return doc.components['x-gateway-code-tables'];
}

/**
 * Whether an error body is a gateway_error in the vendor A envelope (error.type the deployment's gateway_error,
 * error.code a string): how a vendor C refusal, whose body the document does not show, is read where it comes so.
 */
export function gatewayErrorInVendorA(body: string): boolean {
  const { type, code } = vendorAFields(body);
  return type === typeNames().gatewayError && typeof code === 'string';
}

export type ErrorShape = 'vendor-a' | 'vendor-b';
/** Which envelope the document gives errors on this path: vendor B on /v1/messages, vendor A elsewhere on /v1. */
export function shapeFor(path: string): ErrorShape | undefined {
  const p = path.split('?')[0]!;
  if (p === '/v1/messages') return 'vendor-b';
  if (p.startsWith('/v1beta/')) return undefined; // vendor C error bodies are not shown in the document
  return 'vendor-a';
}

/** The error body in its protocol's envelope; returns { code, type, message }. Throws a violation otherwise. */
export async function expectErrorShape(res: HttpResponse, shape: ErrorShape): Promise<{ code: unknown; type: unknown; message: unknown }> {
  const body = jsonBody(res);
  const v = validator(await componentSchema('gateway', shape === 'vendor-a' ? 'VendorAError' : 'VendorBError'));
  if (!v(body))
    throw new AssertionViolation(
      `a ${res.status} on ${new URL(res.url).pathname} is not a ${shape} error body: ${formatAjvErrors(v.errors)}; body ${res.body.slice(0, 200)}`,
    );
  const e = field(body, 'error') as Record<string, unknown>;
  return shape === 'vendor-a' ? { code: e.code, type: e.type, message: e.message } : { code: e.type, type: undefined, message: e.message };
}

/** error.type and error.code where the vendor A envelope carries them, without judging the rest of the envelope. */
export function vendorAFields(body: string): { type: unknown; code: unknown; message: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  return { type: field(parsed, 'error.type'), code: field(parsed, 'error.code'), message: field(parsed, 'error.message') };
}

/** Edit distance between two short strings (codes), for telling a table code spelt another way. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Whether an error code not in the code tables names one of them in another form: the table's code in another case,
 * without its `channel:` prefix, misspelt (two edits or fewer: a letter, a plural, a truncated suffix), or an unknown
 * code in the `channel:` namespace, which the tables own. Such a code is no upstream's own word (vendor A and B
 * upstream codes are far from every table code), so it is a departure in every envelope and on every path, whatever
 * the error's type. Returns what it is, or undefined for a table code or one unlike every table code.
 */
export function codeInAnotherForm(code: unknown, codes: Set<string>): string | undefined {
  if (typeof code !== 'string' || code === '' || codes.has(code)) return undefined;
  for (const c of codes) {
    if (c.toLowerCase() === code.toLowerCase()) return `${c} in another case`;
    if (c.startsWith('channel:') && c.slice('channel:'.length) === code) return `${c} with its channel: prefix dropped`;
  }
  if (code.startsWith('channel:')) return 'a channel: code the tables do not list';
  const near = [...codes].find((c) => editDistance(c, code) <= 2);
  return near === undefined ? undefined : `${near} misspelt`;
}

/**
 * Whether an error type is used outside the place the type table gives it: rerank_error is the rerank interface's
 * ("error of the rerank interface"), vendord_error the fourth vendor's image-job interfaces', which are neither of the
 * documented path families (`/v1`: vendor A, vendor B and the listing; `/v1beta`: vendor C).
 */
export function typeOutOfPlace(type: unknown, path: string): string | undefined {
  const t = gw().errorTypes;
  const p = path.split('?')[0]!;
  if (type === (t.rerank_error ?? 'rerank_error') && !/\/rerank$/.test(p)) return "the rerank interface's type on another path";
  if (type === (t.vendord_error ?? 'vendord_error') && /^\/v1(beta)?\//.test(p))
    return "the fourth vendor's image-job type on a path of the /v1 or /v1beta families";
  return undefined;
}

/** The error code whichever envelope carries it (vendor A error.code, vendor B error.type). */
export async function errorCode(res: HttpResponse, path: string): Promise<unknown> {
  const shape = shapeFor(path) ?? 'vendor-a';
  return (await expectErrorShape(res, shape)).code;
}

// ---------------------------------------------------------------- WebSocket

export interface WsOutcome {
  opened: boolean;
  protocol?: string;
  status?: number;
  firstMessage?: string;
  error?: string;
  /** A refused handshake's Retry-After and body (for the retry policy and the record). */
  retryAfter?: string;
  body?: string;
  /** A refused handshake's Content-Type. */
  contentType?: string;
}

/** The method a realtime WebSocket handshake is recorded under (the run's exchanges; the run-wide checks read it). */
export const WS_HANDSHAKE = 'GET (WebSocket)';

/**
 * Open the realtime WebSocket with the given subprotocols and headers; record each handshake as an exchange. A
 * handshake refused transiently (a 429, or a 502/503 with no upstream account) is retried by the suite's retry
 * policy, as every other request is; past the cap the target is unavailable.
 */
export async function openRealtime(o: {
  protocols: string[];
  headers?: Record<string, string>;
  query?: Record<string, string>;
  model: string;
  /** How a refused handshake is retried (default: as any transient refusal). */
  retry?: RetryMode;
}): Promise<WsOutcome> {
  // The realtime path under the base URL (and its prefix, if any), on the WebSocket twin of its scheme.
  const url = new URL(serviceUrl('gateway', runContext().realtimePath).replace(/^http/, 'ws'));
  url.searchParams.set('model', o.model);
  for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
  const { result, unavailable } = await http().retried(url, WS_HANDSHAKE, { rules, mode: o.retry ?? 'transient' }, async (retry) => {
    const outcome = await handshake(url, o, retry);
    if (outcome.opened) return { result: outcome };
    if (outcome.status === undefined) return { result: outcome, unanswered: outcome.error ?? 'no handshake' };
    return { result: outcome, answer: { status: outcome.status, retryAfter: outcome.retryAfter, body: outcome.body } };
  });
  if (unavailable) throw unavailable;
  return result;
}

async function handshake(
  url: URL,
  o: { protocols: string[]; headers?: Record<string, string> },
  retry: { attempt: number; waited: number },
): Promise<WsOutcome> {
  // The suite's own User-Agent, as on its other requests (a check may send its own).
  const headers = { 'user-agent': USER_AGENT, ...(o.headers ?? {}) };
  const requestHeaders = { ...headers, ...(o.protocols.length ? { 'sec-websocket-protocol': o.protocols.join(', ') } : {}) };
  const record = await http().external(url, WS_HANDSHAKE, requestHeaders, 'gateway', retry);
  const timeoutMs = runContext().timeoutMs;
  const outcome = await new Promise<WsOutcome>((resolve) => {
    const ws = new WebSocket(url, o.protocols, { headers, handshakeTimeout: timeoutMs });
    const timer = setTimeout(() => {
      ws.terminate();
      resolve({ opened: false, error: `no handshake within ${timeoutMs / 1000} s` });
    }, timeoutMs + 500);
    const done = (r: WsOutcome) => {
      clearTimeout(timer);
      ws.terminate();
      resolve(r);
    };
    ws.on('unexpected-response', (_req, res) => {
      const retryAfter = res.headers['retry-after'];
      const contentType = res.headers['content-type'];
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () =>
        done({
          opened: false,
          status: res.statusCode,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
          contentType,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 65_536) chunks.push(c);
      });
      res.once('end', finish);
      res.once('error', finish);
    });
    ws.on('open', () => {
      const protocol = ws.protocol;
      const t = setTimeout(() => done({ opened: true, protocol }), 1000);
      ws.once('message', (m) => {
        clearTimeout(t);
        done({ opened: true, protocol, firstMessage: String(m).slice(0, 500) });
      });
    });
    // The server answered 101 but selected no (or an unoffered) subprotocol: the handshake was accepted; the client refuses it.
    ws.on('error', (e) =>
      done(/sent no subprotocol|invalid subprotocol/i.test(e.message) ? { opened: true, error: e.message } : { opened: false, error: e.message }),
    );
  });
  record({
    status: outcome.opened ? 101 : outcome.status,
    responseHeaders: {
      ...(outcome.protocol !== undefined ? { 'sec-websocket-protocol': outcome.protocol } : {}),
      ...(outcome.retryAfter !== undefined ? { 'retry-after': outcome.retryAfter } : {}),
      ...(outcome.contentType !== undefined ? { 'content-type': outcome.contentType } : {}),
    },
    responseBody: outcome.firstMessage ?? outcome.body,
    error: outcome.error,
  });
  return outcome;
}

// ---------------------------------------------------------------- official SDKs

/** The platform's fetch, taken before any check swaps the global one: what the recording fetch sends with. */
const platformFetch = globalThis.fetch;

const GENERATION = /\/chat\/completions$|\/messages$|:generateContent$|\/responses$/;

/**
 * An official client's call under way (sdkCall, sdkError): the fetch below notes here when the suite itself ended one
 * of the call's requests (the target unavailable past the retries, the breaker no longer contacting it, the budget
 * spent), so that the check learns it whatever error the client made of it (a connection error, a typed 503).
 */
const sdkCalls = new AsyncLocalStorage<{ stopped?: Error }>();

/** The suite ended a request of the official client's call under way: the call's check ends with this error. */
function stopSdkCall(e: Error): void {
  const call = sdkCalls.getStore();
  if (call) call.stopped ??= e;
}

/**
 * A fetch for the vendor SDKs that goes through the suite's rules: only the configured origin, counted against
 * the budget, every exchange recorded (redacted), generations counted as billable when answered 2xx, and the
 * suite's retry loop (HttpClient.retried: its retry policy and its breaker, as for every request the suite sends).
 */
export function recordingFetch(): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const headers: Record<string, string> = {};
    new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).forEach((v, k) => (headers[k] = v));
    const requestBody = typeof init?.body === 'string' ? init.body : undefined;
    const client = http();
    // SDK retries are off; the document's retry rules apply here instead, by the suite's client's own retry loop:
    // 429/5xx, Retry-After or the origin's backoff, retries first, capped. Past the cap the SDK gets the last answer,
    // and the check learns that the target was unavailable (stopSdkCall).
    let ended: { result: Response | Error; unavailable?: Error };
    try {
      ended = await client.retried<Response | Error>(url, method, { rules }, async (retry) => {
        const record = await client.external(url, method, headers, 'gateway', retry);
        let res: Response;
        try {
          // Never follow a redirect: a key must not leave the configured origin (the client refuses it, so must this).
          res = await platformFetch(input, { ...init, redirect: 'manual' });
        } catch (e) {
          record({ error: (e as Error).message, attempt: retry.attempt });
          return { result: e as Error, unanswered: (e as Error).message };
        }
        const responseHeaders: Record<string, string> = {};
        res.headers.forEach((v, k) => (responseHeaders[k] = v));
        let text: string;
        try {
          text = await res.clone().text();
        } catch (e) {
          // A body that broke: recorded (which frees the request's slot and notes the answer), then the SDK's error.
          record({ status: res.status, responseHeaders, error: (e as Error).message, attempt: retry.attempt });
          return { result: e as Error, unanswered: (e as Error).message };
        }
        const billable = GENERATION.test(url.pathname);
        record({ status: res.status, responseHeaders, responseBody: text, bodyBytes: text.length, billable, requestBody, attempt: retry.attempt });
        return { result: res, answer: { status: res.status, retryAfter: res.headers.get('retry-after') ?? undefined, body: text } };
      });
    } catch (e) {
      // Not sent: the breaker no longer contacts the target, the budget is spent, a pause is longer than the suite waits.
      stopSdkCall(e as Error);
      throw e;
    }
    if (ended.unavailable) stopSdkCall(ended.unavailable);
    if (ended.result instanceof Error) throw ended.result;
    return ended.result;
  };
}

/**
 * The error an official client's call raised (undefined when it resolved), unless the suite itself ended one of its
 * requests (the target unavailable, the budget spent): then that error, whatever the client made of it.
 */
export async function sdkError(f: () => Promise<unknown>): Promise<unknown> {
  const call: { stopped?: Error } = {};
  try {
    await sdkCalls.run(call, f);
    return undefined;
  } catch (e) {
    if (call.stopped) throw call.stopped;
    return e;
  }
}

/** Run an official client's call: an exception from it means the client did not work against the target. */
export async function sdkCall<T>(label: string, f: () => Promise<T>): Promise<T> {
  let value: T | undefined;
  const error = await sdkError(async () => {
    value = await f();
  });
  if (error === undefined) return value as T;
  throw new AssertionViolation(`the official client failed on ${label}: ${(error as Error).message.slice(0, 400)}`);
}

/** Run `f` with the global fetch routed through recordingFetch (for SDKs that take no fetch option). */
export async function withRecordedGlobalFetch<T>(f: () => Promise<T>): Promise<T> {
  globalThis.fetch = recordingFetch();
  try {
    return await f();
  } finally {
    globalThis.fetch = platformFetch;
  }
}

// ---------------------------------------------------------------- the configured key, verified once

export interface KeyCheck {
  refused: boolean;
  /** Refused in every documented form, but taken in Authorization: Bearer without its sk- prefix. */
  unprefixedAccepted?: boolean;
  /** The answers of the authentication check, one per form tried. */
  responses: HttpResponse[];
  message?: string;
}

/**
 * GATEWAY_API_KEY on the authentication check (GET /v1/models), in each form the document lists there, once per
 * run. The key counts as refused only when every form is refused (401/403): a deployment that ignores one form is
 * then failed by that form's checks, not excused. A refused key leaves the checks that need a valid key undecided
 * with one message, instead of reporting each of them as a failure of the deployment.
 */
export function verifyApiKey(): Promise<KeyCheck> {
  return once('gateway-api-key-verified', async () => {
    const key = secret('GATEWAY_API_KEY');
    if (!key) return { refused: false, responses: [] };
    const responses: HttpResponse[] = [];
    for (const form of ['bearer', 'xApiKey', 'vendorCKey', 'queryKey'] as const) {
      const res = await gatewayGet('/v1/models', placeKey(form, key));
      responses.push(res);
      if (res.status !== 401 && res.status !== 403) return { refused: false, responses };
    }
    const statuses = [...new Set(responses.map((r) => r.status))].join('/');
    // A deployment that takes the key only without its prefix is the deployment's departure, not a wrong key.
    const bare = key.replace(/^sk-/, '');
    if (bare !== key) {
      const res = await gatewayGet('/v1/models', placeKey('bearer', bare));
      responses.push(res);
      if (res.status === 200)
        return {
          refused: true,
          unprefixedAccepted: true,
          responses,
          message: `GATEWAY_API_KEY was refused with ${statuses} on GET /v1/models in every form the document lists there, and accepted as "Bearer" without its sk- prefix: the deployment does not take the key with its prefix (gw-auth-bearer-keeps-prefix), so the checks that need a valid key could not run`,
        };
    }
    return {
      refused: true,
      responses,
      message:
        `GATEWAY_API_KEY was refused with ${statuses} on GET /v1/models (the authentication check) in every form the document lists there ` +
        `(${Object.values(FORM_LABEL).join(', ')}): check the key; if the key is valid, the deployment is refusing valid keys`,
    };
  });
}

/** GATEWAY_API_KEY, verified: not configured, or refused on the authentication check, ends the check as skipped. */
export async function requireValidKey(t: CheckTools): Promise<string> {
  const key = requireKey(t, 'GATEWAY_API_KEY');
  const v = await verifyApiKey();
  if (v.refused) {
    t.cite(...v.responses);
    t.notConfigured(v.message!, 'key-refused');
  }
  return key;
}

// ---------------------------------------------------------------- what "accepted" means on each path

export interface Judged {
  kind: 'accepted' | 'refused' | 'other';
  /** What was seen, for messages. */
  what: string;
}

/** The error code of a body read where either envelope carries it, without judging the envelope. */
export function looseErrorCodes(body: string): unknown[] {
  try {
    const e = field(JSON.parse(body) as unknown, 'error');
    if (typeof e !== 'object' || e === null) return [];
    return [(e as Record<string, unknown>).code, (e as Record<string, unknown>).type];
  } catch {
    return [];
  }
}

/** What a successful answer is on `op`, for messages. */
export function documentedSuccess(op: GatewayOperation): string {
  return op.operationId === 'listModels'
    ? '200 with a data array'
    : 'a 2xx generation, or for an unknown model the documented answer of an authenticated request (code model_not_found)';
}

/**
 * Whether an answer on `op` is the documented success of an authenticated request: GET /v1/models answers 200 with
 * a `data` array; a generation path answers 2xx, or, for a request naming an unknown model, the error the document
 * gives such a request ("an error whose code is model_not_found"), which a gateway only reaches past the key.
 * 401/403 is a refusal; anything else (a 404 of a missing path, a 500) is neither.
 */
export function judge(res: HttpResponse, op: GatewayOperation): Judged {
  if (res.status === 401 || res.status === 403) return { kind: 'refused', what: `refused with ${res.status}` };
  if (op.operationId === 'listModels') {
    let data: unknown;
    try {
      data = field(JSON.parse(res.body) as unknown, 'data');
    } catch {
      data = undefined;
    }
    if (res.status === 200 && Array.isArray(data)) return { kind: 'accepted', what: '200 with a data array' };
    return { kind: 'other', what: res.status === 200 ? '200 without a data array' : `status ${res.status}` };
  }
  if (res.status >= 200 && res.status < 300) return { kind: 'accepted', what: `${res.status} (a generation result)` };
  if (looseErrorCodes(res.body).includes('model_not_found')) return { kind: 'accepted', what: `${res.status} with code model_not_found` };
  const codes = looseErrorCodes(res.body).filter((c) => typeof c === 'string');
  return { kind: 'other', what: `status ${res.status}${codes.length ? ` (${codes.join(', ')})` : ''}` };
}

/**
 * The request of the key-placement checks: `op` naming an unknown model (nothing generates), the key placed as given;
 * `billable` where the key is the valid one and a gateway that does not refuse the model would serve it (the
 * unknown-model checks' request).
 */
export function unknownModelRequest(
  op: GatewayOperation,
  placement: Pick<SendOptions, 'headers' | 'query'> | undefined,
  billable = false,
): Promise<HttpResponse> {
  const model = unknownModel();
  return gatewaySend(op.path(model), {
    method: op.method,
    headers: { ...protocolHeaders(op.operationId), ...(placement?.headers ?? {}) },
    query: placement?.query,
    body: minimalBody(op.operationId, model),
    billable,
    // The answer is an error either way: a 5xx is that answer, not unavailability. No upstream account serves a model
    // that does not exist, so a 502/503 every try, while the origin answers another request, is the answer too.
    retry: 'persistent',
  });
}

/**
 * The key forms of the Authentication table listed for `op` that the valid key is shown taken in (its unknown-model
 * request in each, made once: key-placement's requests), the control's form `first` first. The forms are equivalent
 * ("only one is needed"), so a rule about keys holds in each of them: the checks send a key in every form this gives
 * (a refusal is not billable). A form the valid key is refused in is key-placement's finding, not used here.
 */
export function takenForms(op: GatewayOperation, valid: string, first: KeyForm): Promise<KeyForm[]> {
  return once(`taken-forms:${op.operationId}:${first}`, async () => {
    const out: KeyForm[] = [first];
    for (const form of op.forms.filter((f) => f !== first)) if (judge(await formRequest(op, form, valid), op).kind === 'accepted') out.push(form);
    return out;
  });
}

/** The unknown-model request of `op` with `key` in `form`, once per run (the key-placement check and the key-state controls read it). */
export function formRequest(op: GatewayOperation, form: KeyForm, key: string): Promise<HttpResponse> {
  return form === 'bearer' ? bearerControl(op, key) : once(`form-request:${form}:${op.operationId}`, () => unknownModelRequest(op, placeKey(form, key)));
}

/**
 * `op`'s request with `"stream": true` added to `body` (by default its minimal body naming `model`), the key placed as
 * given: what a streaming client sends. Refusals are the answers under test; a 5xx is one too, not an outage; naming a
 * model the suite made up, a 502/503 every try is confirmed as unknownModelRequest's is ('persistent').
 */
export function streamedRequest(
  op: GatewayOperation,
  model: string,
  placement: Pick<SendOptions, 'headers' | 'query'> | undefined,
  body: unknown = minimalBody(op.operationId, model),
  retry: RetryMode = model.startsWith(UNKNOWN_MODEL_PREFIX) ? 'persistent' : 'transient',
): Promise<HttpResponse> {
  return gatewaySend(op.path(model), {
    method: op.method,
    // A string is sent as it is (a truncated JSON text that says "stream": true), as JSON.
    headers: { ...protocolHeaders(op.operationId), ...(placement?.headers ?? {}), ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}) },
    query: placement?.query,
    body: typeof body === 'string' ? body : { ...(body as object), stream: true },
    billable: true,
    retry,
  });
}

/**
 * The answer to a request defect (a body the document has the gateway refuse with 400) that may have met 502 or 503 on
 * every try: an upstream outage, or the gateway's own answer to this body (a defect relayed upstream and its refusal
 * passed back as an upstream failure, which a client retries in vain). `send` makes the request with the retry mode
 * given (its own when none). When it ends unavailable on a 502 or 503, the same operation's small valid generation
 * naming the same model is sent at once (one billable call, the key in Authorization: Bearer): served (2xx), that
 * model's upstream is up, and the defect is sent once more, unretried, and its answer is the gateway's to this body
 * (the check judges it). The control refused or not sent (an outage, the billable budget spent), the check stays
 * unavailable.
 */
export async function defectAnswer(
  t: CheckTools,
  op: GatewayOperation,
  model: string,
  key: string,
  send: (retry?: RetryMode) => Promise<HttpResponse>,
): Promise<HttpResponse> {
  try {
    return await send();
  } catch (e) {
    if (!(e instanceof TargetUnavailableError) || (e.status !== 502 && e.status !== 503)) throw e;
    let control: HttpResponse;
    try {
      control = await gatewaySend(op.path(model), {
        method: op.method,
        headers: { authorization: `Bearer ${key}`, ...protocolHeaders(op.operationId) },
        body: requiredOnlyBody(op.operationId, model),
        billable: true,
      });
    } catch {
      throw e;
    }
    t.cite(control);
    if (control.status < 200 || control.status > 299) throw e;
    const again = await send(false);
    t.observe(
      'a 5xx on every try',
      `${op.method} ${op.display} answered ${e.status} on every try; the same model's valid request, sent right after, answered ${control.status}; the defect sent once more answered ${again.status}`,
    );
    return again;
  }
}

/** The control of the negative checks: the unknown-model request of `op` with the key in Authorization: Bearer. */
export function bearerControl(op: GatewayOperation, key: string): Promise<HttpResponse> {
  return once(`bearer-control:${op.operationId}`, () => unknownModelRequest(op, placeKey('bearer', key)));
}

/**
 * The key form each protocol's small generation uses: a form the table lists on that path, each protocol another
 * one, so that the run's few billable calls also show forms accepted with the documented success (2xx).
 */
export const GENERATION_FORM: Record<string, KeyForm> = { chatCompletions: 'bearer', messages: 'xApiKey', generateContent: 'queryKey' };
/** The requirement that each protocol's small generation is served (its own checks report a refusal of it). */
const GENERATION_REQUIREMENT: Record<string, string> = {
  chatCompletions: 'gw-chat-completions',
  messages: 'gw-messages',
  generateContent: 'gw-generate-content',
};

/**
 * The small generation of a protocol, once per run, with the key in the protocol's GENERATION_FORM. Chat
 * completions are sent without max_tokens (optional on vendor A), so the run's billable calls also show that.
 */
export function minimalGeneration(op: GatewayOperation, key: string, model: string): Promise<HttpResponse> {
  const placed = placeKey(GENERATION_FORM[op.operationId] ?? 'bearer', key);
  return once(`generation:${op.operationId}`, () =>
    gatewaySend(op.path(model), {
      method: op.method,
      headers: { ...placed.headers, ...protocolHeaders(op.operationId) },
      query: placed.query,
      body: requiredOnlyBody(op.operationId, model),
      billable: true,
    }),
  );
}

/**
 * Whether `op`'s path exists and takes the valid key: its unknown-model request with Bearer is answered as documented
 * or, when that answer is not (its code, or Bearer itself on that path, is another requirement's), the run's small
 * generation there answered 2xx. `form` is the key form shown to work, for requests that must be refused only for
 * their key. A broken unknown-model answer then fails its own check without leaving the key checks undecided.
 */
export async function pathServed(op: GatewayOperation, key: string): Promise<{ served: boolean; what: string; evidence: HttpResponse[]; form: KeyForm }> {
  const control = await bearerControl(op, key);
  const c = judge(control, op);
  if (c.kind === 'accepted') return { served: true, what: c.what, evidence: [control], form: 'bearer' };
  const form = GENERATION_FORM[op.operationId];
  // A generation path without a generation of the run's (the Responses-style one): told from a missing path instead.
  if (!form)
    return op.operationId === 'listModels' ? { served: false, what: c.what, evidence: [control], form: 'bearer' } : unlikeAbsentPath(op, key, control, c.what);
  const gen = await minimalGeneration(op, key, await chosenModel());
  if (gen.status >= 200 && gen.status < 300)
    return {
      served: true,
      what: `${c.what} to a request naming an unknown model with Authorization: Bearer, and ${gen.status} to the run's small generation with ${FORM_LABEL[form]}`,
      evidence: [control, gen],
      form,
    };
  return { served: false, what: c.what, evidence: [control], form: 'bearer' };
}

/**
 * The presence control of an operation with no generation of the run's (the Responses-style one), independent of the
 * code its unknown-model answer carries (that code is its own check's): the same request (key, body, method) sent to a
 * path beside it that no gateway serves shows how this deployment answers a missing path; an answer that is a JSON
 * error, not a refusal of the key, and differs from that one (status, code, or naming the model sent) comes from the operation.
 */
async function unlikeAbsentPath(
  op: GatewayOperation,
  key: string,
  control: HttpResponse,
  what: string,
): Promise<{ served: boolean; what: string; evidence: HttpResponse[]; form: KeyForm }> {
  const notServed = { served: false, what, evidence: [control], form: 'bearer' as const };
  if (control.status < 400 || control.status === 401 || control.status === 403 || !isJsonErrorBody(control.body)) return notServed;
  const model = unknownModel();
  const absentPath = `${op.path(model).split('?')[0]!.replace(/\/+$/, '')}-conformance-absent-${randomBytes(4).toString('hex')}`;
  const absent = await once(`absent-path:${op.operationId}`, () =>
    gatewaySend(absentPath, {
      method: op.method,
      headers: { ...protocolHeaders(op.operationId), ...placeKey('bearer', key).headers },
      body: minimalBody(op.operationId, model),
      retry: 'transient',
    }),
  );
  const codesOf = (r: HttpResponse) => JSON.stringify(looseErrorCodes(r.body));
  // Or, answered alike, the error names the unknown model the body gave: the path read the request, a missing one does not.
  const namesModel = (r: HttpResponse) => /conformance-no-such-model-[0-9a-f]{10}/.test(r.body);
  const unlike = absent.status !== control.status || codesOf(absent) !== codesOf(control) || (namesModel(control) && !namesModel(absent));
  if (!unlike) return { ...notServed, evidence: [control, absent] };
  return {
    served: true,
    what: `${what} to a request naming an unknown model with Authorization: Bearer, unlike a path beside it no gateway serves (${absent.status})`,
    evidence: [control, absent],
    form: 'bearer',
  };
}

/** Whether a body is a JSON object with an `error` object (either envelope), whatever its code. */
function isJsonErrorBody(body: string): boolean {
  try {
    const e = field(JSON.parse(body) as unknown, 'error');
    return typeof e === 'object' && e !== null;
  } catch {
    return false;
  }
}

/** The valid key, once the operation is shown served with it (requireGenerationServed): a refusal check's prologue. */
export async function requireServedKey(t: CheckTools, op: GatewayOperation): Promise<string> {
  const key = await requireValidKey(t);
  await requireGenerationServed(t, op, key);
  return key;
}

/**
 * The control of a refusal on a generation path: the protocol's small generation (the run's own, once) answered 2xx
 * there, so the path exists and takes the key, and a refusal is about what the request changed.
 */
export async function requireGenerationServed(t: CheckTools, op: GatewayOperation, key: string): Promise<void> {
  if (!GENERATION_FORM[op.operationId]) {
    // No generation on this operation (the Responses-style one): its unknown-model request with the valid key, answered as documented.
    const c = await pathServed(op, key);
    t.cite(...c.evidence);
    if (!c.served)
      throw new PreconditionFailed(
        `${op.method} ${op.display} answered ${c.what} to a request naming an unknown model with the valid key, not ${documentedSuccess(op)}: the operation's refusals could not be told from a missing path`,
        ['gw-unknown-model-404'],
      );
    return;
  }
  const control = await minimalGeneration(op, key, await chosenModel());
  t.cite(control);
  if (control.status < 200 || control.status >= 300)
    throw new PreconditionFailed(
      `the small generation on ${op.method} ${op.display} answered ${control.status}, not 2xx: a refusal here could not be told from a missing path or a refused key`,
      [GENERATION_REQUIREMENT[op.operationId]!],
    );
}

/**
 * What every credential the suite makes up starts with, with or without the `sk-` of a key (the run-wide checks know a
 * made-up credential by it).
 */
export const MADE_UP_PREFIX = 'conformance-invalid-';

/**
 * A credential of another form than a key (no `sk-` prefix) that no deployment issued, new at each call. Real
 * deployments also accept their keys without the prefix (the document does not forbid it), so one without it is still
 * only a bad credential: a gateway that lets it through (say, falling back to a key it saw before) serves a caller it
 * cannot name.
 */
export function madeUpCredential(): string {
  return `${MADE_UP_PREFIX}${randomBytes(12).toString('hex')}`;
}

/** A well-formed key no deployment issued, new at each call (never a secret: it names no account). */
export const madeUpKey = (): string => `sk-${madeUpCredential()}`;

/** GET /v1/models with a well-formed key no deployment issued, once per run (the bad-credential check and the error samples). */
export function invalidKeyListing(): Promise<HttpResponse> {
  return once('invalid-key-listing', () => gatewayGet('/v1/models', { headers: { authorization: `Bearer ${madeUpKey()}` } }));
}

/** The unknown-model request of `op` without any credential, once per run. */
export function noCredentialRequest(op: GatewayOperation): Promise<HttpResponse> {
  return once(`no-credential:${op.operationId}`, () => unknownModelRequest(op, undefined));
}

/** The realtime handshake with the key in the three subprotocols, once per run (the control of the realtime refusals). */
export function realtimeControl(key: string, model: string): Promise<WsOutcome> {
  return once('realtime-control', () => openRealtime({ protocols: realtimeProtocols(key), model }));
}

export function realtimeProtocols(key: string): string[] {
  return [gw().realtimeProtocol, `${gw().realtimeKeyProtocolPrefix}${key}`, gw().realtimeBetaProtocol];
}

// ---------------------------------------------------------------- what error bodies state

/**
 * The window (in minutes) and the maximum count a per-user 429 states, read from its message: the window is a
 * number followed by a minute unit (or "per minute", a window of 1), the count is another number. Units in the
 * languages real deployments use. A trailing "(request id: …)" is not part of the statement.
 */
export function statedLimit(body: string): { windowMinutes?: number; max?: number; numbers: string[] } {
  let text = body;
  try {
    const m = field(JSON.parse(body) as unknown, 'error.message');
    if (typeof m === 'string') text = m;
  } catch {
    // not JSON: read the raw body
  }
  text = text.replace(/\(request id:[^)]*\)/gi, '');
  const numbers = text.match(/\d+/g) ?? [];
  const unit = /(\d+)\s*-?\s*(?:minutes?|mins?\b|分钟|分鐘|minutos?|minuten?|minuti|minuty)/i.exec(text);
  const perMinute = /\bper\s+minute\b|每分钟|每分鐘|pro\s+minute|por\s+minuto/i.test(text);
  const windowMinutes = unit ? Number(unit[1]) : perMinute ? 1 : undefined;
  const rest = unit ? text.slice(0, unit.index) + text.slice(unit.index + unit[0].length) : text;
  const count = (rest.match(/\d+/g) ?? []).map(Number).find((n) => n > 0);
  return { windowMinutes, max: count, numbers };
}

/** Credential-shaped strings: sk- keys (vendor A and B formats included), bearer tokens, vendor C keys, and secrets the suite redacted. */
const CREDENTIAL_SHAPES: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{6,}/g,
  /\bBearer\s+(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*/gi,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\bpat-[A-Za-z0-9_-]{12,}/g,
  // A secret of the run that the suite itself replaced while recording: the body carried it.
  /\$(?:GATEWAY_[A-Z_]+|CONFORMANCE_CANARY_KEY)\b/g,
];

/** Every credential-shaped fragment of `text`, each shown redacted (its first characters and its length only). */
export function credentialFragments(text: string): string[] {
  const out: string[] = [];
  for (const re of CREDENTIAL_SHAPES) {
    for (const m of text.matchAll(re)) {
      const f = m[0];
      out.push(
        f.startsWith('$')
          ? `${f} (a configured secret, replaced by the suite)`
          : `${f.slice(0, Math.min(6, f.length - 4))}… (${f.length} characters, redacted)`,
      );
    }
  }
  return out;
}

/**
 * A check that sends the valid key to learn something else (an unknown model's code, a malformed body's status)
 * cannot decide when the key itself is refused there: whether the key is taken in that form is the key-placement
 * checks' business. Ends the check as a setup error naming that.
 */
export function keyTaken(res: HttpResponse, what: string): void {
  if (res.status === 401 || res.status === 403)
    throw new PreconditionFailed(
      `setup error (precondition): ${what} refused the valid key (${res.status}), so this check cannot be decided; the key-placement checks judge whether the key is taken there`,
    );
}
