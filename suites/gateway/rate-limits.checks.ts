/**
 * model-gateway-service.md — Limits: the two kinds of 429. The per-user kind with GATEWAY_RATE_LIMITED_KEY; the
 * IP-level kind only on request (CONFORMANCE_PROBE_RATE_LIMIT=1), with a burst bounded in count and time.
 */
import { describe } from 'vitest';
import { check, expect, precondition, type CheckTools } from '../../src/harness.js';
import type { HttpResponse } from '../../src/http.js';
import { runContext, secret } from '../../src/context.js';
import {
  bearerControl,
  gatewayGet,
  type GatewayOperation,
  gatewayOperations,
  gatewaySend,
  GW_CHECK_IDS,
  isEventStream,
  keyTaken,
  minimalBody,
  pathServed,
  PAYLOAD_OPERATIONS,
  protocolHeaders,
  requireKey,
  requireValidKey,
  shapeFor,
  statedLimit,
  STREAM_OPERATIONS,
  typeNames,
  unknownModel,
  vendorAFields,
} from '../../src/gateway.js';

const operations = await gatewayOperations();
/** Set once a per-user 429 of this deployment came with Retry-After (a departure, judged by the checks below). */
let perUserWithRetryAfter = false;
const BURST_MAX_REQUESTS = 60;
/** The probe's retry mode: a 429 is the answer it looks for (and, after the wait, must not get again). */
const IP_429 = { answer: (a: { status: number }) => a.status === 429 };
const BURST_MAX_MS = 10_000;

/**
 * The rate-limited key's request on `op` (naming an unknown model: nothing generates), judged as the per-user 429:
 * status 429 and no Retry-After. The per-user 429 is the answer under test; an IP-level 429 (it has Retry-After: it
 * can come first on a shared egress) is waited out once, and an outage's 503 retried, as any transient refusal; a
 * second 429 is the answer, whatever it carries (and a first one too, once this deployment's per-user 429 was shown to
 * carry Retry-After). A refusal of the key is about the limit only when the valid key is taken on the same request.
 */
async function perUser429(t: CheckTools, op: GatewayOperation, key: string, stream = false): Promise<HttpResponse> {
  // Each such 429 pauses the origin for its Retry-After (a client rule): once this deployment's per-user 429 was shown
  // to carry one (its check fails), the other paths' would only cost the run a pause each and tell nothing more.
  if (perUserWithRetryAfter && (op.operationId !== 'chatCompletions' || stream))
    t.notApplicable("this deployment's per-user 429 carries Retry-After (failed on an earlier path): each further one would pause the run for it");
  const model = unknownModel();
  const body = minimalBody(op.operationId, model) as object;
  const res = await gatewaySend(op.path(model), {
    method: op.method,
    headers: { authorization: `Bearer ${key}`, ...protocolHeaders(op.operationId) },
    // A streamed request is limited as any other: the 429 precedes the stream (no 200 event stream, no error event in one).
    body: stream ? { ...body, stream: true } : body,
    retry: { answer: (a) => a.status === 429 && (a.retryAfter === undefined || a.attempt > 0 || perUserWithRetryAfter) },
  });
  t.observe('status', String(res.status));
  if (res.status === 429 && res.header('retry-after') !== undefined) perUserWithRetryAfter = true;
  if (res.status === 401 || res.status === 403) {
    const valid = secret('GATEWAY_API_KEY');
    if (valid) {
      const control = await bearerControl(op, valid);
      t.cite(control);
      keyTaken(control, `${op.method} ${op.display}`);
    }
  }
  const what = `${op.method} ${op.display} with the rate-limited key${stream ? ' and "stream": true' : ''}`;
  if (stream && res.status >= 200 && res.status < 300)
    t.violation(`${what} was served (${res.status}${isEventStream(res) ? ', an event stream' : ''}): the limit applies to streamed requests too`);
  expect(res.status, what).toBe(429);
  expect(res.header('retry-after'), 'a per-user 429 carries no Retry-After').toBeUndefined();
  if (stream) expect(isEventStream(res), `${what}: the 429 answered as an event stream`).toBe(false);
  // The per-user limit is the gateway's own limiting layer (it counts one account's requests): where the envelope
  // carries a type (vendor A), it is gateway_error, not a vendor's passed-through type.
  if (shapeFor(op.display) === 'vendor-a')
    expect(vendorAFields(res.body).type, `error.type of ${what}'s 429 (the gateway's own per-user limit)`).toBe(typeNames().gatewayError);
  return res;
}

/** Control: the path exists and takes the valid key, so a 404 with the rate-limited key is not read as a missing path. */
async function pathTakesValidKey(t: CheckTools, op: GatewayOperation): Promise<void> {
  const served = await pathServed(op, await requireValidKey(t));
  t.cite(...served.evidence);
  precondition(served.served, `${op.method} ${op.display} answered ${served.what} with the valid key: the path's answers could not be read`);
}

// One after another, and alone: the IP-level probe needs a quiet origin, and the per-user check must not meet its burst.
describe.sequential('429s', () => {
  check(
    {
      id: GW_CHECK_IDS.perUser429('chatCompletions'),
      title: 'a key over its per-user limit gets 429 whose body states the window in minutes and the maximum count, without Retry-After',
      requirements: ['gw-429-per-user', 'gw-error-type-values'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_RATE_LIMITED_KEY');
      const res = await perUser429(
        t,
        operations.find((o) => o.operationId === 'chatCompletions')!,
        key,
      );
      const stated = statedLimit(res.body);
      t.observe('message', res.body.slice(0, 300));
      t.observe('stated limit', `window ${stated.windowMinutes ?? '?'} minute(s), at most ${stated.max ?? '?'} requests`);
      expect(stated.windowMinutes, 'the body states the window in minutes (a number with a minute unit)').toBeGreaterThan(0);
      expect(stated.max, 'the body states the maximum request count (a number besides the window)').toBeGreaterThan(0);
    },
  );

  // The limit is the account's, on every model interface: the same key is answered 429 on the other protocols too.
  for (const op of operations.filter((o) => PAYLOAD_OPERATIONS.includes(o.operationId) && o.operationId !== 'chatCompletions')) {
    check(
      {
        id: GW_CHECK_IDS.perUser429(op.operationId),
        title: `${op.method} ${op.display}: a key over its per-user limit gets 429 without Retry-After`,
        requirements: ['gw-429-per-user', 'gw-error-type-values'],
      },
      async (t) => {
        const key = requireKey(t, 'GATEWAY_RATE_LIMITED_KEY');
        await pathTakesValidKey(t, op);
        await perUser429(t, op, key);
      },
    );
  }

  // The same limit when the request streams: the 429 comes before any stream, on each protocol that streams (the
  // Responses-style operation included: the limit is the account's, whatever the request asks for).
  for (const op of operations.filter((o) => STREAM_OPERATIONS.includes(o.operationId))) {
    check(
      {
        id: GW_CHECK_IDS.streamPerUser429(op.operationId),
        title: `${op.method} ${op.display} with "stream": true: a key over its per-user limit gets 429 without Retry-After, not a stream`,
        requirements: ['gw-429-per-user', 'gw-error-type-values'],
      },
      async (t) => {
        const key = requireKey(t, 'GATEWAY_RATE_LIMITED_KEY');
        await pathTakesValidKey(t, op);
        await perUser429(t, op, key, true);
      },
    );
  }

  check(
    {
      id: 'gw-ip-level-429-probe',
      title: 'a bounded burst reaches the IP-level 429: Retry-After in integer seconds, and a retry after it succeeds',
      requirements: ['gw-429-ip-level'],
    },
    async (t) => {
      if (!runContext().probeRateLimit)
        t.notExercised('the rate-limit probe is off (set CONFORMANCE_PROBE_RATE_LIMIT=1 to allow a burst of up to 60 GET /v1/models in 10 s)');
      const key = await requireValidKey(t);
      const started = Date.now();
      let limited;
      for (let i = 0; i < BURST_MAX_REQUESTS && Date.now() - started < BURST_MAX_MS; i++) {
        // The 429 is what the burst looks for; an outage's 503 meanwhile is retried as usual.
        const res = await gatewayGet('/v1/models', { headers: { authorization: `Bearer ${key}` }, retry: IP_429 });
        if (res.status === 429) {
          limited = res;
          break;
        }
      }
      if (!limited) return t.notApplicable(`no 429 within ${BURST_MAX_REQUESTS} requests in ${BURST_MAX_MS / 1000} s: the IP-level limit is higher`);
      const ra = limited.header('retry-after');
      expect(ra, 'an IP-level 429 carries Retry-After').toBeTypeOf('string');
      expect(ra, 'Retry-After').toMatch(/^\d+$/, 'integer seconds');
      await new Promise((r) => setTimeout(r, Number(ra) * 1000 + 100));
      const after = await gatewayGet('/v1/models', { headers: { authorization: `Bearer ${key}` }, retry: IP_429 });
      expect(after.status, `GET /v1/models after waiting Retry-After ${ra}`).toBe(200);
    },
  );
});
