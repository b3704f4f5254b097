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
  looseErrorCodes,
  statedLimit,
  typeNames,
  typeOutOfPlace,
  vendorAFields,
  MADE_UP_KEY_PREFIX,
} from '../../src/gateway.js';
import type { Exchange, HttpResponse } from '../../src/http.js';

/** The documented path of an exchange: the base URL's path prefix, if the gateway is served under one, taken off. */
const pathOf = (x: Exchange) => operationPath('gateway', x.url)!;
/**
 * The run's exchanges with the gateway under its base URL, the realtime WebSocket handshakes included: a refused
 * handshake is an HTTP answer of a vendor A interface, its error in the vendor A envelope and its 429 one of the two kinds.
 */
/** The documented HTTP operations' paths, where a key is read (an unknown path's 404 is about the path; a handshake with a made-up key is the realtime checks'). */
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

/** The suite's made-up keys: sk-conformance-invalid-… (recorded as sent) and the canary (recorded under its name). */
const madeUp = (s: string | undefined) => s !== undefined && (s.includes(MADE_UP_KEY_PREFIX) || s.includes('$CONFORMANCE_CANARY_KEY'));
/** The credentials a request carried, as recorded (configured keys under their variable's name), in any header or `key=`. */
const credentialsOf = (x: Exchange): string[] =>
  [...Object.values(x.requestHeaders ?? {}), new URL(x.url).searchParams.get('key')].filter((c): c is string => c !== null);
/** Configured keys and tokens that the gateway's own key rules refuse (their states), recorded under their names. */
const REFUSED_KEY = /\$GATEWAY_(EXPIRED|DISABLED|IP_DENIED|ACCOUNT_DISABLED)_KEY\b|\$GATEWAY_MANAGEMENT_TOKEN\b|conformance-unknown-credential/;

/**
 * An error the gateway produced itself, whatever the deployment: the 404 of a path the suite made up, and the 401 or
 * 403 refusing a key the suite made up or one of the configured key states (the gateway's own keys, accounts and
 * allow lists: no upstream judges them). The type table: gateway_error is the "error produced by the gateway itself".
 */
function ownError(x: Exchange): string | undefined {
  const p = pathOf(x).split('?')[0]!;
  if (x.status === 404 && p.includes('conformance-no-such-path')) return 'the 404 of a path that does not exist';
  const creds = credentialsOf(x);
  if ((x.status === 401 || x.status === 403) && DOCUMENTED_PATH.test(p) && creds.some((c) => madeUp(c) || REFUSED_KEY.test(c)))
    return `the ${x.status} refusing a key by the gateway's own key rules`;
  return undefined;
}

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
    const code = shapeFor(pathOf(x)) === 'vendor-b' ? looseErrorCodes(x.responseBody ?? '')[1] : vendorAFields(x.responseBody ?? '').code;
    const other = codeInAnotherForm(code, codes);
    if (other) t.violation(`${where(x)}: code ${JSON.stringify(code)} is ${other}, not a code of the code tables in its documented form`);
  }
  t.observe('errors checked', `${errors.length} (${typed.length} with a type)`);
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
    async (t) => {
      const errors = gatewayExchanges().filter((x) => x.status! >= 400 && !x.truncated);
      const checked = errors.filter((x) => shapeFor(pathOf(x)) !== undefined);
      if (checked.length === 0) return t.notApplicable('the run saw no error on /v1');
      for (const x of checked) await expectErrorShape(asResponse(x), shapeFor(pathOf(x))!);
      t.observe('errors checked', String(checked.length));
    },
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
