/**
 * The suite's HTTP client. It is a client of the services under test and keeps their client rules: it retries
 * only what the rules allow, waits Retry-After (or backs off with jitter), caps retries, counts every request
 * against a budget, never follows redirects (so a key never leaves the configured origin) and records every
 * exchange with secrets replaced by environment references.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { Agent, request as undiciRequest } from 'undici';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { ClientRules, Service } from './spec.js';
import { Redactor } from './redact.js';
import { decide, retryAfterMs, type RetryMode } from './retry-policy.js';
import { OriginScheduler, PAUSING_STATUSES, priority, type OriginActivity, type Priority } from './origins.js';
import { SUITE_NAME, SUITE_VERSION } from './version.js';
import { canonical } from './canonical.js';
import { createHash } from 'node:crypto';

export { statusMatches, isTransient, retryAfterMs, type RetryMode } from './retry-policy.js';

export interface Exchange {
  seq: number;
  check?: string;
  service?: Service;
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody?: string;
  status?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  bodyBytes?: number;
  truncated?: boolean;
  /** A JSON body longer than the recorded bound: the SHA-256 of its whole value, keys sorted (two answers' content compared). */
  contentDigest?: string;
  /**
   * A JSON body longer than the recorded bound, outlined (outline()): every scalar field outside lists as it was, each
   * list cut to its first and last entries. What a rule about a page's own fields (hasMore, its cursor, its last row) reads.
   */
  contentOutline?: string;
  /** A JSON body longer than the recorded bound: the length of each of its lists outside lists, by path (`items`, `page.rows`). */
  contentLengths?: Record<string, number>;
  /**
   * A JSON body longer than the recorded bound: each list of objects outside lists (by path) with every row cut to
   * its short scalar fields (ids, timestamps, flags, short strings: rowIndex()), when that fits the bound.
   */
  contentRows?: string;
  durationMs: number;
  startedAt: string;
  attempt: number;
  error?: string;
  billable?: boolean;
}

export interface HttpClientOptions {
  /** Per-request bound for the whole exchange: connect, headers and body. */
  timeoutMs: number;
  /** A response body larger than this is not read further; the request fails. */
  maxBodyBytes: number;
  /** Requests the client may send in total (attempts and retries included). */
  budget: number;
  /** Retries after the first attempt, for statuses the rules allow. */
  maxRetries: number;
  /** A Retry-After longer than this is not waited out: the target counts as unavailable. */
  maxRetryWaitMs: number;
  /** After this many consecutive requests to one origin end unavailable or unanswered, stop contacting it. */
  breakerAfter?: number;
  /**
   * Most requests in flight per origin at once (default: no bound). A request waits for a free slot, and for any
   * pause the origin asked for, before it is admitted and counted.
   */
  concurrency?: number;
  /** Origins a request may go to (scheme://host:port). Anything else is refused before sending. */
  allowedOrigins: string[];
  redactor: Redactor;
  record?: (exchange: Exchange) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /**
   * The name of a BroadcastChannel on which the client tells what it is doing (its activity()) when asked: the
   * conformance command's console prints it in its progress lines (src/outputs/console.ts).
   */
  progressChannel?: string;
}

/** What the client is doing at a moment: requests sent, and each origin's share (see OriginActivity). */
export interface ClientActivity {
  sent: number;
  budget: number;
  origins: (OriginActivity & { /** The breaker's reason, once it no longer contacts the origin. */ given?: string })[];
}

/** The question the console asks on the progress channel; the client answers with its ClientActivity. */
export const ACTIVITY_QUESTION = 'activity?';

/** The progress channel of a run: one per report directory, so that two runs in one process never mix. */
export function progressChannelName(reportDir: string): string {
  return `service-conformance-progress:${path.resolve(reportDir)}`;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON with content-type application/json. */
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  /** The service's client rules; without them (or with retry: false) nothing is retried. */
  rules?: ClientRules;
  /** Which answers are retried (default true: what the rules retry); see RetryMode. */
  retry?: RetryMode;
  /** A billable generation call (counted separately; never retried beyond the cap). */
  billable?: boolean;
  service?: Service;
  /**
   * The request follows a cursor the target has just given (the next page of a walk): like a retry, it goes before
   * requests not sent yet, so that the time between a cursor and its use is one request, not the queue of every
   * concurrent check (a deployment whose cursors expire on a timer must fail the check about that rule, not every
   * check that walks pages).
   */
  continuation?: boolean;
}

/** One attempt of an exchange the client does not make itself (HttpClient.retried), and what the target answered. */
export interface ExternalAttempt<T> {
  result: T;
  /** The answer the retry policy judges; absent when there is none to judge (an opened WebSocket, no answer at all). */
  answer?: { status: number; retryAfter?: string; body?: string };
  /** Why there was no answer (the connection failed, nothing came in time): the breaker counts it. */
  unanswered?: string;
}

export interface HttpResponse {
  url: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  bodyBytes: number;
  /** The exchanges (attempts) that produced this response. */
  attempts: Exchange[];
  json<T = unknown>(): T;
  header(name: string): string | undefined;
}

/** The target did not answer in time. A conformance failure of the check that asked. */
export class NoResponseError extends Error {
  override name = 'NoResponseError';
}
/** The target kept answering 429/503 (or asked for a wait beyond the cap). Not a conformance failure. */
export class TargetUnavailableError extends Error {
  override name = 'TargetUnavailableError';
  constructor(
    message: string,
    /** The status the target kept answering, when it answered at all. */
    readonly status?: number,
  ) {
    super(message);
  }
}
/** The run's request budget is spent. Not a conformance failure. */
export class BudgetExhaustedError extends Error {
  override name = 'BudgetExhaustedError';
}
/** The suite refused to send a request (credentials would leave the configured origins). */
export class OriginRefusedError extends Error {
  override name = 'OriginRefusedError';
}
export class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
}
export class TransportError extends Error {
  override name = 'TransportError';
}
/** The response started but its body broke off: a stream that cannot be resumed, only restarted. */
export class BrokenBodyError extends TransportError {
  override name = 'BrokenBodyError';
  constructor(
    message: string,
    readonly exchange: Exchange,
  ) {
    super(message);
  }
}

/**
 * The connection closed before any byte of an answer (a reset, the other side closing): on a connection kept alive,
 * the server closing it idle as the request went out. An idempotent request may then be sent again at once on a new
 * connection (RFC 9112 9.3.1), as HTTP clients do.
 */
export class ClosedBeforeAnswerError extends TransportError {
  override name = 'ClosedBeforeAnswerError';
  constructor(
    message: string,
    readonly exchange: Exchange,
  ) {
    super(message);
  }
}
/** The codes of a connection that closed under a request (undici's "other side closed" among them). */
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
const IDEMPOTENT = new Set(['GET', 'HEAD']);

/**
 * A transport failure as the retry loop tells them apart: a body that broke after `bytesRead` (BrokenBodyError), a
 * connection that closed before any answer (ClosedBeforeAnswerError), else the failure as classified.
 */
function brokenOrClosed(e: Error, err: unknown, bytesRead: number | undefined, exchange: Exchange): Error {
  if (!(e instanceof TransportError)) return e;
  if (bytesRead !== undefined) return new BrokenBodyError(`${e.message} (the body broke after ${bytesRead} bytes)`, exchange);
  const x = err as { code?: string; cause?: { code?: string } };
  const code = x.code ?? x.cause?.code;
  return code && CLOSED_CODES.has(code) ? new ClosedBeforeAnswerError(e.message, exchange) : e;
}

/** An answer that is not a refusal (below 500, not 429): the origin is answering. */
const answersNormally = (status: number): boolean => status < 500 && status !== 429;
/** The request headers that carry a gateway credential (the Authentication table's header forms). */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-vendorc-api-key'];

/** A GET confirm() may ask again: its URL, its service, and for one served with a credential, those headers. */
interface Confirmer {
  href: string;
  service?: Service;
  headers?: Record<string, string>;
}

/**
 * The GETs each origin answered, kept for confirm(): the latest few it answered normally (under every service's rules),
 * and the latest it served (2xx) to a request carrying a credential header, with those headers (held in memory only,
 * as every request's are: the confirmation of a request in RetryMode 'persistent'). Never a URL with a key in its
 * query (a confirmation without the credential would send the key again where no header carries it).
 */
class Confirmers {
  private readonly answered = new Map<string, Confirmer[]>();
  private readonly served = new Map<string, Confirmer>();

  note(url: URL, status: number, service: Service | undefined, headers: Record<string, string>): void {
    if (url.searchParams.has('key') || !answersNormally(status)) return;
    const kept = (this.answered.get(url.origin) ?? []).filter((a) => a.href !== url.href);
    this.answered.set(url.origin, [{ href: url.href, service }, ...kept].slice(0, 4));
    const credential = Object.fromEntries(Object.entries(headers).filter(([k]) => CREDENTIAL_HEADERS.includes(k.toLowerCase())));
    if (status < 300 && Object.keys(credential).length) this.served.set(url.origin, { href: url.href, service, headers: credential });
  }

  /** The other request for `url`: the one served with a credential (`served`), or the latest other answered normally. */
  pick(url: URL, served: boolean): Confirmer | undefined {
    return served ? this.served.get(url.origin) : this.answered.get(url.origin)?.find((a) => a.href !== url.href);
  }
}

function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Request and response bodies are recorded up to this many characters. */
export const RECORDED_BODY_CHARS = 16_384;

/** The bound of a long body's row index (contentRows): a page of 100 items' ids, times and flags fit. */
const ROW_INDEX_CHARS = 32_768;
/** The longest string a row index keeps (an id, a timestamp, a category; not a title or a summary). */
const ROW_INDEX_STRING = 64;

/** Each list of a JSON value that is not inside a list, by its dotted path (the top level's: ''). */
function listsByPath(value: unknown, at = '', out: Record<string, unknown[]> = Object.create(null) as Record<string, unknown[]>): Record<string, unknown[]> {
  if (Array.isArray(value)) out[at] = value;
  else if (typeof value === 'object' && value !== null)
    for (const k of Object.keys(value)) listsByPath((value as Record<string, unknown>)[k], at ? `${at}.${k}` : k, out);
  return out;
}

/** A JSON value's short scalars: numbers, booleans, null and strings of at most ROW_INDEX_STRING characters. */
const short = (v: unknown) => v === null || typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= ROW_INDEX_STRING);
const isRow = (r: unknown): r is Record<string, unknown> => typeof r === 'object' && r !== null && !Array.isArray(r);

/** A row's short scalars, and those of the objects it holds (a change's item, a row's links), `depth` levels down. */
function cutRow(r: Record<string, unknown>, depth: number): Record<string, unknown> {
  // No prototype: a "__proto__" key of the body is a field like any other.
  const o = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(r)) {
    const v = r[k];
    if (short(v)) o[k] = v;
    else if (depth > 0 && isRow(v)) o[k] = cutRow(v, depth - 1);
  }
  return o;
}

/**
 * Each list of objects of a JSON value that is not inside a list, by its dotted path, every row cut to its scalar
 * fields (numbers, booleans, null and strings of at most ROW_INDEX_STRING characters), its own and its objects'.
 */
export function rowIndex(value: unknown): Record<string, Record<string, unknown>[]> {
  const out = Object.create(null) as Record<string, Record<string, unknown>[]>;
  const lists = listsByPath(value);
  for (const at of Object.keys(lists)) {
    const list = lists[at]!;
    if (list.every(isRow)) out[at] = list.map((r) => cutRow(r, 1));
  }
  return out;
}

/** The length of each list of a JSON value that is not inside a list, by its dotted path (the top level's: ''). */
export function listLengths(value: unknown): Record<string, number> {
  return Object.fromEntries(Object.entries(listsByPath(value)).map(([at, list]) => [at, list.length]));
}

/** The digest of a JSON value's content (keys sorted): what the record keeps of a body longer than its bound. */
export function contentDigest(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('hex').slice(0, 32);
}

/** A JSON value with each list cut to its first and last entries (themselves outlined), everything else kept. */
export function outline(value: unknown): unknown {
  if (Array.isArray(value)) return (value.length > 2 ? [value[0], value.at(-1)] : value).map(outline);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, outline(v)]));
}

/**
 * A response body as the record keeps it: redacted, up to the bound, and when it is longer and JSON the digest of its
 * whole value (keys sorted), which the run-wide checks compare where the text was cut.
 */
function recordedBody(
  red: Redactor,
  text: string,
): Pick<Exchange, 'responseBody' | 'truncated' | 'contentDigest' | 'contentOutline' | 'contentLengths' | 'contentRows'> {
  const out: Pick<Exchange, 'responseBody' | 'truncated' | 'contentDigest' | 'contentOutline' | 'contentLengths' | 'contentRows'> = {
    responseBody: red.redact(text.slice(0, RECORDED_BODY_CHARS)),
  };
  if (text.length <= RECORDED_BODY_CHARS) return out;
  out.truncated = true;
  try {
    const value: unknown = JSON.parse(text);
    out.contentDigest = contentDigest(value);
    const outlined = red.redact(JSON.stringify(outline(value)));
    if (outlined.length <= RECORDED_BODY_CHARS) out.contentOutline = outlined;
    out.contentLengths = listLengths(value);
    const rows = red.redact(JSON.stringify(rowIndex(value)));
    if (rows.length <= ROW_INDEX_CHARS) out.contentRows = rows;
  } catch {
    // Not JSON: nothing to compare by content.
  }
  return out;
}

/**
 * The User-Agent of every request the suite sends itself (its own requests, the raw reader's, the WebSocket
 * handshake), so that an operator reading the access log knows whose they are. An official client's requests keep
 * that client's own User-Agent.
 */
export const USER_AGENT = `${SUITE_NAME}/${SUITE_VERSION}`;

/**
 * What the suite asks for, as the clients of a deployment do: a gzip-compressed body where the target (or a proxy in
 * front of it) compresses. Every request asks alike, so every response is the same representation and ETags compare.
 */
export const ACCEPT_ENCODING = 'gzip';

/** The body decoded from its Content-Encoding (RFC 9110 8.4), at most `max` bytes decoded. */
export function decodeBody(raw: Buffer, contentEncoding: string | undefined, max: number): Buffer {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  // A HEAD or a 304 has no body to decode, whatever coding its representation has.
  if (raw.length === 0) return raw;
  let out = raw;
  try {
    // Codings are listed in the order they were applied: undo them from the last.
    for (const coding of codings.reverse()) {
      if (coding === 'gzip' || coding === 'x-gzip') out = gunzipSync(out, { maxOutputLength: max });
      else if (coding === 'deflate') out = inflateSync(out, { maxOutputLength: max });
      else if (coding === 'br') out = brotliDecompressSync(out, { maxOutputLength: max });
      else throw new TransportError(`the body has a content-coding the suite did not ask for and cannot decode: ${coding}`);
    }
  } catch (e) {
    if (e instanceof TransportError) throw e;
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError)
      throw new ResponseTooLargeError(`response body exceeds ${max} bytes once decoded; stopped reading`);
    throw new TransportError(`the ${codings.join(', ')} body could not be decoded: ${(e as Error).message}`);
  }
  return out;
}

/**
 * Wait until the wall clock has advanced by at least `ms`. A timer may fire a millisecond before Date.now() says
 * the time has come; a Retry-After is waited out in full.
 */
export async function sleepAtLeast(ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (let left = ms; left > 0; left = end - Date.now()) await new Promise((r) => setTimeout(r, left));
}

/** The check a request belongs to, carried through its async calls (checks run concurrently). */
export interface CheckScope {
  check: string;
  /** Receives each exchange made on behalf of the check (after the client's own record). */
  record(exchange: Exchange): void;
}
const checkScopes = new AsyncLocalStorage<CheckScope>();

/** Run `f` with every exchange it causes attributed to `scope`. */
export function inCheck<T>(scope: CheckScope, f: () => Promise<T>): Promise<T> {
  return checkScopes.run(scope, f);
}

/** Attribute exchanges an earlier request made (an answer shared between checks) to the check running now, if any. */
export function attributeHere(...responses: { attempts: Exchange[] }[]): void {
  const scope = checkScopes.getStore();
  if (scope) for (const r of responses) for (const ex of r.attempts) scope.record(ex);
}

export class HttpClient {
  readonly opts: HttpClientOptions;
  private readonly agent: Agent;
  private seq = 0;
  sent = 0;
  /** Generation requests the target answered 2xx: the calls that cost. */
  billable = 0;
  /** Each origin's slots, pauses and slow start. */
  private readonly origins: OriginScheduler;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  /** Consecutive unavailable/unanswered outcomes per origin, and origins the breaker has given up on. */
  private readonly streak = new Map<string, number>();
  private readonly tripped = new Map<string, string>();
  /** Origins that have answered a request normally (below 500, not 429): the target is up. */
  private readonly answered = new Set<string>();
  private progress?: BroadcastChannel;
  /** The GETs confirm() may ask again. */
  private readonly confirmers = new Confirmers();

  constructor(opts: HttpClientOptions) {
    this.opts = opts;
    this.agent = new Agent({ connect: { timeout: opts.timeoutMs }, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs });
    this.sleep = opts.sleep ?? sleepAtLeast;
    this.origins = new OriginScheduler({
      limit: opts.concurrency ?? Number.POSITIVE_INFINITY,
      maxRetryWaitMs: opts.maxRetryWaitMs,
      sleep: this.sleep,
      unavailable: (m) => new TargetUnavailableError(m),
    });
    this.random = opts.random ?? Math.random;
    if (opts.progressChannel) {
      const channel = new BroadcastChannel(opts.progressChannel);
      // Answering never keeps the process alive.
      channel.unref();
      channel.onmessage = (e) => {
        if ((e as MessageEvent).data === ACTIVITY_QUESTION) channel.postMessage(this.activity());
      };
      this.progress = channel;
    }
  }

  /** What the client is doing now: requests sent, and per origin those in flight and waiting, its pause, the breaker. */
  activity(now = Date.now()): ClientActivity {
    const origins = this.origins.activity(now).map((a) => {
      const given = this.tripped.get(a.origin);
      return given === undefined ? a : { ...a, given };
    });
    return { sent: this.sent, budget: this.opts.budget, origins };
  }

  /** The most requests that were in flight at once to each origin. */
  peakInFlight(): Record<string, number> {
    return this.origins.peakInFlight();
  }

  /** Every pause an origin asked for (epoch ms), in the order they were set: the run's record of politeness. */
  get pauses(): OriginScheduler['pauses'] {
    return this.origins.pauses;
  }

  /** An answer: the origin is up when it answers below 500 and not 429; its scheduler learns from every answer. */
  private noteAnswer(origin: string, status: number | undefined, retryAfter: string | undefined, where: string, epoch: number): void {
    if (status !== undefined && answersNormally(status)) this.answered.add(origin);
    this.origins.noteAnswer(origin, status, retryAfter, where, epoch);
  }

  async close(): Promise<void> {
    this.progress?.close();
    await this.agent.close();
  }

  private refuseForeign(origin: string): void {
    if (!this.opts.allowedOrigins.includes(origin)) {
      throw new OriginRefusedError(
        `refused to send a request to ${origin}: only the configured targets (${this.opts.allowedOrigins.join(', ')}) are contacted`,
      );
    }
  }

  /**
   * Wait for the origin's pause to pass and for a free slot, then admit the request: the origin is allowed and the
   * budget has room. The request is counted here, before it is sent, so that concurrent requests never overspend
   * the budget. `waited`: the end of a pause the caller has already waited out. Returns the function that frees
   * the slot, and the origin's refusal count at admission (for noteAnswer).
   */
  private async acquire(url: URL, waited = 0, kind: Priority = 'new'): Promise<{ release: () => void; epoch: number }> {
    const origin = url.origin;
    const g = this.origins.gate(origin);
    try {
      this.refuseForeign(origin);
      await this.origins.queuedWhile(g, () => this.origins.slot(g, origin, waited, kind));
    } finally {
      if (kind !== 'new' && --g.pending[kind] === 0) this.origins.wakeNext(g);
    }
    // The slot is taken (slot() counted it in flight). A request that waited for it while the breaker gave up on the
    // origin is not sent; the budget is checked and the request counted at once.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      // The slot is given up after the caller has seen the answer: a request it retries is marked pending
      // (afterAnswer) before any waiting request looks for the slot, so the retry goes first.
      this.origins.release(g);
    };
    const given = this.tripped.get(origin);
    if (given) {
      release();
      throw new TargetUnavailableError(`target unavailable: ${origin} is no longer contacted in this run (${given})`);
    }
    if (this.sent >= this.opts.budget) {
      release();
      throw new BudgetExhaustedError(`request budget of ${this.opts.budget} spent; raise it with --budget if the target allows`);
    }
    this.sent++;
    g.peak = Math.max(g.peak, g.inFlight);
    return { release, epoch: g.refusals };
  }

  /**
   * For exchanges the client does not make itself (a WebSocket handshake, an SDK's fetch): admit them against the
   * origin list and the budget, count them, and return a function that records the outcome, redacted and truncated
   * as the client's own exchanges are.
   */
  async external(
    url: URL,
    method: string,
    requestHeaders: Record<string, string>,
    service?: Service,
    retry: { attempt: number; waited: number; continuation?: boolean } = { attempt: 0, waited: 0 },
  ): Promise<(outcome: Partial<Exchange>) => void> {
    const httpUrl = new URL(url.href.replace(/^ws/, 'http'));
    const kind = priority(retry.attempt, retry.continuation);
    if (kind === 'continuation') this.origins.gate(httpUrl.origin).pending.continuation++;
    const { release, epoch } = await this.acquire(httpUrl, retry.waited, kind);
    const scope = checkScopes.getStore();
    const started = Date.now();
    const red = this.opts.redactor;
    return (outcome) => {
      release();
      if (outcome.billable && outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300) this.billable++;
      else delete outcome.billable;
      this.noteAnswer(httpUrl.origin, outcome.status, outcome.responseHeaders?.['retry-after'], `${method} ${red.redact(url.href)}`, epoch);
      this.recordExchange(scope, {
        seq: ++this.seq,
        check: scope?.check,
        service,
        method,
        url: red.redact(url.href),
        requestHeaders: red.redactRecord(requestHeaders),
        durationMs: Date.now() - started,
        startedAt: new Date(started).toISOString(),
        attempt: retry.attempt,
        ...outcome,
        ...(outcome.requestBody !== undefined ? { requestBody: red.redact(outcome.requestBody.slice(0, RECORDED_BODY_CHARS)) } : {}),
        ...(outcome.responseBody !== undefined ? recordedBody(red, outcome.responseBody) : {}),
        ...(outcome.responseHeaders ? { responseHeaders: red.redactRecord(outcome.responseHeaders) } : {}),
        ...(outcome.error ? { error: red.redact(outcome.error) } : {}),
      });
    };
  }

  private recordExchange(scope: CheckScope | undefined, exchange: Exchange): void {
    this.opts.record?.(exchange);
    scope?.record(exchange);
  }

  buildUrl(base: string, query?: SendOptions['query']): URL {
    const url = new URL(base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.append(k, String(v));
    return url;
  }

  async send(target: string, o: SendOptions = {}): Promise<HttpResponse> {
    const url = this.buildUrl(target, o.query);
    this.refuseTripped(url.origin);
    try {
      const res = await this.attempts(url, o);
      this.settle(url.origin);
      return res;
    } catch (err) {
      this.settle(url.origin, err);
      throw err;
    }
  }

  /** A request to an origin the breaker has given up on is not sent: the target is unavailable, with the reason. */
  private refuseTripped(origin: string): void {
    const given = this.tripped.get(origin);
    if (given) throw new TargetUnavailableError(`target unavailable: ${origin} is no longer contacted in this run (${given})`);
  }

  /**
   * The breaker: how a request ended, whichever way it was sent (the client's own requests, and through retried()
   * the raw reader's, the WebSocket handshake and an official client's fetch). A target that keeps refusing
   * (429/503), not answering, or breaking connections is unavailable alike: after `breakerAfter` (3) such requests
   * in a row the origin is no longer contacted, and every later request to it, on every path, ends unavailable at once.
   * A request the breaker stopped before it was sent (it waited for a slot while the breaker tripped) says nothing
   * new about the target: it neither counts nor replaces the reason the breaker gave.
   */
  private settle(origin: string, failure?: unknown): void {
    if (this.tripped.has(origin)) return;
    if (failure === undefined) {
      this.streak.set(origin, 0);
      return;
    }
    if (!(failure instanceof TargetUnavailableError || failure instanceof NoResponseError || failure instanceof TransportError)) return;
    const n = (this.streak.get(origin) ?? 0) + 1;
    this.streak.set(origin, n);
    if (n >= (this.opts.breakerAfter ?? 3)) this.tripped.set(origin, `${n} requests in a row: ${failure.message}`);
  }

  /**
   * The retry loop of an exchange the client does not make itself (the raw reader, the WebSocket handshake, an
   * official client's fetch), the same as its own requests': `attempt` makes one attempt (admitted through
   * external(), which refuses it once the breaker has given up on the origin) and says what the target answered;
   * after each answer the retry policy decides (afterAnswer), and the breaker counts how the exchange ended. An
   * attempt that throws ends the loop with its error. Returns the last attempt's result, and, when the target
   * counts as unavailable (the cap spent on refusals), why: the caller throws it, or (an official client's fetch,
   * whose client must see the last answer) hands it to the check another way.
   */
  async retried<T>(
    url: URL,
    method: string,
    o: { rules: ClientRules; mode?: RetryMode },
    attempt: (retry: { attempt: number; waited: number }) => Promise<ExternalAttempt<T>>,
  ): Promise<{ result: T; unavailable?: TargetUnavailableError }> {
    const httpUrl = new URL(url.href.replace(/^ws/, 'http'));
    const origin = httpUrl.origin;
    let waited = 0;
    for (let n = 0; ; n++) {
      let r: ExternalAttempt<T>;
      try {
        r = await attempt({ attempt: n, waited });
      } catch (err) {
        this.settle(origin, err);
        throw err;
      }
      if (!r.answer) {
        this.settle(origin, r.unanswered === undefined ? undefined : new TransportError(r.unanswered));
        return { result: r.result };
      }
      const next = await this.afterAnswer(httpUrl, method, r.answer, n, o.rules, o.mode ?? true);
      if (next.action === 'retry') {
        waited = next.waited;
        continue;
      }
      const unavailable = next.action === 'unavailable' ? new TargetUnavailableError(next.message, r.answer.status) : undefined;
      this.settle(origin, unavailable);
      return { result: r.result, unavailable };
    }
  }

  private async attempts(url: URL, o: SendOptions): Promise<HttpResponse> {
    const method = (o.method ?? 'GET').toUpperCase();
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'accept-encoding')) headers['accept-encoding'] = ACCEPT_ENCODING;
    let body: string | undefined;
    if (typeof o.body === 'string') body = o.body;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'user-agent')) headers['user-agent'] = USER_AGENT;
    const attempts: Exchange[] = [];
    const rules = o.retry === false ? undefined : o.rules;
    let waited = 0;
    let reopened = false;
    for (let attempt = 0; ; attempt++) {
      let res: RawResult;
      try {
        res = await this.once(url, method, headers, body, attempt, o, waited);
      } catch (err) {
        // A GET or HEAD whose connection closed before any answer is sent again at once, on a new connection, once.
        if (err instanceof ClosedBeforeAnswerError && IDEMPOTENT.has(method) && rules && !reopened) {
          reopened = true;
          attempts.push(err.exchange);
          continue;
        }
        // A body that broke mid-transfer is restarted from the beginning (never resumed with Range), within the cap.
        if (!(err instanceof BrokenBodyError) || rules === undefined || attempt >= this.opts.maxRetries) throw err;
        attempts.push(err.exchange);
        const g = this.origins.gate(url.origin);
        g.pending.retry++;
        await this.origins.queuedWhile(g, () => this.sleep(this.retryDelay(undefined, attempt, rules)));
        continue;
      }
      attempts.push(res.exchange);
      const next = rules
        ? await this.afterAnswer(url, method, { status: res.status, retryAfter: res.headers['retry-after'], body: res.text }, attempt, rules, o.retry ?? true)
        : ({ action: 'answer' } as const);
      if (next.action === 'answer') return this.response(url, res, attempts);
      if (next.action === 'unavailable') throw new TargetUnavailableError(next.message, res.status);
      waited = next.waited;
    }
  }

  /**
   * The client's retry policy after an answer, the same for every way the suite sends: its own requests, the raw
   * reader's, the WebSocket handshake and an official client's fetch. The decision is retry-policy.ts's (`decide`);
   * here it is carried out. To retry, it waits, then returns the end of the pause it waited out (for the next
   * admission, which then does not wait for it twice):
   * - Retry-After when given (noteAnswer has already paused the whole origin for it);
   * - else exponential backoff; for a 429 or 503 the whole origin backs off, exponentially in the number of such
   *   answers in a row from any request to it, so that concurrent checks do not keep a rate-limited target busy
   *   (and its window full) while this one waits.
   * The next request to the origin is then a retry, which goes before requests not sent yet. When the cap is spent,
   * or the wait is longer than --max-retry-wait, the target is unavailable, with the reason.
   */
  async afterAnswer(
    url: URL,
    method: string,
    answer: { status: number; retryAfter?: string; body?: string },
    attempt: number,
    rules: ClientRules,
    mode: RetryMode = true,
  ): Promise<{ action: 'answer' } | { action: 'retry'; waited: number } | { action: 'unavailable'; message: string }> {
    const { status, retryAfter } = answer;
    const decision = decide({
      mode,
      rules,
      status,
      body: answer.body,
      retryAfter,
      attempt,
      maxRetries: this.opts.maxRetries,
      originAnswers: this.answered.has(url.origin),
    });
    if (decision.action === 'answer') return decision;
    const where = `${method} ${this.opts.redactor.redact(url.href)}`;
    const gaveUp = `target unavailable: ${where} answered ${status} ${attempt + 1} time(s); gave up after ${this.opts.maxRetries} retr${this.opts.maxRetries === 1 ? 'y' : 'ies'}`;
    if (decision.action === 'unavailable') return { action: 'unavailable', message: gaveUp };
    if (decision.action === 'confirm') return this.confirm(url, gaveUp, mode === 'persistent');
    const g = this.origins.gate(url.origin);
    let wait = this.retryDelay(retryAfter, attempt, rules);
    if (PAUSING_STATUSES.includes(status) && retryAfterMs(retryAfter) === undefined) {
      wait = Math.max(wait, this.retryDelay(undefined, g.backoffLevel++, rules));
      this.origins.pause(url.origin, wait, `${where} answered ${status} without Retry-After (the origin backs off ${wait} ms)`);
    }
    if (wait > this.opts.maxRetryWaitMs) {
      return {
        action: 'unavailable',
        message: `target unavailable: ${where} answered ${status} with Retry-After ${retryAfter}, longer than the ${this.opts.maxRetryWaitMs / 1000} s the suite waits`,
      };
    }
    // The pause this answer set is waited out here; one that others set later (longer) is waited for on admission.
    const own = g.pausedUntil;
    g.pending.retry++;
    await this.origins.queuedWhile(g, () => this.sleep(wait));
    return { action: 'retry', waited: own };
  }

  /**
   * Past the cap on a refusal the rules take as the target's answer when it persists (the feed's 503): the same
   * refusal on every try is an outage, or the target's answer to this one request. The origin is asked another
   * request: the latest other GET it answered normally (under rules that have such refusals). Answered normally
   * again, the origin is up and this request is tried once more, and whatever it answers then stands (the decision
   * after a confirming try is the answer); refused or not answered, the target is unavailable. The other request
   * goes when the origin's pause has passed, before requests not sent yet; the confirming try right after it.
   */
  private async confirm(url: URL, gaveUp: string, served = false): Promise<{ action: 'retry'; waited: number } | { action: 'unavailable'; message: string }> {
    // `served` (RetryMode 'persistent'): the other request is one the origin served with a credential, asked again with
    // it, and only a 2xx shows the origin up (a 401 may come from an access layer in front of a service that is down).
    const other = this.confirmers.pick(url, served);
    if (!other)
      return {
        action: 'unavailable',
        message: `${gaveUp}, and it has ${served ? 'served no request with a credential' : 'answered no other request normally'}`,
      };
    let seen: string;
    try {
      const headers = { 'accept-encoding': ACCEPT_ENCODING, 'user-agent': USER_AGENT, ...other.headers };
      const r = await this.once(new URL(other.href), 'GET', headers, undefined, 0, { service: other.service, continuation: true });
      if (served ? r.status >= 200 && r.status < 300 : answersNormally(r.status)) {
        const g = this.origins.gate(url.origin);
        g.pending.retry++;
        return { action: 'retry', waited: g.pausedUntil };
      }
      seen = `answered ${r.status}`;
    } catch (e) {
      // The breaker gave up on the origin meanwhile: its reason says it all.
      if (e instanceof TargetUnavailableError) return { action: 'unavailable', message: e.message };
      seen = `got no answer (${(e as Error).message})`;
    }
    return { action: 'unavailable', message: `${gaveUp}; GET ${this.opts.redactor.redact(other.href)}, asked meanwhile, ${seen}` };
  }

  /** The wait before retry number attempt+1: Retry-After when given, else exponential backoff with full jitter. */
  retryDelay(retryAfter: string | undefined, attempt: number, rules: ClientRules): number {
    const ra = retryAfterMs(retryAfter);
    if (ra !== undefined) return ra;
    const b = rules.backoff ?? { baseMs: 1000, maxMs: 8000, jitter: 'equal' as const };
    const ceiling = Math.min(b.maxMs, b.baseMs * 2 ** attempt);
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  private response(url: URL, r: RawResult, attempts: Exchange[]): HttpResponse {
    return {
      url: url.href,
      status: r.status,
      headers: r.headers,
      body: r.text,
      bodyBytes: r.bytes,
      attempts,
      json<T>(): T {
        return JSON.parse(r.text) as T;
      },
      header(name: string) {
        return r.headers[name.toLowerCase()];
      },
    };
  }

  private async once(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    attempt: number,
    o: SendOptions,
    waited = 0,
  ): Promise<RawResult> {
    // Every attempt after the first is a retry: it goes before requests not sent yet, as a continuation does (its
    // place is kept from now, as a retry's is from when it was decided).
    const kind = priority(attempt, o.continuation);
    if (kind === 'continuation') this.origins.gate(url.origin).pending.continuation++;
    const { release, epoch } = await this.acquire(url, waited, kind);
    const scope = checkScopes.getStore();
    const started = Date.now();
    const red = this.opts.redactor;
    const exchange: Exchange = {
      seq: ++this.seq,
      check: scope?.check,
      service: o.service,
      method,
      url: red.redact(url.href),
      requestHeaders: red.redactRecord(headers),
      requestBody: body === undefined ? undefined : red.redact(body.slice(0, RECORDED_BODY_CHARS)),
      durationMs: 0,
      startedAt: new Date(started).toISOString(),
      attempt,
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.opts.timeoutMs);
    let midBody = false;
    const progress = { bytes: 0 };
    try {
      const res = await undiciRequest(url, { method, headers, body, dispatcher: this.agent, signal: controller.signal });
      midBody = true;
      exchange.status = res.statusCode;
      exchange.responseHeaders = red.redactRecord(flattenHeaders(res.headers));
      const raw = await readRawBody(res, this.opts.maxBodyBytes, progress);
      const rh = flattenHeaders(res.headers);
      const decoded = decodeBody(raw, rh['content-encoding'], this.opts.maxBodyBytes);
      const text = decoded.toString('utf8');
      const bytes = decoded.length;
      Object.assign(exchange, {
        status: res.statusCode,
        responseHeaders: red.redactRecord(rh),
        bodyBytes: bytes,
        ...recordedBody(red, text),
      });
      if (o.billable && res.statusCode >= 200 && res.statusCode < 300) {
        this.billable++;
        exchange.billable = true;
      }
      this.noteAnswer(url.origin, res.statusCode, rh['retry-after'], `${method} ${red.redact(url.href)}`, epoch);
      if (method === 'GET') this.confirmers.note(url, res.statusCode, o.service, headers);
      return { status: res.statusCode, headers: rh, text, bytes, exchange };
    } catch (err) {
      const e = this.classify(err, controller.signal.aborted, url, method);
      exchange.error = red.redact(e.message);
      throw brokenOrClosed(e, err, midBody ? progress.bytes : undefined, exchange);
    } finally {
      clearTimeout(timer);
      release();
      exchange.durationMs = Date.now() - started;
      this.recordExchange(scope, exchange);
    }
  }

  private classify(err: unknown, aborted: boolean, url: URL, method: string): Error {
    const red = this.opts.redactor;
    if (err instanceof ResponseTooLargeError) return err;
    const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
    const code = e.code ?? e.cause?.code;
    const where = `${method} ${red.redact(url.href)}`;
    if (aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new NoResponseError(`no response within ${this.opts.timeoutMs / 1000} s: ${where}`);
    }
    return new TransportError(`${where} failed: ${red.redact(String(code ?? e.message ?? err))}${e.cause?.message ? ` (${red.redact(e.cause.message)})` : ''}`);
  }
}

interface RawResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  bytes: number;
  exchange: Exchange;
}

/** The raw bytes of a response body, read up to a bound; `progress` counts them as they come (for a body that breaks). */
export async function readRawBody(res: Awaited<ReturnType<typeof undiciRequest>>, max: number, progress: { bytes: number }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      progress.bytes += chunk.length;
      if (progress.bytes > max) {
        res.body.destroy();
        throw new ResponseTooLargeError(`response body exceeds ${max} bytes; stopped reading`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    // A 304 ends at its header section (RFC 9112 6.3) and may carry the Content-Length a 200 would have had
    // (RFC 9110 8.6). undici 7 reports that as a length mismatch; the response is complete and empty.
    const code = (err as { code?: string }).code;
    if (!(res.statusCode === 304 && progress.bytes === 0 && code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH')) throw err;
  }
  return Buffer.concat(chunks);
}
