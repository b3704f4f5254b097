/**
 * model-gateway-service.md — Errors; Limits: checks over every exchange the run made with the gateway, run after
 * all other gateway checks (files run in path order).
 */
import { describe } from 'vitest';
import { check, type CheckTools } from '../../src/harness.js';
import { operationPath, runExchanges } from '../../src/context.js';
import {
  codeInAnotherForm,
  credentialFragments,
  shapeFor,
  expectErrorShape,
  gatewayCodes,
  gatewayCodeTables,
  looseErrorCodes,
  statedLimit,
  gw,
  typeNames,
  typeOutOfPlace,
  vendorAFields,
  MADE_UP_PREFIX,
  UNKNOWN_MODEL_PREFIX,
  WS_HANDSHAKE,
} from '../../src/gateway.js';
import { RECORDED_BODY_CHARS, type Exchange, type HttpResponse } from '../../src/http.js';

/** The documented path of an exchange: the base URL's path prefix, if the gateway is served under one, taken off. */
const pathOf = (x: Exchange) => operationPath('gateway', x.url)!;
/**
 * The run's exchanges with the gateway under its base URL, the realtime WebSocket handshakes included: a refused
 * handshake is an HTTP answer of a vendor A interface, its error in the vendor A envelope and its 429 one of the two kinds.
 */
/** The documented HTTP operations' paths, where a key is read (an unknown path's 404 is about the path; the realtime handshake is told by its method, WS_HANDSHAKE). */
const DOCUMENTED_PATH = /^\/v1\/(models|chat\/completions|messages|responses)$|^\/v1beta\/models\/[^/]+:/;
const gatewayExchanges = () => runExchanges('gateway').filter((x) => operationPath('gateway', x.url) !== undefined);

/** A recorded exchange as a response (bodies are recorded up to 16 KiB, enough for an error). */
const asResponse = (x: Exchange): HttpResponse => ({
  url: x.url,
  status: x.status!,
  headers: x.responseHeaders ?? {},
  body: x.responseBody ?? '',
  bodyBytes: x.bodyBytes ?? 0,
  attempts: [x],
  json: () => JSON.parse(x.responseBody ?? '') as never,
  header: (n) => x.responseHeaders?.[n.toLowerCase()],
});

/**
 * The suite's made-up keys: sk-conformance-invalid-… and the credential without the prefix, conformance-invalid-…
 * (recorded as sent), and the canary (recorded under its name).
 */
const madeUp = (s: string | undefined) => s !== undefined && (s.includes(MADE_UP_PREFIX) || s.includes('$CONFORMANCE_CANARY_KEY'));
/** The credentials a request carried, as recorded (configured keys under their variable's name), in any header or `key=`. */
const credentialsOf = (x: Exchange): string[] =>
  [...Object.values(x.requestHeaders ?? {}), new URL(x.url).searchParams.get('key')].filter((c): c is string => c !== null);
/** Configured keys and tokens that the gateway's own key rules refuse (their states), recorded under their names. */
const REFUSED_KEY = /\$GATEWAY_(EXPIRED|DISABLED|IP_DENIED|ACCOUNT_DISABLED)_KEY\b|\$GATEWAY_MANAGEMENT_TOKEN\b|conformance-unknown-credential/;

/**
 * An error the gateway produced itself, whatever the deployment: the 404 of a path the suite made up, the 401 or 403
 * refusing a key the suite made up or one of the configured key states (the gateway's own keys, accounts and allow
 * lists: no upstream judges them) and the 400 refusing a /v1 body that is not JSON. The type table: gateway_error is the
 * "error produced by the gateway itself".
 */
function ownError(x: Exchange): string | undefined {
  const p = pathOf(x).split('?')[0]!;
  if (x.status === 404 && p.includes('conformance-no-such-path')) return 'the 404 of a path that does not exist';
  const creds = credentialsOf(x);
  // The realtime handshake too: its refusal of a key is an HTTP answer of a vendor A interface, by the same key rules.
  const keyRead = DOCUMENTED_PATH.test(p) || x.method === WS_HANDSHAKE;
  if ((x.status === 401 || x.status === 403) && keyRead && creds.some((c) => madeUp(c) || REFUSED_KEY.test(c)))
    return `the ${x.status} refusing a key by the gateway's own key rules${x.method === WS_HANDSHAKE ? ' (a realtime handshake)' : ''}`;
  // A request with no key in a form its path lists (none at all, or only a header or key= that path does not read)
  // carries no key there: its refusal is the gateway's own (no upstream account is sent a request without one).
  if ((x.status === 401 || x.status === 403) && DOCUMENTED_PATH.test(p) && !keyInListedForm(x, p) && !formTaken(x, p))
    return `the ${x.status} refusing a request with no key in a form ${p} reads`;
  // The gateway routes a /v1 generation by the model its body names: a body it cannot parse names none, so no upstream
  // was sent it. (A made-up model is not judged here: a deployment that routes any model upstream, a wildcard channel,
  // passes the upstream's model_not_found through, typed as its vendor's.)
  // Nor does a JSON body that names no model: there is nothing to route it by.
  if (x.status === 400 && BODY_ROUTED.test(p)) {
    const sent = sentJson(x.requestBody);
    if (sent === NOT_JSON) return 'the 400 refusing a body that is not JSON (the gateway routes by the model in it)';
    if (sent && typeof sent.value === 'object' && sent.value !== null && !Array.isArray(sent.value) && !('model' in sent.value))
      return 'the 400 refusing a body that names no model (the gateway routes by the model in it)';
  }
  return undefined;
}

/**
 * The places a request carried a credential in, each with whether a key was there (not blank): Authorization (Bearer,
 * or another scheme), x-api-key, the vendor C header, key=.
 */
function credentialPlaces(x: Exchange): { form: string; keyed: boolean }[] {
  const places: { form: string; keyed: boolean }[] = [];
  for (const [k, v] of Object.entries(x.requestHeaders ?? {})) {
    const name = k.toLowerCase();
    const value = String(v);
    if (name === 'authorization') places.push(/^bearer\s/i.test(value) ? { form: 'bearer', keyed: /^bearer\s+\S/i.test(value) } : { form: name, keyed: false });
    else if (name === 'x-api-key' || name === gw().vendorCKeyHeader.toLowerCase()) places.push({ form: name, keyed: value.trim() !== '' });
  }
  const query = new URL(x.url).searchParams;
  if (query.has('key')) places.push({ form: 'key=', keyed: Boolean(query.get('key')) });
  return places;
}

/**
 * Whether a request carried a key in a form the Authentication table lists for its path: Bearer on all paths,
 * x-api-key on /v1/messages and /v1/models, the vendor C header and key= on vendor C paths and /v1/models.
 */
function keyInListedForm(x: Exchange, p: string): boolean {
  const listing = p === '/v1/models';
  const vendorC = listing || p.startsWith('/v1beta/models');
  const listed = (form: string) =>
    form === 'bearer' ||
    (form === 'x-api-key' && (listing || p === '/v1/messages')) ||
    ((form === gw().vendorCKeyHeader.toLowerCase() || form === 'key=') && vendorC);
  return credentialPlaces(x).some((c) => c.keyed && listed(c.form));
}

/** The places a request carried a credential in, in one order: two requests that carry theirs alike compare equal. */
const credentialForms = (x: Exchange): string =>
  credentialPlaces(x)
    .map((c) => c.form)
    .sort()
    .join(' ');

/**
 * Whether the deployment served (2xx) a request on path `p` carrying its credential in the same places as `x`: a
 * deployment may read more forms than the table lists (new-api takes Authorization without Bearer), and a refusal
 * of a request in such a form may come from an upstream it reached.
 */
function formTaken(x: Exchange, p: string): boolean {
  const forms = credentialForms(x);
  return forms !== '' && servedForms().has(`${p} ${forms}`);
}

/** Each (path, credential forms) the deployment served (2xx) in the run so far, read again only when exchanges came since. */
let served: { count: number; last: Exchange | undefined; keys: Set<string> } | undefined;
function servedForms(): Set<string> {
  const xs = gatewayExchanges();
  if (served?.count !== xs.length || served.last !== xs.at(-1))
    served = {
      count: xs.length,
      last: xs.at(-1),
      keys: new Set(xs.filter((y) => y.status! >= 200 && y.status! < 300).map((y) => `${pathOf(y).split('?')[0]} ${credentialForms(y)}`)),
    };
  return served.keys;
}

/** The /v1 generation paths, which name their model in the body (vendor C names it in the path). */
const BODY_ROUTED = /^\/v1\/(chat\/completions|messages|responses)$/;
/** What a body that does not parse as JSON reads as (a request's in sentJson, an answer's in jsonOf). */
const NOT_JSON: unique symbol = Symbol('not JSON');
/**
 * A request body the suite sent, parsed once: its value, NOT_JSON (an empty body is none, and not JSON either), or
 * undefined when there is none (a GET's) or it was cut at the recorder's bound (not judged).
 */
const sentJson = (body: string | undefined): { value: unknown } | typeof NOT_JSON | undefined => {
  if (body === undefined || body.length >= RECORDED_BODY_CHARS) return undefined;
  try {
    return { value: JSON.parse(body) as unknown };
  } catch {
    return NOT_JSON;
  }
};

/** Every error of the run on /v1 in its protocol's envelope (vendor C's error body is not shown: not judged). */
async function everyErrorInItsEnvelope(t: CheckTools): Promise<void> {
  const errors = gatewayExchanges().filter((x) => x.status! >= 400 && !x.truncated);
  const checked = errors.filter((x) => shapeFor(pathOf(x)) !== undefined);
  if (checked.length === 0) return t.notApplicable('the run saw no error on /v1');
  for (const x of checked) await expectErrorShape(asResponse(x), shapeFor(pathOf(x))!);
  t.observe('errors checked', String(checked.length));
}

/** An error's code: vendor B's error.type holds it, vendor A's (and a vendor C error in that envelope) error.code. */
const codeOf = (x: Exchange): unknown =>
  shapeFor(pathOf(x)) === 'vendor-b' ? looseErrorCodes(x.responseBody ?? '')[1] : vendorAFields(x.responseBody ?? '').code;

/** Every error of the run: its type from the table and in its place, a gateway_error's code from the tables, no code spelt another way. */
async function everyErrorTypeAndCode(t: CheckTools): Promise<void> {
  const errors = gatewayExchanges().filter((x) => x.status! >= 400 && !x.truncated);
  // Vendor A's envelope, and on vendor C paths (whose body the document does not show) an error that comes in it
  // (error.type a string): its type and code are the tables' as anywhere else.
  const typed = errors.filter((x) => {
    const shape = shapeFor(pathOf(x));
    return shape === 'vendor-a' || (shape === undefined && typeof vendorAFields(x.responseBody ?? '').type === 'string');
  });
  if (errors.length === 0) return t.notApplicable('the run saw no error');
  const { deployed, gatewayError } = typeNames();
  const codes = await gatewayCodes();
  const where = (x: Exchange) => `${x.method} ${x.url} (${x.status})`;
  for (const x of typed) {
    const { type, code } = vendorAFields(x.responseBody ?? '');
    if (!deployed.has(String(type))) t.violation(`${where(x)}: error.type ${JSON.stringify(type)} is not in the type table`);
    const misplaced = typeOutOfPlace(type, pathOf(x));
    if (misplaced) t.violation(`${where(x)}: error.type ${JSON.stringify(type)}, ${misplaced}`);
    const own = ownError(x);
    if (own && deployed.has(String(type)) && type !== gatewayError)
      t.violation(`${where(x)}: error.type ${JSON.stringify(type)} on ${own}, which no upstream produced: the type table gives ${gatewayError}`);
    if (type === gatewayError && !codes.has(String(code)))
      t.violation(`${where(x)}: a ${gatewayError} with code ${JSON.stringify(code)}, not in the code tables`);
  }
  // In every envelope (vendor B's error.type holds the code), whatever the type: a table code spelt another way.
  for (const x of errors) {
    const code = codeOf(x);
    const other = codeInAnotherForm(code, codes);
    if (other) t.violation(`${where(x)}: code ${JSON.stringify(code)} is ${other}, not a code of the code tables in its documented form`);
  }
  t.observe('errors checked', `${errors.length} (${typed.length} with a type)`);
}

/**
 * Every error the gateway produced itself (ownError: a made-up path, its own key rules, a body it cannot route) has a
 * code of the table its cause is of: none from "upstream and channel" (those "come from upstream accounts, not from
 * the request", and no upstream saw it), not prompt_blocked ("prompt rejected by the upstream") and none from "quota
 * and pricing" (none of these causes is a quota or a price: a key past its quota is not among them).
 */
async function everyOwnErrorCodeFits(t: CheckTools): Promise<void> {
  const own = gatewayExchanges().filter((x) => x.status! >= 400 && !x.truncated && ownError(x) !== undefined);
  if (own.length === 0) return t.notApplicable('the run saw no error the gateway produced itself');
  const tables = await gatewayCodeTables();
  const misfit = ['upstream and channel', 'quota and pricing'];
  for (const x of own) {
    const code = codeOf(x);
    const table = misfit.find((name) => tables[name]!.includes(String(code)));
    if (table)
      t.violation(
        `${x.method} ${x.url} (${x.status}): code ${String(code)}, of the ${table} table, on ${ownError(x)!}: no ${table === misfit[0] ? 'upstream account' : 'quota or price'} was its cause`,
      );
    // prompt_blocked is a request problem whose meaning names the upstream ("prompt rejected by the upstream"): no
    // upstream saw an error the gateway produced itself.
    else if (code === 'prompt_blocked')
      t.violation(`${x.method} ${x.url} (${x.status}): code prompt_blocked ("prompt rejected by the upstream") on ${ownError(x)!}: no upstream saw it`);
    // A refusal of the key (401, 403 by the key rules) names no body or prompt: a code whose meaning is one of those (a
    // body that cannot be read or converted, a filtered or refused prompt) is not its cause.
    else if ((x.status === 401 || x.status === 403) && NOT_ABOUT_A_KEY.includes(String(code)))
      t.violation(
        `${x.method} ${x.url} (${x.status}): code ${String(code)} on ${ownError(x)!}: its meaning is about the request's body or prompt, not its key`,
      );
  }
  t.observe('errors read', String(own.length));
}

/**
 * The request-problem codes whose meaning names the body or the prompt (the code table's meanings). model_not_found is
 * not among them: "not callable by this key" may be a key's refusal.
 */
const NOT_ABOUT_A_KEY = ['bad_request_body', 'read_request_body_failed', 'convert_request_failed', 'sensitive_words_detected', 'prompt_blocked'];

/** The model a request named: its JSON body's model (/v1), vendor C's path segment, a handshake's ?model=. */
function modelOf(x: Exchange): string | undefined {
  const path = pathOf(x);
  const inPath = /models\/([^/:?]+):/.exec(path)?.[1];
  if (inPath) return decodeURIComponent(inPath);
  const inQuery = new URL(x.url).searchParams.get('model');
  if (inQuery) return inQuery;
  try {
    const m = (JSON.parse(x.requestBody ?? '') as { model?: unknown }).model;
    return typeof m === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/** The configured keys a request carried (recorded under their variables' names), in any header or `key=`. */
const keysOf = (x: Exchange): string[] => [...new Set(credentialsOf(x).flatMap((c) => c.match(/\$[A-Z][A-Z0-9_]*/g) ?? []))];

/** The prompt a generation sent: every string of its messages, contents, input, prompt or system, in order. */
function promptOf(x: Exchange): string | undefined {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(x.requestBody ?? '') as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
  };
  for (const k of ['system', 'messages', 'contents', 'input', 'prompt']) walk(body[k]);
  return out.length ? out.join('\u0000') : undefined;
}

/**
 * Codes whose meaning names the model or the prompt (the code table): model_not_found "model does not exist or is
 * not callable by this key", sensitive_words_detected the prompt (the gateway's own word filter). Each is contradicted
 * by a 2xx generation the same key was given by the same operation for that model, or for that very prompt, in the
 * run. (prompt_blocked is "rejected by the upstream": another upstream account may serve what one refused.)
 */
const CONTRADICTED_BY_A_SUCCESS: { code: string; of: (x: Exchange) => string | undefined; what: string }[] = [
  { code: 'model_not_found', of: modelOf, what: 'model' },
  { code: 'sensitive_words_detected', of: promptOf, what: 'prompt' },
];

/**
 * Every 4xx of the run coded model_not_found or sensitive_words_detected named a model (a prompt) that the same key
 * was not served by the same operation in the run: a model this key had a 2xx generation of there exists and is
 * callable by it; a prompt it was served there is not sensitive. A 5xx is not judged: a deployment that has just lost
 * every account of a model (a channel switched off mid-run) answers model_not_found with 503, and that is a change.
 */
async function everyCodeNotContradicted(t: CheckTools): Promise<void> {
  const all = gatewayExchanges().filter((x) => x.status !== undefined && !x.truncated && DOCUMENTED_PATH.test(pathOf(x).split('?')[0]!));
  const successes = all.filter((e) => e.status! >= 200 && e.status! < 300 && e.method === 'POST');
  let judged = 0;
  for (const rule of CONTRADICTED_BY_A_SUCCESS) {
    const served = new Map<string, string>();
    for (const x of successes) {
      const v = rule.of(x);
      if (v) for (const k of keysOf(x)) served.set(`${k}\u0000${operationOf(x)}\u0000${v}`, `${x.method} ${x.url}`);
    }
    for (const x of all.filter((e) => e.status! >= 400 && e.status! < 500 && looseErrorCodes(e.responseBody ?? '').includes(rule.code))) {
      const v = rule.of(x);
      if (!v) continue;
      judged++;
      const by = keysOf(x)
        .map((k) => served.get(`${k}\u0000${operationOf(x)}\u0000${v}`))
        .find((w) => w !== undefined);
      if (by)
        t.violation(
          `${x.method} ${x.url} (${x.status}): code ${rule.code} for a ${rule.what} (${rule.what === 'model' ? v : JSON.stringify(v.slice(0, 60))}) the same key was served by the same operation (${by})`,
        );
    }
  }
  if (judged === 0)
    return t.notApplicable(
      `the run saw no error coded ${CONTRADICTED_BY_A_SUCCESS.map((r) => r.code).join(', ')} on a request whose model or prompt it could read`,
    );
  t.observe('errors judged', String(judged));
}

/** Every vendor B error the gateway produced itself holds a code of the code tables in error.type ("string holding the code value"). */
async function everyOwnVendorBTypeACode(t: CheckTools): Promise<void> {
  // A body in vendor B's envelope (top-level type "error"): one in another envelope is the envelope check's finding.
  const vendorBEnvelope = (x: Exchange) => {
    try {
      return (JSON.parse(x.responseBody ?? '') as { type?: unknown }).type === 'error';
    } catch {
      return false;
    }
  };
  const own = gatewayExchanges().filter(
    (x) => x.status! >= 400 && !x.truncated && shapeFor(pathOf(x)) === 'vendor-b' && vendorBEnvelope(x) && ownError(x) !== undefined,
  );
  if (own.length === 0) return t.notApplicable('the run saw no vendor B error the gateway produced itself');
  const codes = await gatewayCodes();
  for (const x of own) {
    const code = codeOf(x);
    // A code spelt another way is the code check's finding (gw-every-error-type-and-code).
    if (!codes.has(String(code)) && !codeInAnotherForm(code, codes))
      t.violation(`${x.method} ${x.url} (${x.status}): error.type ${JSON.stringify(code)} on ${ownError(x)!} is not a code value of the code tables`);
  }
  t.observe('errors read', String(own.length));
}

/** Every request of the run that carried a key the suite made up, on a documented path: answered 401. */
async function everyMadeUpKey401(t: CheckTools): Promise<void> {
  const carried = gatewayExchanges().filter((x) => DOCUMENTED_PATH.test(pathOf(x).split('?')[0]!) && credentialsOf(x).some(madeUp));
  if (carried.length === 0) return t.notApplicable('the run sent no made-up key');
  // A transient answer (429, 5xx) is retried as the retry rules say and tells nothing about the key.
  for (const x of carried.filter((e) => e.status !== 401 && e.status !== 429 && e.status! < 500))
    t.violation(`${x.method} ${x.url}: a key no deployment issued was answered ${x.status}, not 401 ("An invalid … key gives 401")`);
  t.observe('requests with a made-up key', String(carried.length));
}

/** The codes that say no upstream account is available: the status table's "upstream failure and no account available". */
const NO_ACCOUNT_CODES = ['channel:no_available_key'];

/** Every error of the run whose code says no upstream account is available: a 502 or 503. */
async function everyNoAccount502or503(t: CheckTools): Promise<void> {
  const seen = gatewayExchanges().filter(
    (x) => x.status! >= 400 && !x.truncated && looseErrorCodes(x.responseBody ?? '').some((c) => NO_ACCOUNT_CODES.includes(String(c))),
  );
  if (seen.length === 0) return t.notApplicable('the run met no error saying no upstream account was available');
  // A 429 too: "a 429 usually comes from the gateway's own limiting layer", usually, leaves room for one that reports
  // every account rate limited (read two ways). get_channel_failed is not judged: it may name an internal failure (500).
  for (const x of seen.filter((e) => ![502, 503, 429].includes(e.status!))) {
    const code = looseErrorCodes(x.responseBody ?? '').find((c) => NO_ACCOUNT_CODES.includes(String(c)));
    t.violation(`${x.method} ${x.url}: code ${String(code)} (no upstream account available) answered ${x.status}, where the status table gives 502 or 503`);
  }
  t.observe('errors read', String(seen.length));
}

/** Every 401 of the run names the request's own key: none carries an upstream account's channel: code. */
async function every401AboutTheKey(t: CheckTools): Promise<void> {
  const seen = gatewayExchanges().filter((x) => x.status === 401 && !x.truncated);
  if (seen.length === 0) return t.notApplicable('the run saw no 401');
  // 401 is "key invalid, expired or disabled: check or replace the key", the caller's; channel: codes name an
  // upstream account's failure (the code table: "upstream account credential invalid"), which is not the caller's key.
  for (const x of seen) {
    const code = looseErrorCodes(x.responseBody ?? '').find((c) => typeof c === 'string' && c.startsWith('channel:'));
    if (code)
      t.violation(`${x.method} ${x.url}: a 401 with code ${code}, an upstream account's failure, tells the caller to replace a key that is not at fault`);
  }
  t.observe('401s read', String(seen.length));
}

/**
 * Every 400 and 404 of the run (a request's defect: an invalid body, a path or model that does not exist) without a
 * channel: code: those "come from upstream accounts, not from the request". So is the 429 that states the per-user
 * limit of the key configured over it (ownLimit429): the caller's account's count, not an upstream account's. (401 is
 * gw-every-401-about-the-key's; a 403's "account disabled" may be read as an upstream account's, so it is not judged;
 * another 429 may report every upstream account rate limited, so it is not judged either.)
 */
async function everyRequestDefectWithoutChannelCode(t: CheckTools): Promise<void> {
  const seen = gatewayExchanges().filter((x) => ([400, 404].includes(x.status!) || ownLimit429(x)) && !x.truncated);
  if (seen.length === 0) return t.notApplicable('the run saw no 400, no 404 and no per-user 429');
  for (const x of seen) {
    const code = looseErrorCodes(x.responseBody ?? '').find((c) => typeof c === 'string' && c.startsWith('channel:'));
    if (code)
      t.violation(
        x.status === 429
          ? `${x.method} ${x.url}: the 429 of GATEWAY_RATE_LIMITED_KEY, whose body states the per-user limit (the account's own request count in its window, not an upstream account's), with code ${code}, which comes from an upstream account`
          : `${x.method} ${x.url}: a ${x.status}, a request's defect, with code ${code}, which comes from an upstream account, not from the request`,
      );
  }
  t.observe('answers read', `${seen.length} (${seen.filter((x) => x.status === 429).length} per-user 429s)`);
}

/**
 * A 429 that names itself the per-user model-request limit: answered to the key configured over that limit, without
 * Retry-After, its body stating a window in minutes and a count (the limits table's per-user row). That limit counts the
 * caller's own account's requests; a 429 of another kind (an upstream's, "usually" not, or the IP level's) is not this.
 */
function ownLimit429(x: Exchange): boolean {
  if (x.status !== 429 || x.responseHeaders?.['retry-after'] !== undefined) return false;
  if (!credentialsOf(x).some((c) => /\$GATEWAY_RATE_LIMITED_KEY\b/.test(c))) return false;
  const stated = statedLimit(x.responseBody ?? '');
  return stated.windowMinutes !== undefined && stated.max !== undefined;
}

/** The suite's made-up model in a request: in its body (/v1), its path (vendor C) or the handshake's query. */
const namesUnknownModel = (x: Exchange) => x.url.includes(UNKNOWN_MODEL_PREFIX) || (x.requestBody ?? '').includes(UNKNOWN_MODEL_PREFIX);
/** A path with vendor C's model segment generalised: the requests of one operation. */
const operationOf = (x: Exchange) =>
  pathOf(x)
    .split('?')[0]!
    .replace(/models\/[^/:]+:/, 'models/{model}:');

/** Whether a request's JSON body asks for a stream ("stream": true); vendor C streams by its path. */
const streamedBody = (x: Exchange): boolean => {
  try {
    return (JSON.parse(x.requestBody ?? '') as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
};

/**
 * The requests among `others` that `served` accepts, sent between the first and the last of `failed`, when every one
 * of `failed` was answered 5xx (else none): a refusal the deployment gives on every attempt while it serves others
 * meanwhile is its answer, not an outage's (an outage that refuses one request in a few does not do that).
 */
function servedMeanwhile(failed: Exchange[], others: Exchange[], served: (x: Exchange) => boolean): Exchange[] {
  if (failed.length === 0 || failed.some((x) => x.status! < 500)) return [];
  const times = failed.map((x) => Date.parse(x.startedAt));
  const [from, to] = [Math.min(...times), Math.max(...times)];
  return others.filter((x) => served(x) && Date.parse(x.startedAt) > from && Date.parse(x.startedAt) < to);
}

/**
 * Every request of the run that named a model the suite made up (in no key's group): never served (a 2xx, an opened
 * handshake); and not answered 5xx on every attempt while the same operation answered other requests meanwhile (an
 * outage refuses those too): a consistent 5xx is the deployment's answer to the model, where the status table gives 404.
 */
async function everyUnknownModelRefused(t: CheckTools): Promise<void> {
  const all = gatewayExchanges().filter((x) => x.status !== undefined);
  const named = all.filter(namesUnknownModel);
  if (named.length === 0) return t.notApplicable('the run named no made-up model');
  // Served with the valid key: a request without one, or with a refused one, served is the key rules' finding.
  const validKey = (x: Exchange) => credentialsOf(x).some((c) => /\$GATEWAY_API_KEY\b/.test(c));
  for (const x of named.filter((e) => validKey(e) && ((e.status! >= 200 && e.status! < 300) || e.status === 101)))
    t.violation(`${x.method} ${x.url}: a model no key's group holds was served (${x.status}) to the valid key, where the status table gives 404`);
  // The answers about the model: a refused key (401, 403) or a limit (429) answers before the model is looked at.
  // Per operation and transport: a deployment may answer the model one way plainly and another when the call streams.
  const byOperation = new Map<string, Exchange[]>();
  const transportOf = (x: Exchange) => `${operationOf(x)}${streamedBody(x) ? ' (streamed)' : ''}`;
  for (const x of named.filter((e) => ![401, 403, 429].includes(e.status!))) byOperation.set(transportOf(x), [...(byOperation.get(transportOf(x)) ?? []), x]);
  for (const [key, xs] of byOperation) {
    // At least three requests (their retries aside), every attempt a 5xx: an outage that refuses one request in a few
    // does not do that; and meanwhile the operation served others (2xx: their upstream answered).
    if (xs.filter((x) => x.attempt === 0).length < 3) continue;
    const answered = servedMeanwhile(xs, all, (x) => !namesUnknownModel(x) && x.status! >= 200 && x.status! < 300 && transportOf(x) === key);
    if (answered.length)
      t.violation(
        `${key}: all ${xs.length} attempts naming a made-up model answered 5xx (${[...new Set(xs.map((x) => x.status))].join(', ')}), while ${answered.length} other request(s) to it meanwhile were served (e.g. ${answered[0]!.status}): a model outside the key's group answers 404`,
      );
  }
  t.observe('requests naming a made-up model', String(named.length));
}

/**
 * Every answer of the run to a request's defect (400, 401, 403, 404) on a documented path has a JSON body: "Bodies
 * are JSON", on every path family, vendor C's too (whose error envelope is not shown). 429 and 5xx are not judged: a
 * proxy in front of the gateway (the IP-level limit, an outage) answers them in its own form.
 */
async function everyRequestDefectJson(t: CheckTools): Promise<void> {
  // The 404s of the paths the suite made up too: whether such a path's answer is JSON is not judged (a front end may
  // answer an unknown path with its own page), but a JSON body there must be labelled JSON like any other.
  const madeUpPath = (x: Exchange) => x.status === 404 && pathOf(x).includes('conformance-no-such-path');
  const seen = gatewayExchanges().filter(
    (x) => [400, 401, 403, 404].includes(x.status!) && !x.truncated && x.method !== 'HEAD' && (DOCUMENTED_PATH.test(pathOf(x).split('?')[0]!) || madeUpPath(x)),
  );
  if (seen.length === 0) return t.notApplicable('the run saw no 400, 401, 403 or 404 on a documented path');
  // An empty body is no body to be JSON (a HEAD's, a 401 some stacks send bare): not judged. A JSON body must say so:
  // a JSON media type (JSON_MEDIA_TYPE), as a client reads it.
  const bad = seen.filter((x) => {
    if (!(x.responseBody ?? '').trim()) return false;
    const parsed = jsonOf(x);
    if (parsed === NOT_JSON) return !madeUpPath(x);
    // On a made-up path, only a JSON object or array is taken for a JSON body (a front end's bare "404" is text).
    if (madeUpPath(x) && (typeof parsed !== 'object' || parsed === null)) return false;
    return !labelledJson(x);
  });
  reportNotJson(t, seen, bad);
}

/** A recorded answer's body parsed as JSON, or NOT_JSON. */
function jsonOf(x: Exchange): unknown {
  try {
    return JSON.parse(x.responseBody ?? '');
  } catch {
    return NOT_JSON;
  }
}
/** Whether an answer is labelled with a JSON media type. */
const labelledJson = (x: Exchange): boolean => JSON_MEDIA_TYPE.test(x.responseHeaders?.['content-type'] ?? '');

/** The answers of `seen` that are not JSON labelled JSON (`bad`), named as violations (five at most), and the count read. */
function reportNotJson(t: CheckTools, seen: Exchange[], bad: Exchange[]): void {
  for (const x of bad.slice(0, 5))
    t.violation(
      `${x.method} ${x.url}: a ${x.status} whose body is not JSON, or not labelled JSON (${x.responseHeaders?.['content-type'] ?? 'no content type'}): ${JSON.stringify((x.responseBody ?? '').slice(0, 80))}`,
    );
  t.observe('answers read', `${seen.length}${bad.length ? `, ${bad.length} not JSON` : ''}`);
}

/**
 * Every plain 200 of the run on a documented path (the listing and each generation a request did not ask to stream, in
 * every key form the run sent) is a JSON body labelled JSON: "Bodies are JSON" for a served answer too, which only the
 * gateway itself produces. An event stream answering a request that did not ask for one is the "stream": false checks'
 * finding, not judged here.
 */
async function everyServedAnswerJson(t: CheckTools): Promise<void> {
  const seen = gatewayExchanges().filter(
    (x) =>
      x.status === 200 &&
      !x.truncated &&
      x.method !== 'HEAD' &&
      DOCUMENTED_PATH.test(pathOf(x).split('?')[0]!) &&
      !/:streamGenerateContent/i.test(pathOf(x)) &&
      !streamedBody(x) &&
      !/event-stream/i.test(x.responseHeaders?.['content-type'] ?? ''),
  );
  if (seen.length === 0) return t.notApplicable('the run saw no plain 200 on a documented path');
  reportNotJson(
    t,
    seen,
    seen.filter((x) => jsonOf(x) === NOT_JSON || !labelledJson(x)),
  );
}

/** A JSON media type: application/json (text/json, an older label, too), or a structured-syntax +json one, parameters allowed. */
const JSON_MEDIA_TYPE = /^\s*(application|text)\/([\w.+-]+\+)?json\s*(;|$)/i;

/** No error body of the run carries a credential-shaped string. */
async function noCredentialInAnyError(t: CheckTools): Promise<void> {
  const errors = runExchanges('gateway').filter((x) => (x.status ?? 0) >= 400 && x.responseBody);
  if (errors.length === 0) return t.notApplicable('the run saw no error body');
  const found: string[] = [];
  for (const x of errors) {
    const fragments = credentialFragments(x.responseBody ?? '');
    // The fragment is named redacted; the exchange itself is not attached (its body carries the credential).
    if (fragments.length) found.push(`${x.method} ${x.url} (${x.status}): ${[...new Set(fragments)].join('; ')}`);
  }
  t.observe('error bodies scanned', String(errors.length));
  if (found.length)
    t.violation(`error messages must be redacted of sensitive data; credential-shaped strings in ${found.length} error bodies:\n${found.join('\n')}`);
}

// After every other gateway check, one at a time: these read every response the run saw.
describe.sequential('every response the run saw', () => {
  check(
    {
      id: 'gw-every-429-classified',
      title: 'every 429 of the run was IP-level (Retry-After in seconds) or per-user (window and count in the body, no Retry-After)',
      requirements: ['gw-429-classified', 'gw-429-ip-level'],
    },
    async (t) => {
      const seen = gatewayExchanges().filter((x) => x.status === 429);
      if (seen.length === 0) return t.notApplicable('the gateway sent no 429 during this run');
      let ip = 0;
      let user = 0;
      for (const x of seen) {
        const ra = x.responseHeaders?.['retry-after'];
        if (ra !== undefined) {
          ip++;
          if (!/^\d+$/.test(ra.trim())) t.violation(`${x.method} ${x.url}: an IP-level 429 with Retry-After ${JSON.stringify(ra)}, not integer seconds`);
        } else {
          user++;
          const stated = statedLimit(x.responseBody ?? '');
          if (stated.windowMinutes === undefined || stated.max === undefined) {
            t.violation(
              `${x.method} ${x.url}: a 429 with neither Retry-After (IP-level) nor a window and a count in its body (per-user): ${x.responseBody?.slice(0, 200) ?? ''}`,
            );
          }
        }
      }
      t.observe('429s seen', `${ip} IP-level, ${user} per-user`);
    },
  );

  check(
    {
      id: 'gw-every-error-in-its-envelope',
      title: "every error of the run came in its protocol's envelope (vendor B on /v1/messages, vendor A elsewhere on /v1)",
      requirements: ['gw-error-shape-vendor-a', 'gw-error-shape-vendor-b'],
    },
    everyErrorInItsEnvelope,
  );

  check(
    {
      id: 'gw-every-error-type-and-code',
      title:
        'every error of the run had a type from the type table in its place and, for gateway_error, a code from the code tables; no code named a table code in another form',
      requirements: ['gw-error-type-values', 'gw-error-code-values'],
    },
    everyErrorTypeAndCode,
  );

  check(
    {
      id: 'gw-every-no-account-502-503',
      title: 'every error of the run that said no upstream account was available (channel:no_available_key) was a 502 or 503 (or a 429)',
      requirements: ['gw-status-no-account-502-503'],
    },
    everyNoAccount502or503,
  );

  check(
    {
      id: 'gw-every-401-about-the-key',
      title: "every 401 of the run was about the request's own key: none carried an upstream account's channel: code",
      requirements: ['gw-status-401-key'],
    },
    every401AboutTheKey,
  );

  check(
    {
      id: 'gw-every-made-up-key-401',
      title: 'every request of the run that carried a key the suite made up (well-formed, issued by no deployment) was answered 401',
      requirements: ['gw-key-invalid-401', 'gw-models-bad-credential-401'],
    },
    everyMadeUpKey401,
  );

  check(
    {
      id: 'gw-no-credential-in-any-error',
      title: 'no error body of the run carries a credential-shaped string (sk- keys, bearer tokens, vendor key formats)',
      requirements: ['gw-error-message-redacted'],
    },
    noCredentialInAnyError,
  );
});

/**
 * The events of a text/event-stream body: each block's `event:` name (undefined without one) and its data lines joined.
 * A body cut at the recorder's bound loses only its last block, which is left out.
 */
function sseBlocks(body: string, cut: boolean): { event?: string; data: string }[] {
  const blocks = body.replace(/\r\n?/g, '\n').split(/\n\n+/);
  if (cut) blocks.pop();
  return blocks
    .map((b) => {
      const lines = b.split('\n').filter((l) => !l.startsWith(':'));
      const field = (name: string) => lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
      return { event: field('event')[0], data: field('data').join('\n') };
    })
    .filter((b) => b.data !== '' || b.event !== undefined);
}

/**
 * Every vendor B stream of the run names each event by its data's type: vendor B's protocol sends `event:
 * content_block_delta` before the data `{"type":"content_block_delta",...}`, and the vendor's official clients
 * dispatch on that name (its Python client yields only the events it names, so a delta under another name is text
 * the application never sees). An event whose data is not JSON with a string type is not judged.
 */
async function everyVendorBStreamEventNamed(t: CheckTools): Promise<void> {
  // Asked for a stream: an event stream answering "stream": false (or no stream field) is gw-stream-false-json's finding.
  const asked = (x: Exchange) => /"stream"\s*:\s*true/.test(x.requestBody ?? '');
  const streams = gatewayExchanges().filter(
    (x) =>
      x.method === 'POST' &&
      pathOf(x) === '/v1/messages' &&
      x.status === 200 &&
      asked(x) &&
      /event-stream/i.test(x.responseHeaders?.['content-type'] ?? '') &&
      x.responseBody,
  );
  if (streams.length === 0) return t.notApplicable('the run saw no vendor B event stream');
  let events = 0;
  for (const x of streams) {
    for (const b of sseBlocks(x.responseBody!, Boolean(x.truncated))) {
      let type: unknown;
      try {
        type = (JSON.parse(b.data) as { type?: unknown })?.type;
      } catch {
        continue;
      }
      if (typeof type !== 'string') continue;
      events++;
      if (b.event !== type)
        return t.violation(
          `POST ${x.url}: an event whose data has type ${JSON.stringify(type)} came ${b.event === undefined ? 'without an event: line' : `named ${JSON.stringify(b.event)}`}; vendor B's protocol names each event by its type, and its official clients dispatch on the name`,
        );
    }
  }
  t.observe('vendor B stream events read', `${events} in ${streams.length} streams`);
}

describe.sequential('every vendor B stream the run saw', () => {
  check(
    {
      id: 'gw-every-vendor-b-stream-event-named',
      title: "every vendor B event stream of the run named each event by its data's type, as the vendor's official clients dispatch on it",
      requirements: ['gw-sdk-vendor-b'],
    },
    everyVendorBStreamEventNamed,
  );
});

describe.sequential('every refusal the run saw: its code, its model, its body', () => {
  check(
    {
      id: 'gw-every-request-defect-without-channel-code',
      title:
        "every 400 and 404 of the run (a request's defect), and every 429 stating the per-user limit of the key over it, carried no channel: code (an upstream account's)",
      requirements: ['gw-channel-code-not-request'],
    },
    everyRequestDefectWithoutChannelCode,
  );

  check(
    {
      id: 'gw-every-unknown-model-refused',
      title: 'every request of the run naming a made-up model was refused: never served, and not 5xx on every attempt while its operation served others',
      requirements: ['gw-unknown-model-404'],
    },
    everyUnknownModelRefused,
  );

  check(
    {
      id: 'gw-every-request-defect-json',
      title:
        'every 400, 401, 403 and 404 of the run on a documented path, vendor C included, that had a body had a JSON one, labelled JSON (a JSON 404 of a path that does not exist labelled JSON too)',
      requirements: ['gw-bodies-json'],
    },
    everyRequestDefectJson,
  );

  check(
    {
      id: 'gw-every-served-answer-json',
      title:
        'every plain 200 of the run on a documented path (the listing, each generation not asked to stream, in every key form the run sent) had a JSON body, labelled JSON',
      requirements: ['gw-bodies-json'],
    },
    everyServedAnswerJson,
  );
});

/**
 * Realtime handshakes with a key the 401 rule refuses: a made-up key, an expired or a disabled one. When at least three
 * of them answered 5xx on every attempt while the
 * handshake opened sessions (101) for other requests meanwhile, the 5xx is the deployment's answer to the refusal,
 * not an outage (an outage that refuses one request in a few does not refuse every attempt of three in a row).
 */
async function everyRefusedHandshakeAnswered(t: CheckTools): Promise<void> {
  const hs = gatewayExchanges().filter((x) => x.method === WS_HANDSHAKE && x.status !== undefined && !namesUnknownModel(x));
  // The keys "An invalid, expired or disabled key gives 401" names: the other refusals (no credential, a key in
  // `key=`, the 403 states, a management token) are other rules'.
  const refused = hs.filter((x) => credentialsOf(x).some((c) => madeUp(c) || /\$GATEWAY_(EXPIRED|DISABLED)_KEY\b/.test(c)));
  if (refused.filter((x) => x.attempt === 0).length < 3)
    return t.notApplicable('the run sent fewer than three realtime handshakes with an invalid, expired or disabled key');
  const byRequest = new Map<string, Exchange[]>();
  for (const x of refused)
    byRequest.set(`${x.url} ${JSON.stringify(x.requestHeaders)}`, [...(byRequest.get(`${x.url} ${JSON.stringify(x.requestHeaders)}`) ?? []), x]);
  const allFailed = [...byRequest.values()].filter((xs) => xs.every((x) => x.status! >= 500));
  t.observe('refused handshakes', `${byRequest.size}, ${allFailed.length} answered 5xx on every attempt`);
  if (allFailed.length < 3) return;
  const opened = servedMeanwhile(allFailed.flat(), hs, (x) => x.status === 101);
  if (opened.length)
    t.violation(
      `${allFailed.length} realtime handshakes with an invalid, expired or disabled key answered 5xx on every attempt (${[...new Set(allFailed.flat().map((x) => x.status))].join(', ')}; e.g. ${allFailed[0]![0]!.url}), while ${opened.length} other handshake(s) opened meanwhile: such a key gives 401`,
    );
}

describe.sequential('every realtime handshake the key rules refuse', () => {
  check(
    {
      id: 'gw-every-refused-handshake-answered',
      title: 'realtime handshakes with an invalid, expired or disabled key are not answered 5xx on every attempt while others open',
      requirements: ['gw-key-invalid-401'],
    },
    everyRefusedHandshakeAnswered,
  );
});

describe.sequential('every error the gateway produced itself', () => {
  check(
    {
      id: 'gw-every-own-error-code-fits',
      title:
        'every error the gateway produced itself (a made-up path, its own key rules, a body it cannot route) had no code of the upstream-and-channel or the quota-and-pricing table',
      requirements: ['gw-error-code-values'],
    },
    everyOwnErrorCodeFits,
  );

  check(
    {
      id: 'gw-every-code-not-contradicted',
      title:
        'every 4xx of the run coded model_not_found (sensitive_words_detected) named a model (a prompt) the same key was not served, a 2xx generation, by the same operation in the run',
      requirements: ['gw-error-code-values'],
    },
    everyCodeNotContradicted,
  );

  check(
    {
      id: 'gw-every-own-vendor-b-error-type-a-code',
      title: 'every vendor B error the gateway produced itself held a code value of the code tables in error.type',
      requirements: ['gw-error-shape-vendor-b'],
    },
    everyOwnVendorBTypeACode,
  );
});

describe.sequential('every model listing the run saw', () => {
  check(
    {
      id: 'gw-every-listing-has-data',
      title: "every 200 of GET /v1/models in the run (the official clients' too, a key's second listing too) carries a data array",
      requirements: ['gw-models-auth-check'],
    },
    async (t) => {
      const listings = gatewayExchanges().filter((x) => x.method === 'GET' && pathOf(x) === '/v1/models' && x.status === 200 && x.responseBody);
      if (listings.length === 0) return t.notApplicable('the run saw no 200 of GET /v1/models');
      t.observe('listings read', String(listings.length));
      const bad = listings.filter((x) => {
        try {
          return !Array.isArray((JSON.parse(x.responseBody!) as { data?: unknown }).data);
        } catch {
          // Cut at the recorder's bound (16 KiB) or not JSON: not judged here (a body that is not JSON is the JSON checks').
          return false;
        }
      });
      if (bad.length)
        t.violation(
          `${bad.length} of ${listings.length} listings carried no data array, e.g. ${bad
            .slice(0, 3)
            .map((x) => `${x.url}: ${x.responseBody!.slice(0, 120)}`)
            .join('; ')}`,
        );
    },
  );
});

/**
 * "Official client libraries of vendor A and vendor B work": what the official client checks read of their one
 * generation (a chat completion's choices[0].message, a message's content blocks), held on every plain (not streamed)
 * 200 of the path in the run, the `"stream": false` requests' too. A deployment whose results differ from one request
 * to the next (an instance behind a balancer with an older converter) breaks the client on some of them.
 */
const GENERATIONS = [
  {
    id: 'gw-every-chat-completion-readable',
    path: '/v1/chat/completions',
    what: 'a choices array whose entries each carry a message object',
    requirement: 'gw-sdk-vendor-a',
    readable: (b: unknown) => {
      const choices = (b as { choices?: unknown })?.choices;
      return Array.isArray(choices) && choices.every((c) => typeof (c as { message?: unknown })?.message === 'object');
    },
  },
  {
    id: 'gw-every-message-readable',
    path: '/v1/messages',
    what: 'a content array (content blocks)',
    requirement: 'gw-sdk-vendor-b',
    readable: (b: unknown) => Array.isArray((b as { content?: unknown })?.content),
  },
];

describe.sequential('every generation the run saw', () => {
  for (const g of GENERATIONS)
    check(
      {
        id: g.id,
        title: `every plain 200 of POST ${g.path} in the run (the official client's and the "stream": false request's) carries ${g.what}`,
        requirements: [g.requirement],
      },
      async (t) => {
        const seen = gatewayExchanges().filter(
          (x) =>
            x.method === 'POST' && pathOf(x) === g.path && x.status === 200 && !x.truncated && !/event-stream/i.test(x.responseHeaders?.['content-type'] ?? ''),
        );
        if (seen.length === 0) return t.notApplicable(`the run saw no plain 200 of POST ${g.path}`);
        t.observe('results read', String(seen.length));
        for (const x of seen) {
          let body: unknown;
          try {
            body = JSON.parse(x.responseBody ?? '');
          } catch {
            continue; // not JSON: the "stream": false check's finding (a JSON body)
          }
          if (!g.readable(body)) t.violation(`POST ${x.url} answered 200 without ${g.what}: ${(x.responseBody ?? '').slice(0, 160)}`);
        }
      },
    );
});
