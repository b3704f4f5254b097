/**
 * The retry decision as a table: which answers are transient refusals (retried whatever the request expects, and
 * "target unavailable" past the cap) and which are the target's answer. The rows are the documents' own tables: the
 * feed's 429 and 503 (Errors), the gateway's 429 and 502/503 ("upstream failure and no account available: may
 * retry"), and the gateway codes that name a problem of the request rather than of the upstream.
 */
import { describe, expect, test } from 'vitest';
import { decide, isTransient, retries, type RetryMode } from './retry-policy.js';
import { clientRules } from './spec.js';

const feed = clientRules('feed');
const gateway = clientRules('gateway');
const vendorA = (code: string) => JSON.stringify({ error: { message: 'm', type: 'gateway_error', param: '', code } });
const vendorB = (code: string) => JSON.stringify({ type: 'error', error: { type: code, message: 'm' } });

describe('transient refusals', () => {
  test.each([
    ['feed', 429, undefined, true],
    ['feed', 503, undefined, true],
    ['feed', 503, '{"code":"unavailable"}', true],
    ['feed', 500, undefined, false],
    ['feed', 502, undefined, false],
    ['feed', 400, '{"code":"invalid_cursor"}', false],
    ['gateway', 429, undefined, true],
    // A 429 is a rate limit whatever its code says (the per-user and IP-level 429s carry access_denied in places).
    ['gateway', 429, vendorA('access_denied'), true],
    ['gateway', 503, vendorA('channel:no_available_key'), true],
    ['gateway', 502, vendorA('bad_response_status_code'), true],
    ['gateway', 503, vendorB('channel:no_available_key'), true],
    ['gateway', 503, 'Service Unavailable', true],
    ['gateway', 503, undefined, true],
    // A 503 naming a problem of the request is the gateway's answer about it (as some real builds answer an unknown model).
    ['gateway', 503, vendorA('model_not_found'), false],
    ['gateway', 502, vendorB('model_not_found'), false],
    ['gateway', 503, vendorA('insufficient_user_quota'), false],
    ['gateway', 500, vendorA('channel:no_available_key'), false],
    ['gateway', 504, undefined, false],
    ['gateway', 401, vendorA('invalid_request'), false],
  ] as const)('%s %i %s: transient %s', (service, status, body, expected) => {
    expect(isTransient(service === 'feed' ? feed : gateway, status, body)).toBe(expected);
  });
});

describe('what a request retries, by its mode', () => {
  test.each([
    [true, 'gateway', 500, true],
    [true, 'gateway', 503, true],
    [true, 'feed', 500, false],
    ['transient', 'gateway', 500, false],
    ['transient', 'gateway', 503, true],
    ['transient', 'feed', 503, true],
    ['transient', 'gateway', 429, true],
    [false, 'gateway', 429, false],
    [false, 'feed', 503, false],
  ] as const)('mode %s, %s %i: retried %s', (mode, service, status, expected) => {
    expect(retries(mode as RetryMode, service === 'feed' ? feed : gateway, status)).toBe(expected);
  });
});

describe('after the answer: take it, retry it, or give up', () => {
  const base = { mode: true as RetryMode, rules: gateway, maxRetries: 2, originAnswers: true };
  test.each([
    // status, body, attempt, origin answers others, decision
    [200, undefined, 0, true, 'answer'],
    [404, undefined, 0, true, 'answer'],
    [503, vendorA('channel:no_available_key'), 0, true, 'retry'],
    [503, vendorA('channel:no_available_key'), 1, true, 'retry'],
    // The cap spent on an outage: unavailable, never the target's answer.
    [503, vendorA('channel:no_available_key'), 2, true, 'unavailable'],
    [429, undefined, 2, true, 'unavailable'],
    // The same 500 every time from a target that answers other requests: its answer to this request.
    [500, undefined, 2, true, 'answer'],
    [500, undefined, 2, false, 'unavailable'],
    // A 503 naming the request's problem, every time: an answer too.
    [503, vendorA('model_not_found'), 2, true, 'answer'],
  ] as const)('%i %s, attempt %i (origin answers others: %s): %s', (status, body, attempt, originAnswers, action) => {
    expect(decide({ ...base, status, body, attempt, originAnswers })).toEqual({ action });
  });

  test("a request that expects an error takes a 500 at once, but retries an outage's 503", () => {
    expect(decide({ ...base, mode: 'transient', status: 500, attempt: 0 })).toEqual({ action: 'answer' });
    expect(decide({ ...base, mode: 'transient', status: 503, body: vendorA('channel:no_available_key'), attempt: 0 })).toEqual({ action: 'retry' });
  });

  test('a request whose refusal is under test takes that refusal, and retries an outage meanwhile', () => {
    expect(decide({ ...base, mode: false, status: 429, attempt: 0 })).toEqual({ action: 'answer' });
    // The per-user 429 check: a 429 without Retry-After is its answer; an IP-level 429 (with it) and a 503 are not.
    const perUser = {
      answer: (a: { status: number; retryAfter?: string; attempt: number }) => a.status === 429 && (a.retryAfter === undefined || a.attempt > 0),
    };
    expect(decide({ ...base, mode: perUser, status: 429, attempt: 0 })).toEqual({ action: 'answer' });
    expect(decide({ ...base, mode: perUser, status: 429, retryAfter: '1', attempt: 0 })).toEqual({ action: 'retry' });
    expect(decide({ ...base, mode: perUser, status: 429, retryAfter: '1', attempt: 1 })).toEqual({ action: 'answer' });
    expect(decide({ ...base, mode: perUser, status: 503, body: vendorA('channel:no_available_key'), attempt: 0 })).toEqual({ action: 'retry' });
    expect(decide({ ...base, mode: perUser, status: 500, attempt: 0 })).toEqual({ action: 'answer' });
  });
});

describe("a refusal that persists on one request while the target answers others (the feed's 503: every operation may answer it)", () => {
  const base = { mode: true as RetryMode, maxRetries: 2, originAnswers: true };
  test.each([
    // rules, status, attempt, max retries, decision
    ['feed', 503, 1, 2, 'retry'],
    // The cap spent: the feed is asked another request before the refusal is taken for its answer.
    ['feed', 503, 2, 2, 'confirm'],
    // The confirming try (after the feed answered another request normally): its answer stands.
    ['feed', 503, 3, 2, 'answer'],
    // A 429 is a rate limit on every try: unavailable.
    ['feed', 429, 2, 2, 'unavailable'],
    // No retries allowed: nothing is tried again, so nothing is confirmed.
    ['feed', 503, 0, 0, 'unavailable'],
    // The gateway's rules take no refusal as its answer this way (a 503 with no upstream account is an outage).
    ['gateway', 503, 2, 2, 'unavailable'],
  ] as const)('%s %i, attempt %i of %i retries: %s', (service, status, attempt, maxRetries, action) => {
    expect(decide({ ...base, rules: service === 'feed' ? feed : gateway, status, attempt, maxRetries })).toEqual({ action });
  });
});

describe("a request no upstream outage can refuse rightly (one naming a model that does not exist: mode 'persistent')", () => {
  const base = { rules: gateway, maxRetries: 2, originAnswers: true, body: vendorA('get_channel_failed') };
  test.each([
    // status, attempt, decision
    [503, 1, 'retry'],
    // The cap spent on the gateway's 503: the origin is asked another request before the 503 is taken for its answer.
    [503, 2, 'confirm'],
    [502, 2, 'confirm'],
    // The confirming try: its answer stands.
    [503, 3, 'answer'],
    // A 429 is a rate limit on every try: unavailable, as for any request.
    [429, 2, 'unavailable'],
  ] as const)('gateway %i, attempt %i: %s', (status, attempt, action) => {
    expect(decide({ ...base, mode: 'persistent', status, attempt })).toEqual({ action });
    // The same answers to a request that expects an error of another kind ('transient') mean an outage.
    if (action === 'confirm') expect(decide({ ...base, mode: 'transient', status, attempt })).toEqual({ action: 'unavailable' });
  });
});
