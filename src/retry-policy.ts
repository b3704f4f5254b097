/**
 * The suite's retry decision as pure functions: which answers are transient refusals, and what to do after an
 * answer (take it, retry it, or give up). The HTTP client (src/http.ts) applies the decision: it waits, pauses the
 * origin and counts. Every way the suite sends (its own requests, the raw reader, the WebSocket handshake, the
 * official clients' fetch) decides through these functions.
 */
import type { ClientRules } from './spec.js';

/**
 * How a request treats answers its service's rules retry:
 * - true: retry what the rules retry (feed 429/503, gateway 429/5xx); a 5xx that persists past the cap from a
 *   target that answers other requests is its answer, a transient refusal that persists is unavailability;
 * - 'transient': retry only transient refusals, for requests that expect an error answer (a 500 is then the answer
 *   under test, at once; a 503 with no upstream account is not);
 * - { answer }: as 'transient', except that a refusal `answer` accepts is the answer under test (the rate-limit
 *   checks want the 429, yet an outage's 503 meanwhile is retried);
 * - 'persistent': as 'transient', except that a transient 5xx (not a 429, a rate limit) that persists past the cap is
 *   confirmed (as the feed's 503 always is): the origin answering another request normally, one more try's answer
 *   stands. For requests no outage of the upstream accounts can refuse rightly (one naming a model that does not exist:
 *   "a request naming an unknown model answers with an error whose code is model_not_found"), so that a gateway
 *   answering those 503 every time, while it answers others, is judged on that answer, not taken for one that is down;
 * - false: retry nothing.
 */
export type RetryMode = boolean | 'transient' | 'persistent' | { answer: (a: { status: number; retryAfter?: string; attempt: number }) => boolean };

/** The error codes an answer body carries, in either vendor envelope (vendor A error.code, vendor B error.type) or at the top level. */
function bodyCodes(body: string | undefined): string[] {
  if (!body) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null) return [];
  const top = parsed as Record<string, unknown>;
  const e = typeof top.error === 'object' && top.error !== null ? (top.error as Record<string, unknown>) : {};
  return [e.code, e.type, top.code].filter((c): c is string => typeof c === 'string');
}

/**
 * A transient refusal: a status the service's rules call transient (429; feed 503; gateway 502/503), unless its
 * body carries a code that makes it the target's answer about this request (a gateway 503 model_not_found).
 */
export function isTransient(rules: ClientRules, status: number, body?: string): boolean {
  const t = rules.transient;
  if (!t.statuses.includes(status)) return false;
  const answers = t.answerCodes;
  return !answers?.on.includes(status) || !bodyCodes(body).some((c) => answers.codes.includes(c));
}

export function statusMatches(status: number, retryOn: ClientRules['retryOn']): boolean {
  return retryOn.some((r) => (r === '5xx' ? status >= 500 && status <= 599 : r === status));
}

/** Whether the request's mode retries this answer at all. */
export function retries(mode: RetryMode, rules: ClientRules, status: number, body?: string, retryAfter?: string, attempt = 0): boolean {
  if (mode === false) return false;
  if (mode === true) return statusMatches(status, rules.retryOn) || isTransient(rules, status, body);
  if (typeof mode === 'object' && mode.answer({ status, retryAfter, attempt })) return false;
  return isTransient(rules, status, body);
}

export type RetryDecision =
  /** The answer is the target's: the check judges it. */
  | { action: 'answer' }
  /** Retry, within the cap. */
  | { action: 'retry' }
  /** The cap is spent on refusals that say the target is unavailable: the check is unavailable, not failed. */
  | { action: 'unavailable' }
  /**
   * The cap is spent on a refusal the rules take as the target's answer when it persists (`answerWhenPersistent`):
   * ask the origin another request; answered normally, try this one once more (attempt maxRetries + 1), whose
   * answer then stands; else the target is unavailable.
   */
  | { action: 'confirm' };

/** A refusal that is the target's answer to the request when it persists on it while the origin answers others. */
export function answersWhenPersistent(rules: ClientRules, status: number): boolean {
  return rules.transient.answerWhenPersistent?.includes(status) ?? false;
}

/**
 * What to do after an answer, attempt 0 being the first request. Within the cap a retried answer is retried. Past it,
 * a transient refusal means the target is unavailable, unless the rules take it as the answer when it persists (the
 * feed's 503: every operation may answer it): then the origin is asked another request first (confirm), and after
 * that confirming try the refusal is the target's answer to this request. Any other status the rules retry (the same
 * 5xx every time) is the target's answer when the origin answers other requests normally, and unavailability when it
 * answers nothing else. With no retries allowed (maxRetries 0) nothing is tried again, so nothing is confirmed.
 */
export function decide(a: {
  mode: RetryMode;
  rules: ClientRules;
  status: number;
  body?: string;
  retryAfter?: string;
  attempt: number;
  maxRetries: number;
  /** The origin has answered some request with a status the rules do not retry. */
  originAnswers: boolean;
}): RetryDecision {
  if (!retries(a.mode, a.rules, a.status, a.body, a.retryAfter, a.attempt)) return { action: 'answer' };
  if (a.attempt < a.maxRetries) return { action: 'retry' };
  if (isTransient(a.rules, a.status, a.body)) {
    if (a.maxRetries === 0 || !((a.mode === 'persistent' && a.status >= 500) || answersWhenPersistent(a.rules, a.status))) return { action: 'unavailable' };
    return a.attempt === a.maxRetries ? { action: 'confirm' } : { action: 'answer' };
  }
  return a.originAnswers ? { action: 'answer' } : { action: 'unavailable' };
}

const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * Retry-After as milliseconds (RFC 9110 10.2.3): delay-seconds (digits only) or an IMF-fixdate. Anything else
 * ("5.5", "-5", "1 2 3", another date format) is undefined, so the caller backs off as if the header were absent.
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!IMF_FIXDATE.test(v)) return undefined;
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
