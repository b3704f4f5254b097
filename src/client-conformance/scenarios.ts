/**
 * Named scenarios of the observing target. Each provokes what a client rule is about, on a clock scaled down so
 * a run takes seconds: the target answers a request itself (a 429, a 503, invalid_cursor, a broken stream) or
 * rewrites the deployment's answer (s-maxage divided by TIME_SCALE). They key on the order of the client's own
 * requests (its first request, its first continuation page, its third distinct call), never on particular values.
 */
import { randomUUID } from 'node:crypto';
import type { Answer, Decision, ObservedExchange, ObservedRequest } from './observer.js';
import { feedRequestKey } from './requests.js';

export interface ScenarioInfo {
  name: string;
  description: string;
  /** Requirement ids the scenario exercises. */
  exercises: string[];
}

/**
 * Cache-Control lifetimes are divided by this (at least 1 s remains): a 60 s poll interval becomes 4 s. Long enough
 * that a client polling on a fixed timer of a few seconds, whatever s-maxage says, is seen polling too soon (at 60,
 * every lifetime was 1 s and a client written blind that polled every 2 s passed); short enough for a run of seconds.
 */
export const TIME_SCALE = 15;
/** Retry-After the scenarios send, in seconds (the least the documents allow). */
export const SCENARIO_RETRY_AFTER = 1;

// ---------------------------------------------------------------- feed

export const FEED_SCENARIOS: ScenarioInfo[] = [
  {
    name: 'rate-limited-then-unavailable',
    description: `The client's first request is answered 429 with Retry-After: ${SCENARIO_RETRY_AFTER}; its next request for the same URL 503 with Retry-After: ${SCENARIO_RETRY_AFTER}; later ones reach the deployment.`,
    exercises: ['feed-client-retry-after'],
  },
  {
    name: 'scaled-freshness',
    description: `Every Cache-Control lifetime (max-age, s-maxage) the deployment sends is divided by ${TIME_SCALE} (at least 1 s): the client's polls can be timed in seconds.`,
    exercises: ['feed-client-polling-interval', 'feed-client-if-none-match'],
  },
  {
    name: 'invalid-cursor-after-a-page',
    description: 'The first items request that carries a cursor is answered 400 invalid_cursor (as when the anchor has left the window).',
    exercises: ['feed-client-cursor-restart'],
  },
  {
    name: 'hot-topics-and-a-merged-story',
    description:
      "The deployment's hot topics link some stories and not others; one linked story has merged and answers 308 with Location; dailies are reachable only through the archive.",
    exercises: ['feed-client-story-id-from-link', 'feed-client-no-guessed-date'],
  },
  {
    name: 'snapshot-then-changes',
    description:
      'The deployment edits the selected set while the snapshot is paged, so the first changes call has something to reconcile; later changes calls are polls.',
    exercises: ['feed-client-snapshot-not-polled'],
  },
];

function feedProblem(status: number, code: string, detail: string, headers: Record<string, string> = {}): Answer {
  const requestId = randomUUID();
  const body: Record<string, unknown> = { type: `https://feed.invalid/problems/${code}`, title: code.replace(/_/g, ' '), status, detail, code, requestId };
  if (headers['retry-after']) body.retryAfter = Number(headers['retry-after']);
  return { status, headers: { 'content-type': 'application/problem+json', 'x-request-id': requestId, ...headers }, body: JSON.stringify(body) };
}

/** Divide every lifetime of a Cache-Control value by TIME_SCALE, keeping at least 1 s. */
export function scaleCacheControl(value: string): string {
  return value.replace(/\b(max-age|s-maxage)=(\d+)/g, (_m, name: string, n: string) => `${name}=${Math.max(1, Math.round(Number(n) / TIME_SCALE))}`);
}

/**
 * How a round of the feed scenarios places its refusals. The first round leaves room to judge the polls: the 429
 * comes on the first request that repeats one already answered (a poll, timed and judged like any other), its
 * next repetition gets the 503. A client that repeats nothing meets them in a second round, on its first request.
 */
export interface FeedPlan {
  refuseEarly: boolean;
}

export function feedScenario(plan: FeedPlan = { refuseEarly: false }): (req: ObservedRequest, log: ObservedExchange[]) => Decision {
  let limited: string | undefined;
  let unavailableSent = false;
  let cursorRejected = false;
  let start: number | undefined;
  const scale = (_status: number, h: Record<string, string>): Record<string, string> =>
    h['cache-control'] ? { ...h, 'cache-control': scaleCacheControl(h['cache-control']) } : h;
  return (req, log) => {
    start ??= log.length;
    const mine = log.slice(start);
    const retryAfter = { 'retry-after': String(SCENARIO_RETRY_AFTER) };
    const key = feedRequestKey(req);
    const repeat = plan.refuseEarly ? mine.length === 0 : mine.some((y) => (y.status === 200 || y.status === 304) && feedRequestKey(y) === key);
    if (limited === undefined && repeat) {
      limited = key;
      return { kind: 'answer', scenario: 'rate-limited-then-unavailable', answer: feedProblem(429, 'rate_limited', 'too many requests', retryAfter) };
    }
    if (!unavailableSent && key === limited) {
      unavailableSent = true;
      return { kind: 'answer', scenario: 'rate-limited-then-unavailable', answer: feedProblem(503, 'unavailable', 'temporarily unavailable', retryAfter) };
    }
    if (!cursorRejected && req.path === '/api/v1/items' && req.query.has('cursor')) {
      cursorRejected = true;
      return {
        kind: 'answer',
        scenario: 'invalid-cursor-after-a-page',
        answer: feedProblem(400, 'invalid_cursor', 'the cursor anchor has left the requested window; restart from the first page'),
      };
    }
    return { kind: 'forward', rewriteHeaders: scale };
  };
}

/** The feed's next round: only when no 429 or 503 reached a client that made requests (it repeated none of them). */
export function nextFeedRound(xs: ObservedExchange[], round: number): FeedPlan | undefined {
  const mine = xs.filter((x) => (x.round ?? 1) === round);
  if (round > 1 || mine.length === 0 || mine.some((x) => x.scenario === 'rate-limited-then-unavailable')) return undefined;
  return { refuseEarly: true };
}

// ---------------------------------------------------------------- gateway

/** Retries of one failing call beyond this count as uncapped (the document names no number; --retry-ceiling). */
export const DEFAULT_RETRY_CEILING = 10;
/** Text of a broken stream's first (and only) part: a resumed request would carry it back. */
export const PARTIAL_TEXT = 'Partial answer, cut off';

export const GATEWAY_SCENARIOS: ScenarioInfo[] = [
  {
    name: 'rate-limited-then-unavailable',
    description: `The client's first distinct generation call is answered 429 with Retry-After: ${SCENARIO_RETRY_AFTER}, its first retry 503 with Retry-After: ${SCENARIO_RETRY_AFTER}; later retries reach the deployment.`,
    exercises: ['gw-client-retry-wait', 'gw-client-retry-statuses'],
  },
  {
    name: 'bad-request-not-retried',
    description: 'The second distinct generation call is answered 400 invalid_request (a defect of the request: retrying does not help).',
    exercises: ['gw-client-retry-statuses'],
  },
  {
    name: 'upstream-down',
    description:
      'The third distinct generation call is answered 502 without Retry-After on every attempt until one past the retry ceiling: only a cap stops the retries.',
    exercises: ['gw-client-retry-cap'],
  },
  {
    name: 'broken-stream',
    description: 'The first streamed call gets a 200 event stream whose body is cut after its first event; a repeat of the call gets a whole stream.',
    exercises: ['gw-client-stream-restart'],
  },
  {
    name: 'key-per-path-family',
    description: 'Every request is passed to the deployment with the credential as sent; the key form is judged against the Authentication table for its path.',
    exercises: ['gw-auth-bearer', 'gw-auth-x-api-key', 'gw-auth-vendorc-header', 'gw-auth-query-key', 'gw-auth-query-key-not-vendor-a'],
  },
];

export type GatewayFamily = 'models' | 'vendor-a' | 'vendor-b' | 'vendor-c' | 'unknown';
export function gatewayFamily(path: string, names: { responsesPath: string; realtimePath: string }): GatewayFamily {
  if (path === '/v1/models') return 'models';
  if (path === '/v1/messages') return 'vendor-b';
  if (path.startsWith('/v1beta/models')) return 'vendor-c';
  if (path === '/v1/chat/completions' || path === names.responsesPath || path === names.realtimePath) return 'vendor-a';
  return 'unknown';
}

function gatewayError(path: string, status: number, code: string, message: string, headers: Record<string, string> = {}): Answer {
  const text = `${message} (request id: ${randomUUID().replace(/-/g, '').slice(0, 20)})`;
  const body =
    path === '/v1/messages' ? { type: 'error', error: { type: code, message: text } } : { error: { message: text, type: 'gateway_error', param: '', code } };
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

export function isStreamed(req: { path: string; query: URLSearchParams; body: string }): boolean {
  if (req.path.endsWith(':streamGenerateContent') || req.query.get('alt') === 'sse') return true;
  try {
    return (JSON.parse(req.body) as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
}

/** A call's identity: a retry repeats method, path (query included) and body. */
export const callOf = (x: { method: string; url: string; requestBody?: string; body?: string }) => `${x.method} ${x.url} ${x.requestBody ?? x.body ?? ''}`;

function events(path: string, whole: boolean): string {
  const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
  if (path === '/v1/messages') {
    const start = sse(
      {
        type: 'message_start',
        message: { id: 'msg_stream', type: 'message', role: 'assistant', content: [], model: 'stream', usage: { input_tokens: 1, output_tokens: 0 } },
      },
      'message_start',
    );
    const delta = sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: whole ? 'ok' : PARTIAL_TEXT } }, 'content_block_delta');
    return whole
      ? `${start}${sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start')}${delta}${sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop')}${sse({ type: 'message_stop' }, 'message_stop')}`
      : `${start}${delta}`;
  }
  if (path.startsWith('/v1beta/')) {
    return sse({
      candidates: [{ content: { role: 'model', parts: [{ text: whole ? 'ok' : PARTIAL_TEXT }] }, ...(whole ? { finishReason: 'STOP' } : {}), index: 0 }],
    });
  }
  const chunk = (content: string, finish: string | null) => ({
    id: 'chatcmpl-stream',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'stream',
    choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: finish }],
  });
  return whole ? `${sse(chunk('ok', null))}${sse(chunk('', 'stop'))}data: [DONE]\n\n` : sse(chunk(PARTIAL_TEXT, null));
}

/** What the scenario does to a distinct (non-streamed) generation call, by its place among the client's calls. */
export type GatewayRole = 'rate-limited-then-unavailable' | 'bad-request-not-retried' | 'upstream-down';
export const GATEWAY_ROLES: GatewayRole[] = ['rate-limited-then-unavailable', 'bad-request-not-retried', 'upstream-down'];

/**
 * The gateway's next round, when a client that retried made too few distinct calls for every role (a one-call
 * client meets the 429 and 503 only): the command runs again with the roles it has not met given to its first
 * calls, until each was met, the client stopped calling, or three rounds ran.
 */
export function nextGatewayRound(xs: ObservedExchange[], round: number): GatewayRole[] | undefined {
  const mine = xs.filter((x) => (x.round ?? 1) === round && x.method === 'POST');
  const met = new Set(xs.map((x) => x.scenario).filter((s): s is GatewayRole => GATEWAY_ROLES.includes(s as GatewayRole)));
  const rounds = new Set(xs.map((x) => x.round ?? 1));
  const retried = [...rounds].some((r) => {
    const calls = xs.filter((x) => (x.round ?? 1) === r && x.method === 'POST').map(callOf);
    return new Set(calls).size < calls.length;
  });
  const missing = GATEWAY_ROLES.filter((r) => !met.has(r));
  if (round >= 3 || mine.length === 0 || !retried || missing.length === 0) return undefined;
  return [...missing, ...GATEWAY_ROLES.filter((r) => met.has(r))];
}

export function gatewayScenario(o: { retryCeiling: number; roles?: GatewayRole[] }): (req: ObservedRequest, log: ObservedExchange[]) => Decision {
  const roles = o.roles ?? GATEWAY_ROLES;
  const numbered = new Map<string, number>();
  const attempts = new Map<string, number>();
  let brokenCall: string | undefined;
  return (req) => {
    if (req.method !== 'POST') return { kind: 'forward' };
    const call = callOf(req);
    const attempt = (attempts.get(call) ?? 0) + 1;
    attempts.set(call, attempt);
    if (isStreamed(req)) {
      const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
      if (brokenCall === undefined) {
        brokenCall = call;
        return { kind: 'break', scenario: 'broken-stream', answer: { status: 200, headers }, partialBody: events(req.path, false) };
      }
      if (call === brokenCall) return { kind: 'answer', scenario: 'broken-stream', answer: { status: 200, headers, body: events(req.path, true) } };
      return { kind: 'forward' };
    }
    if (!numbered.has(call)) numbered.set(call, numbered.size + 1);
    const role = roles[numbered.get(call)! - 1];
    const ra = { 'retry-after': String(SCENARIO_RETRY_AFTER) };
    if (role === 'rate-limited-then-unavailable' && attempt === 1)
      return { kind: 'answer', scenario: role, answer: gatewayError(req.path, 429, 'access_denied', 'too many requests from this IP', ra) };
    if (role === 'rate-limited-then-unavailable' && attempt === 2)
      return {
        kind: 'answer',
        scenario: role,
        answer: gatewayError(req.path, 503, 'channel:no_available_key', 'no upstream account is available for the model', ra),
      };
    if (role === 'bad-request-not-retried' && attempt === 1)
      return { kind: 'answer', scenario: role, answer: gatewayError(req.path, 400, 'invalid_request', 'the request is invalid') };
    // Failing one try past the ceiling: a client that does not cap its retries makes more than `retryCeiling` of them
    // (when the answers stopped at the ceiling, an uncapped client stopped there too, and looked capped).
    if (role === 'upstream-down' && attempt <= o.retryCeiling + 2)
      return { kind: 'answer', scenario: role, answer: gatewayError(req.path, 502, 'bad_response_status_code', 'the upstream answered 500') };
    return { kind: 'forward' };
  };
}
