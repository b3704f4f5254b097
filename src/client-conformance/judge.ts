/**
 * The client rules of the catalogue, judged on the recorded traffic of one client run. Each judge is one small
 * function named by the check id; it returns passed / failed / not applicable / not exercised, with the exchanges
 * that show it. A rule about an endpoint or a feature the client never used is not applicable to it ("never
 * requested a story": it has not guessed a story id either). A rule about a feature it did use, whose scenario
 * still could not provoke it, is not exercised: never "passed". A SHOULD rule that is not met is a warning.
 */
import { field, requirement, strongestLevel, type Level, type Profile, type Service } from '../spec.js';
import type { ObservedExchange } from './observer.js';
import { feedRequestKey } from './requests.js';
import { callOf, gatewayFamily, PARTIAL_TEXT } from './scenarios.js';

export type RuleVerdict = 'passed' | 'failed' | 'warning' | 'not applicable' | 'not exercised';

export interface RuleResult {
  id: string;
  title: string;
  service: Service;
  requirements: string[];
  level: Level;
  verdict: RuleVerdict;
  message: string;
  /** Which reading of the document, or what was seen, where that matters. */
  observations: Record<string, string>;
  /** Sequence numbers of the exchanges that show the verdict. */
  evidence: number[];
}

export interface JudgeContext {
  /** Retries of one failing call beyond this count as uncapped. */
  retryCeiling: number;
  /** The command was still running when the run's time bound stopped it. */
  commandStopped: boolean;
  names: {
    responsesPath: string;
    realtimePath: string;
    vendorCKeyHeader: string;
    realtimeProtocol: string;
    realtimeKeyProtocolPrefix: string;
    realtimeBetaProtocol: string;
  };
  /** The deployment profile's feed field names (the document does not show them). */
  feed: Profile['feed'];
}

/**
 * Timer granularity allowed when comparing a measured wait with a required one: a client's timer may fire up to
 * a millisecond early on the event loop's coarse clock; the gap is measured at the target, which can only make
 * it longer than the client's own wait.
 */
export const WAIT_TOLERANCE_MS = 2;

type Outcome = Pick<RuleResult, 'verdict' | 'message' | 'evidence'> & { observations?: Record<string, string> };
interface Judge {
  id: string;
  title: string;
  service: Service;
  requirements: string[];
  judge(xs: ObservedExchange[], ctx: JudgeContext): Outcome;
}

const seqs = (xs: ObservedExchange[]) => xs.map((x) => x.seq);
const describe = (x: ObservedExchange) => `#${x.seq} ${x.method} ${x.url} -> ${x.status ?? 'no answer'}${x.scenario ? ` [${x.scenario}]` : ''}`;
const list = (xs: string[], n = 3) => `${xs.slice(0, n).join('; ')}${xs.length > n ? `; and ${xs.length - n} more` : ''}`;
const notExercised = (message: string): Outcome => ({ verdict: 'not exercised', message, evidence: [] });
/** The client never used what the rule governs: the rule does not apply to it. */
const notApplicable = (message: string): Outcome => ({ verdict: 'not applicable', message, evidence: [] });
const pathOf = (x: ObservedExchange) => new URL(x.url, 'http://x.invalid').pathname;
const queryOf = (x: ObservedExchange) => new URL(x.url, 'http://x.invalid').searchParams;
const isRead = (x: ObservedExchange) => x.method === 'GET' || x.method === 'HEAD';
const answered = (x: ObservedExchange) => x.respondedAt !== undefined;

function jsonOf(x: ObservedExchange): unknown {
  try {
    return JSON.parse(x.responseBody ?? '');
  } catch {
    return undefined;
  }
}

function directive(cacheControl: string | undefined, name: string): number | undefined {
  const m = new RegExp(`(?:^|[,\\s])${name}=(\\d+)`).exec(cacheControl ?? '');
  return m ? Number(m[1]) : undefined;
}

/** Retry-After as seconds: delta-seconds or an HTTP-date (relative to the answer's Date header, else now). */
export function retryAfterSeconds(x: ObservedExchange): number | undefined {
  const v = x.responseHeaders?.['retry-after']?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const when = Date.parse(v);
  if (Number.isNaN(when)) return undefined;
  const date = Date.parse(x.responseHeaders?.date ?? '');
  return Math.max(0, (when - (Number.isNaN(date) ? Date.now() : date)) / 1000);
}

// ---------------------------------------------------------------- feed

/** The resource a feed request reads, however it is spelt: the normalised request without the paging parameter. */
const feedResource = (x: ObservedExchange, names?: Profile['feed']) => feedRequestKey(x, { names, paging: false });
/** The request itself, however it is spelt: the normalised request with its cursor or page token. */
const feedRequest = (x: ObservedExchange, names?: Profile['feed']) => feedRequestKey(x, { names });

/** The body an answer stands for: its own, or for a 304 the body of the last 200 to the same request. */
function bodyOf(x: ObservedExchange, xs: ObservedExchange[], names?: Profile['feed']): unknown {
  const full =
    x.status === 304 ? [...xs.slice(0, xs.indexOf(x))].reverse().find((y) => feedRequest(y, names) === feedRequest(x, names) && y.status === 200) : x;
  return full ? jsonOf(full) : undefined;
}

/** x fetches the next page that `prev` handed out (paging, not polling); a 304 stands for the body of the last 200. */
function continues(prev: ObservedExchange, x: ObservedExchange, xs: ObservedExchange[], names: Profile['feed']): boolean {
  const full =
    prev.status === 304
      ? [...xs.slice(0, xs.indexOf(prev))].reverse().find((y) => feedRequest(y, names) === feedRequest(prev, names) && y.status === 200)
      : prev;
  const body = full ? jsonOf(full) : undefined;
  if (body === undefined) return false;
  const q = queryOf(x);
  const p = pathOf(x);
  // Snapshot page fields are the document's own (hasMore, nextPage); the others come from the profile.
  if (p === '/api/v1/selected/snapshot') return q.get('page') !== null && q.get('page') === field(body, 'nextPage');
  if (p === '/api/v1/selected/changes') {
    const c = names.changes;
    return field(body, c.hasMore ?? 'hasMore') === true && q.get(c.cursorParam ?? 'cursor') === field(body, c.nextCursor ?? 'cursor');
  }
  return q.get('cursor') !== null && q.get('cursor') === field(body, names.items.nextCursor ?? 'page.nextCursor');
}

/** The feed's repeated reads: each request with the previous answer on the same resource (paging excluded). */
function polls(xs: ObservedExchange[], names: Profile['feed']): { prev: ObservedExchange; x: ObservedExchange }[] {
  const last = new Map<string, ObservedExchange>();
  const out: { prev: ObservedExchange; x: ObservedExchange }[] = [];
  for (const x of xs.filter(isRead)) {
    const key = feedResource(x, names);
    const prev = last.get(key);
    if (prev && answered(prev) && !continues(prev, x, xs, names)) out.push({ prev, x });
    last.set(key, x);
  }
  return out;
}

const etagMatches = (header: string | undefined, etag: string) =>
  header !== undefined && (header.trim() === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag.trim().replace(/^W\//, '')));

/** Every story id the API handed out before exchange index i: publicId values, story URLs, Location headers. */
function storyIdsSeen(xs: ObservedExchange[], names: Profile['feed']): Set<string> {
  const idKeys = new Set(['publicId', names.story.publicId, names.story.referenceId].filter((k): k is string => !!k).map((k) => k.split('.').pop()!));
  const ids = new Set<string>();
  const fromUrl = (s: string) => {
    const m = /\/stories\/([^/?#]+)\/?(?:[?#].*)?$/.exec(s);
    if (m) ids.add(decodeURIComponent(m[1]!));
  };
  const walk = (v: unknown, key?: string): void => {
    if (typeof v === 'string') {
      if (key !== undefined && idKeys.has(key)) ids.add(v);
      else fromUrl(v);
    } else if (Array.isArray(v)) v.forEach((e) => walk(e));
    else if (typeof v === 'object' && v !== null) for (const [k, e] of Object.entries(v)) walk(e, k);
  };
  for (const x of xs) {
    walk(jsonOf(x));
    if (x.responseHeaders?.location) fromUrl(x.responseHeaders.location);
  }
  return ids;
}

function datesSeen(xs: ObservedExchange[], names: Profile['feed']): Set<string> {
  const dateKeys = new Set(['date', names.dailies.date, names.daily.date].filter((k): k is string => !!k).map((k) => k.split('.').pop()!));
  const dates = new Set<string>();
  const walk = (v: unknown, key?: string): void => {
    if (typeof v === 'string') {
      if (key !== undefined && dateKeys.has(key)) dates.add(v);
      const m = /\/dailies\/(\d{4}-\d{2}-\d{2})(?:[?#].*)?$/.exec(v);
      if (m) dates.add(m[1]!);
    } else if (Array.isArray(v)) v.forEach((e) => walk(e));
    else if (typeof v === 'object' && v !== null) for (const [k, e] of Object.entries(v)) walk(e, k);
  };
  for (const x of xs) walk(jsonOf(x));
  return dates;
}

/** Waits after answers carrying Retry-After: the next request for the same call, and the gap. */
function retriesAfterRetryAfter(xs: ObservedExchange[], statuses: (s: number) => boolean, same: (a: ObservedExchange, b: ObservedExchange) => boolean) {
  const out: { answer: ObservedExchange; retry: ObservedExchange; seconds: number; gapMs: number }[] = [];
  xs.forEach((answer, i) => {
    if (answer.status === undefined || !statuses(answer.status) || answer.respondedAt === undefined) return;
    const seconds = retryAfterSeconds(answer);
    if (seconds === undefined) return;
    const retry = xs.slice(i + 1).find((y) => same(answer, y));
    if (retry) out.push({ answer, retry, seconds, gapMs: retry.receivedAt - answer.respondedAt });
  });
  return out;
}

const FEED_JUDGES: Judge[] = [
  {
    id: 'client-feed-retry-after',
    title: 'on 429 or 503 the client waits at least Retry-After seconds before retrying',
    service: 'feed',
    requirements: ['feed-client-retry-after'],
    judge(xs, ctx) {
      const waits = retriesAfterRetryAfter(
        xs,
        (s) => s === 429 || s === 503,
        (a, b) => feedRequest(a, ctx.feed) === feedRequest(b, ctx.feed),
      );
      if (waits.length === 0) {
        const limited = xs.filter((x) => x.status === 429 || x.status === 503);
        return notExercised(
          limited.length
            ? `the client was answered 429/503 (${list(limited.map(describe))}) but never repeated that request`
            : 'no 429 or 503 reached the client',
        );
      }
      const early = waits.filter((w) => w.gapMs < w.seconds * 1000 - WAIT_TOLERANCE_MS);
      const shown = waits.map((w) => `#${w.retry.seq} ${w.gapMs.toFixed(0)} ms after ${w.answer.status} with Retry-After: ${w.seconds}`);
      return early.length
        ? {
            verdict: 'failed',
            message: `retried before Retry-After had passed: ${list(early.map((w) => `#${w.retry.seq} ${w.retry.url} ${w.gapMs.toFixed(0)} ms after #${w.answer.seq} ${w.answer.status} with Retry-After: ${w.seconds}`))}`,
            evidence: early.flatMap((w) => [w.answer.seq, w.retry.seq]),
          }
        : { verdict: 'passed', message: `every retry waited out Retry-After: ${list(shown)}`, evidence: waits.flatMap((w) => [w.answer.seq, w.retry.seq]) };
    },
  },
  {
    id: 'client-feed-polling-interval',
    title: 'the client polls no faster than the s-maxage of the previous response',
    service: 'feed',
    requirements: ['feed-client-polling-interval'],
    judge(xs, ctx) {
      const judged = polls(xs, ctx.feed)
        .map(({ prev, x }) => ({ prev, x, s: directive(prev.responseHeaders?.['cache-control'], 's-maxage') }))
        .filter((p) => (p.prev.status === 200 || p.prev.status === 304) && p.s !== undefined);
      if (judged.length === 0) return notApplicable('the client never requested a resource again after a 200 or 304 that carried s-maxage: it does not poll');
      const fast = judged.filter((p) => p.x.receivedAt - p.prev.respondedAt! < p.s! * 1000 - WAIT_TOLERANCE_MS);
      const gap = (p: (typeof judged)[number]) =>
        `#${p.x.seq} ${p.x.url} ${(p.x.receivedAt - p.prev.respondedAt!).toFixed(0)} ms after #${p.prev.seq} (s-maxage=${p.s})`;
      return fast.length
        ? { verdict: 'failed', message: `polled faster than s-maxage: ${list(fast.map(gap))}`, evidence: fast.flatMap((p) => [p.prev.seq, p.x.seq]) }
        : {
            verdict: 'passed',
            message: `${judged.length} poll(s), each after s-maxage: ${list(judged.map(gap))}`,
            evidence: judged.flatMap((p) => [p.prev.seq, p.x.seq]),
          };
    },
  },
  {
    id: 'client-feed-if-none-match',
    title: 'the client sends If-None-Match with the last ETag it saw for the resource',
    service: 'feed',
    requirements: ['feed-client-if-none-match'],
    judge(xs, ctx) {
      const etag = new Map<string, string>();
      const judged: { x: ObservedExchange; e: string; ok: boolean }[] = [];
      for (const x of xs.filter(isRead)) {
        const e = etag.get(feedRequest(x, ctx.feed));
        if (e !== undefined) judged.push({ x, e, ok: etagMatches(x.requestHeaders['if-none-match'], e) });
        const got = x.responseHeaders?.etag;
        if ((x.status === 200 || x.status === 304) && got) etag.set(feedRequest(x, ctx.feed), got);
      }
      if (judged.length === 0) return notApplicable('the client never requested a URL again after it had been given an ETag for it: it does not poll');
      const missing = judged.filter((j) => !j.ok);
      return missing.length
        ? {
            verdict: 'failed',
            message: `requested again without If-None-Match carrying the ETag it had been given: ${list(missing.map((j) => `#${j.x.seq} ${j.x.url} (If-None-Match: ${j.x.requestHeaders['if-none-match'] ?? 'absent'}, last ETag ${j.e})`))}`,
            evidence: seqs(missing.map((j) => j.x)),
          }
        : { verdict: 'passed', message: `${judged.length} repeated request(s), each with If-None-Match`, evidence: seqs(judged.map((j) => j.x)) };
    },
  },
  {
    id: 'client-feed-cursor-restart',
    title: 'after invalid_cursor the client restarts from the first page',
    service: 'feed',
    requirements: ['feed-client-cursor-restart'],
    judge(xs, ctx) {
      const rejected = xs.filter(
        (x) => pathOf(x) === '/api/v1/items' && x.status === 400 && field(jsonOf(x), ctx.feed.problem.code ?? 'code') === 'invalid_cursor',
      );
      if (rejected.length === 0) {
        const paged = xs.some((x) => isRead(x) && pathOf(x) === '/api/v1/items' && queryOf(x).has('cursor'));
        return paged
          ? notExercised('the client asked for a second items page, but no invalid_cursor reached it')
          : notApplicable('the client never asked for a second items page (it sent no cursor)');
      }
      const wrong: string[] = [];
      const observations: Record<string, string> = {};
      const evidence: number[] = [];
      const cursorOf = (y: ObservedExchange) => field(bodyOf(y, xs, ctx.feed), ctx.feed.items.nextCursor ?? 'page.nextCursor');
      for (const r of rejected) {
        const after = xs.slice(xs.indexOf(r) + 1);
        const next = after.find((y) => isRead(y) && feedResource(y, ctx.feed) === feedResource(r, ctx.feed));
        evidence.push(r.seq);
        if (!next) observations[`#${r.seq}`] = 'the client did not request that query again (read as: it gave up on the listing, which resumes nothing)';
        else evidence.push(next.seq);
        // Restarting means every cursor sent from now on was handed out after the refusal (the refused one only
        // if a new first page gave it again), in whatever query or spelling it is sent.
        after.forEach((y, i) => {
          const c = isRead(y) && pathOf(y) === '/api/v1/items' ? queryOf(y).get('cursor') : null;
          if (c === null || after.slice(0, i).some((z) => pathOf(z) === '/api/v1/items' && cursorOf(z) === c)) return;
          evidence.push(y.seq);
          wrong.push(
            c === queryOf(r).get('cursor')
              ? `#${y.seq} ${y.url} sent again the cursor #${r.seq} refused with invalid_cursor`
              : `#${y.seq} ${y.url} carried a cursor no answer after #${r.seq} (invalid_cursor) had handed out`,
          );
        });
      }
      return wrong.length
        ? { verdict: 'failed', message: `did not restart from the first page: ${list(wrong)}`, evidence, observations }
        : {
            verdict: 'passed',
            message: `after invalid_cursor the next request of that query had no cursor (${evidence.map((s) => `#${s}`).join(', ')})`,
            evidence,
            observations,
          };
    },
  },
  {
    id: 'client-feed-story-id-from-link',
    title: 'the client uses only story ids the API returned and constructs none',
    service: 'feed',
    requirements: ['feed-client-story-id-from-link'],
    judge(xs, ctx) {
      const stories = xs.map((x, i) => ({ x, i, m: /^\/api\/v1\/stories\/([^/]+)$/.exec(pathOf(x)) })).filter((s) => s.m && isRead(s.x));
      if (stories.length === 0) return notApplicable('the client never requested a story');
      const made = stories.filter((s) => !storyIdsSeen(xs.slice(0, s.i), ctx.feed).has(decodeURIComponent(s.m![1]!)));
      return made.length
        ? {
            verdict: 'failed',
            message: `requested story ids the API had not returned (no publicId, story link or Location carried them): ${list(made.map((s) => describe(s.x)))}`,
            evidence: seqs(made.map((s) => s.x)),
          }
        : { verdict: 'passed', message: `${stories.length} story request(s), each id taken from earlier API data`, evidence: seqs(stories.map((s) => s.x)) };
    },
  },
  {
    id: 'client-feed-no-guessed-date',
    title: 'the client never guesses a daily date',
    service: 'feed',
    requirements: ['feed-client-no-guessed-date'],
    judge(xs, ctx) {
      const dated = xs.map((x, i) => ({ x, i, m: /^\/api\/v1\/dailies\/([^/]+)$/.exec(pathOf(x)) })).filter((d) => d.m && d.m[1] !== 'latest' && isRead(d.x));
      if (dated.length === 0) return notApplicable('the client never requested a daily report by date');
      const guessed = dated.filter((d) => !datesSeen(xs.slice(0, d.i), ctx.feed).has(decodeURIComponent(d.m![1]!)));
      return guessed.length
        ? {
            verdict: 'failed',
            message: `requested dates the API had not returned: ${list(guessed.map((d) => describe(d.x)))}`,
            evidence: seqs(guessed.map((d) => d.x)),
          }
        : { verdict: 'passed', message: `${dated.length} dated request(s), each date taken from earlier API data`, evidence: seqs(dated.map((d) => d.x)) };
    },
  },
  {
    id: 'client-feed-snapshot-not-polled',
    title: 'the client takes the snapshot once, as a bootstrap, and does not poll it',
    service: 'feed',
    requirements: ['feed-client-snapshot-not-polled'],
    judge(xs, ctx) {
      const firstPages: ObservedExchange[] = [];
      xs.forEach((x, i) => {
        if (!isRead(x) || pathOf(x) !== '/api/v1/selected/snapshot' || queryOf(x).has('page')) return;
        const before = xs.slice(0, i);
        const prevSame = [...before].reverse().find((y) => feedRequest(y, ctx.feed) === feedRequest(x, ctx.feed));
        // A retry of a first page that failed, or a new bootstrap after the changes feed refused its cursor, is not a poll.
        if (prevSame && (prevSame.status === undefined || prevSame.status >= 500 || prevSame.status === 429)) return;
        const lastChanges = [...before].reverse().find((y) => pathOf(y) === '/api/v1/selected/changes');
        if (firstPages.length && lastChanges && (lastChanges.status ?? 0) >= 400 && (lastChanges.status ?? 0) < 500) return;
        firstPages.push(x);
      });
      if (firstPages.length === 0) return notApplicable('the client never took the snapshot');
      return firstPages.length > 1
        ? { verdict: 'failed', message: `the snapshot was started ${firstPages.length} times: ${list(firstPages.map(describe))}`, evidence: seqs(firstPages) }
        : { verdict: 'passed', message: `the snapshot was taken once (${describe(firstPages[0]!)})`, evidence: seqs(firstPages) };
    },
  },
  {
    id: 'client-feed-follow-merged',
    title: 'the client follows the Location of a merged story (308) to the surviving story',
    service: 'feed',
    requirements: ['feed-story-merged-308'],
    judge(xs) {
      const moved = xs.filter((x) => isRead(x) && /^\/api\/v1\/stories\/[^/]+$/.test(pathOf(x)) && x.status === 308 && x.responseHeaders?.location);
      if (moved.length === 0) {
        const stories = xs.filter((x) => isRead(x) && /^\/api\/v1\/stories\/[^/]+$/.test(pathOf(x))).length;
        return notApplicable(
          stories
            ? `none of the ${stories} story request(s) met a merged story (308): the scenario's merged story is one a hot topic links`
            : 'the client never requested a story',
        );
      }
      const target = (x: ObservedExchange) => new URL(x.responseHeaders!.location!, 'http://x.invalid').pathname;
      const gone = moved.filter((m) => !xs.slice(xs.indexOf(m) + 1).some((y) => isRead(y) && pathOf(y) === target(m)));
      return gone.length
        ? {
            verdict: 'failed',
            message: `treated a merged story as gone: the Location of ${list(gone.map((m) => `${describe(m)} (Location: ${m.responseHeaders!.location})`))} was never requested`,
            evidence: seqs(gone),
          }
        : { verdict: 'passed', message: `${moved.length} merged story(ies), each followed to the story its Location names`, evidence: seqs(moved) };
    },
  },
  {
    id: 'client-feed-items-not-mirror',
    title: 'the client does not keep a complete mirror with the windowed items list',
    service: 'feed',
    requirements: ['feed-client-items-not-mirror'],
    judge(xs, ctx) {
      const items = xs.filter((x) => isRead(x) && pathOf(x) === '/api/v1/items');
      if (items.length === 0) return notApplicable('the client never requested the items list');
      // A complete walk: a first page, then each next page, to the page that says there is no more. Walking the
      // whole window more than once is keeping a copy of it complete: what the snapshot and changes feed are for.
      const walks = new Map<string, ObservedExchange[][]>();
      const open = new Map<string, ObservedExchange[]>();
      for (const x of items) {
        const key = feedResource(x, ctx.feed);
        const walk = queryOf(x).has('cursor') ? open.get(key) : [];
        if (!walk || (x.status !== 200 && x.status !== 304)) continue;
        walk.push(x);
        open.set(key, walk);
        if (field(bodyOf(x, xs, ctx.feed), ctx.feed.items.hasMore ?? 'page.hasMore') === false && walk.length > 1) {
          walks.set(key, [...(walks.get(key) ?? []), walk]);
          open.delete(key);
        }
      }
      const mirrored = [...walks].filter(([, w]) => w.length > 1);
      return mirrored.length
        ? {
            verdict: 'failed',
            message: `walked the whole items list to its last page ${list(mirrored.map(([k, w]) => `${w.length} times (${k.replace(/^GET /, '')}: ${w.map((p) => `#${p[0]!.seq}…#${p[p.length - 1]!.seq}`).join(', ')})`))}: the list is windowed and must not be used to keep a complete mirror`,
            evidence: mirrored.flatMap(([, w]) => w.flat().map((p) => p.seq)),
          }
        : {
            verdict: 'passed',
            message: `${items.length} items request(s); the whole list was walked ${[...walks.values()].reduce((n, w) => n + w.length, 0)} time(s) (never again)`,
            evidence: seqs(items.slice(0, 3)),
          };
    },
  },
];

// ---------------------------------------------------------------- gateway

const isCall = (x: ObservedExchange) => x.method === 'POST';
/** The client repeated a call (a retry, whatever it answered). */
const retriedAny = (xs: ObservedExchange[]) => {
  const calls = xs.filter(isCall).map(callOf);
  return new Set(calls).size < calls.length;
};

interface CredentialForms {
  bearer?: string;
  xApiKey?: string;
  vendorC?: string;
  query?: string;
}
function credentialForms(x: ObservedExchange, vendorCKeyHeader: string): CredentialForms {
  const auth = x.requestHeaders.authorization;
  return {
    bearer: auth && /^bearer\s/i.test(auth) ? auth.replace(/^bearer\s+/i, '') : undefined,
    xApiKey: x.requestHeaders['x-api-key'],
    vendorC: x.requestHeaders[vendorCKeyHeader.toLowerCase()],
    query: queryOf(x).get('key') ?? undefined,
  };
}

const GATEWAY_JUDGES: Judge[] = [
  {
    id: 'client-gw-retry-statuses',
    title: 'the client retries only 429 and 5xx',
    service: 'gateway',
    requirements: ['gw-client-retry-statuses'],
    judge(xs) {
      const refused = xs.filter((x) => isCall(x) && x.status !== undefined && x.status >= 400 && x.status < 500 && x.status !== 429);
      if (refused.length === 0) {
        const calls = new Set(xs.filter(isCall).map(callOf)).size;
        // Any retry makes the rule apply: a client that retried would retry a 400 too, for all its traffic shows.
        return retriedAny(xs)
          ? notExercised(
              `the client retried, but no 4xx other than 429 reached it: it made ${calls} distinct call(s), and the scenario needed one it could refuse with 400`,
            )
          : notApplicable(`the client never repeated a call (${calls} distinct call(s), none retried)`);
      }
      const retried = refused.map((r) => ({ r, again: xs.slice(xs.indexOf(r) + 1).find((y) => callOf(y) === callOf(r)) })).filter((p) => p.again);
      return retried.length
        ? {
            verdict: 'failed',
            message: `repeated a call that was answered with a 4xx other than 429: ${list(retried.map((p) => `#${p.again!.seq} repeats #${p.r.seq} (${p.r.status})`))}`,
            evidence: retried.flatMap((p) => [p.r.seq, p.again!.seq]),
          }
        : { verdict: 'passed', message: `${refused.length} call(s) answered 4xx (${list(refused.map(describe))}); none was repeated`, evidence: seqs(refused) };
    },
  },
  {
    id: 'client-gw-retry-wait',
    title: 'the client waits Retry-After when present, else backs off',
    service: 'gateway',
    requirements: ['gw-client-retry-wait'],
    judge(xs) {
      const waits = retriesAfterRetryAfter(
        xs,
        (s) => s === 429 || s >= 500,
        (a, b) => callOf(a) === callOf(b),
      );
      // Without Retry-After the document asks for exponential backoff with random jitter: one run cannot tell a
      // jittered schedule from others, so the gaps are recorded, not judged.
      const observations: Record<string, string> = {};
      const backoff: string[] = [];
      xs.forEach((a, i) => {
        if (!isCall(a) || a.status === undefined || (a.status !== 429 && a.status < 500) || retryAfterSeconds(a) !== undefined || a.respondedAt === undefined)
          return;
        const again = xs.slice(i + 1).find((y) => callOf(y) === callOf(a));
        if (again) backoff.push(`${(again.receivedAt - a.respondedAt).toFixed(0)} ms`);
      });
      if (backoff.length) observations['gaps after answers without Retry-After'] = backoff.join(', ');
      if (waits.length === 0)
        return xs.some(isCall)
          ? { ...notExercised('the client never repeated a call that was answered with Retry-After'), observations }
          : notApplicable('the client made no generation call (the scenario answers the first one with 429)');
      const early = waits.filter((w) => w.gapMs < w.seconds * 1000 - WAIT_TOLERANCE_MS);
      const shown = (w: (typeof waits)[number]) =>
        `#${w.retry.seq} ${w.gapMs.toFixed(0)} ms after #${w.answer.seq} ${w.answer.status} with Retry-After: ${w.seconds}`;
      return early.length
        ? {
            verdict: 'failed',
            message: `retried before Retry-After had passed: ${list(early.map(shown))}`,
            evidence: early.flatMap((w) => [w.answer.seq, w.retry.seq]),
            observations,
          }
        : {
            verdict: 'passed',
            message: `every retry waited out Retry-After: ${list(waits.map(shown))}`,
            evidence: waits.flatMap((w) => [w.answer.seq, w.retry.seq]),
            observations,
          };
    },
  },
  {
    id: 'client-gw-retry-cap',
    title: 'the client caps the number of retries of a failing call',
    service: 'gateway',
    requirements: ['gw-client-retry-cap'],
    judge(xs, ctx) {
      const down = xs.filter((x) => x.scenario === 'upstream-down');
      if (down.length === 0) {
        const calls = new Set(xs.filter(isCall).map(callOf)).size;
        return retriedAny(xs)
          ? notExercised(
              `the client retried, but no call of it kept failing: it made ${calls} distinct call(s), and the scenario needed one to answer 502 every time`,
            )
          : notApplicable(`the client never repeated a call (${calls} distinct call(s), none retried)`);
      }
      const attempts = xs.filter((x) => callOf(x) === callOf(down[0]!));
      const retries = attempts.length - 1;
      const stillFailing = attempts[attempts.length - 1]?.scenario === 'upstream-down';
      if (retries > ctx.retryCeiling)
        return { verdict: 'failed', message: `${retries} retries of one failing call (more than ${ctx.retryCeiling}: not capped)`, evidence: seqs(attempts) };
      if (ctx.commandStopped && stillFailing && xs[xs.length - 1] === attempts[attempts.length - 1])
        return {
          verdict: 'failed',
          message: `still retrying a failing call (${retries} retries) when the run's time bound stopped the command`,
          evidence: seqs(attempts),
        };
      return {
        verdict: 'passed',
        message: `the failing call was tried ${attempts.length} time(s) (${retries} retries), then the client stopped`,
        evidence: seqs(attempts),
      };
    },
  },
  {
    id: 'client-gw-stream-restart',
    title: 'the client restarts a broken stream from the beginning and never resumes it',
    service: 'gateway',
    requirements: ['gw-client-stream-restart'],
    judge(xs) {
      const broken = xs.filter((x) => x.broken);
      if (broken.length === 0) {
        const streamed = xs.some((x) => isCall(x) && /"stream"\s*:\s*true/.test(x.requestBody ?? ''));
        return streamed ? notExercised('the client streamed, but no stream of it was cut') : notApplicable('the client made no streamed call');
      }
      const evidence: number[] = [];
      const observations: Record<string, string> = {};
      const resumed: string[] = [];
      for (const b of broken) {
        evidence.push(b.seq);
        const later = xs.slice(xs.indexOf(b) + 1).filter((y) => isCall(y) && pathOf(y) === pathOf(b));
        const resume = later.find(
          (y) =>
            y.requestHeaders.range !== undefined ||
            y.requestHeaders['last-event-id'] !== undefined ||
            y.requestHeaders['if-range'] !== undefined ||
            (y.requestBody.includes(PARTIAL_TEXT) && !b.requestBody.includes(PARTIAL_TEXT)),
        );
        const restart = later.find((y) => callOf(y) === callOf(b) && y.requestHeaders.range === undefined && y.requestHeaders['last-event-id'] === undefined);
        if (resume && (!restart || resume.seq < restart.seq)) {
          evidence.push(resume.seq);
          resumed.push(`#${resume.seq} continues #${b.seq} (Range/Last-Event-ID or the partial answer sent back) instead of repeating it`);
        } else if (restart) {
          evidence.push(restart.seq);
          observations[`#${b.seq}`] = `restarted from the beginning by #${restart.seq}`;
        } else observations[`#${b.seq}`] = 'the client did not repeat the call (read as: it gave up on the stream, which resumes nothing)';
      }
      return resumed.length
        ? { verdict: 'failed', message: `resumed a broken stream: ${list(resumed)}`, evidence, observations }
        : { verdict: 'passed', message: `no broken stream was resumed (${Object.values(observations).join('; ')})`, evidence, observations };
    },
  },
  {
    id: 'client-gw-realtime-key-form',
    title: 'the realtime WebSocket handshake carries the key as the three subprotocols (or Authorization: Bearer), never in the URL',
    service: 'gateway',
    requirements: ['gw-auth-websocket-subprotocol', 'gw-auth-query-key-not-vendor-a'],
    judge(xs, ctx) {
      const n = ctx.names;
      const handshakes = xs.filter((x) => x.upgrade);
      if (handshakes.length === 0) return notApplicable('the client opened no WebSocket (no realtime session)');
      const wrong: string[] = [];
      const seen: string[] = [];
      for (const x of handshakes) {
        const offered = (x.requestHeaders['sec-websocket-protocol'] ?? '')
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean);
        const keyProto = offered.find((p) => p.startsWith(n.realtimeKeyProtocolPrefix));
        const key = keyProto?.slice(n.realtimeKeyProtocolPrefix.length);
        const inUrl = [...queryOf(x)].find(([k, v]) => k === 'key' || v.startsWith('sk-') || (key !== undefined && key !== '' && v === key));
        const bearer = /^Bearer\s+\S/i.test(x.requestHeaders.authorization ?? '');
        const three = key !== undefined && key !== '' && offered.includes(n.realtimeProtocol) && offered.includes(n.realtimeBetaProtocol);
        const where = `#${x.seq} ${pathOf(x)}`;
        if (inUrl) wrong.push(`${where}: the key is in the URL query (${inUrl[0]}=…): rule 2, and rule 4 puts it in the subprotocols`);
        else if (keyProto !== undefined && !three)
          wrong.push(
            `${where}: Sec-WebSocket-Protocol offered ${offered.length} subprotocol(s) (${offered.map((p) => (p === keyProto ? `${n.realtimeKeyProtocolPrefix}…` : p)).join(', ')}), not the three of rule 4`,
          );
        else if (!three && !bearer) wrong.push(`${where}: no key in the subprotocols (rule 4) nor in Authorization: Bearer`);
        else seen.push(`${where}: ${three ? 'the three subprotocols' : 'Authorization: Bearer'}`);
      }
      return wrong.length
        ? { verdict: 'failed', message: `a realtime handshake put the key where rule 4 does not: ${list(wrong)}`, evidence: seqs(handshakes) }
        : {
            verdict: 'passed',
            message: `${handshakes.length} realtime handshake(s), the key where rule 4 puts it (${list(seen)})`,
            evidence: seqs(handshakes),
          };
    },
  },
  {
    id: 'client-gw-bearer-keeps-prefix',
    title: 'the client keeps the sk- prefix in the Authorization value',
    service: 'gateway',
    requirements: ['gw-auth-bearer-keeps-prefix'],
    judge(xs) {
      const bearers = xs.filter((x) => /^Bearer\s+\S/i.test(x.requestHeaders.authorization ?? ''));
      if (bearers.length === 0) return notApplicable('the client sent no Authorization: Bearer');
      const bare = bearers.filter((x) => !/^Bearer\s+sk-/i.test(x.requestHeaders.authorization ?? ''));
      return bare.length
        ? {
            verdict: 'failed',
            message: `Authorization: Bearer without the key's sk- prefix (rule 3): ${list(bare.map((x) => describe(x)))}`,
            evidence: seqs(bare),
          }
        : { verdict: 'passed', message: `${bearers.length} request(s) with Authorization: Bearer sk-…`, evidence: seqs(bearers) };
    },
  },
  {
    id: 'client-gw-key-placement',
    title: 'the client puts the key in a form the Authentication table accepts on the path',
    service: 'gateway',
    requirements: ['gw-auth-bearer', 'gw-auth-x-api-key', 'gw-auth-vendorc-header', 'gw-auth-query-key', 'gw-auth-query-key-not-vendor-a'],
    judge(xs, ctx) {
      // A WebSocket handshake is the realtime rule's (client-gw-realtime-key-form).
      const keyed = xs
        .filter((x) => !x.upgrade)
        .map((x) => ({ x, f: credentialForms(x, ctx.names.vendorCKeyHeader), family: gatewayFamily(pathOf(x), ctx.names) }))
        .filter(({ f, family }) => family !== 'unknown' && Object.values(f).some((v) => v !== undefined));
      if (keyed.length === 0) return notExercised('the client sent no key on a path of the Authentication table');
      const wrong = keyed.filter(({ f, family }) => {
        if (f.bearer !== undefined) return false;
        if (f.xApiKey !== undefined && (family === 'vendor-b' || family === 'models')) return false;
        if ((f.vendorC !== undefined || f.query !== undefined) && (family === 'vendor-c' || family === 'models')) return false;
        return true;
      });
      const why = ({ f, family }: (typeof keyed)[number]) =>
        f.query !== undefined && family === 'vendor-a'
          ? '?key= does not work on vendor A interfaces'
          : `${[f.xApiKey !== undefined && 'x-api-key', f.vendorC !== undefined && ctx.names.vendorCKeyHeader, f.query !== undefined && '?key=']
              .filter(Boolean)
              .join(' and ')} is not accepted on ${family} paths`;
      const forms = [
        ...new Set(
          keyed.map(({ f }) =>
            Object.entries(f)
              .filter(([, v]) => v !== undefined)
              .map(([k]) => k)
              .join('+'),
          ),
        ),
      ].join(', ');
      return wrong.length
        ? {
            verdict: 'failed',
            message: `the key was only in a form the path does not accept: ${list(wrong.map((w) => `${describe(w.x)} (${why(w)})`))}`,
            evidence: seqs(wrong.map((w) => w.x)),
          }
        : {
            verdict: 'passed',
            message: `${keyed.length} request(s) with a key, each in a form its path accepts (forms used: ${forms})`,
            evidence: seqs(keyed.map((k) => k.x)),
            observations: { 'forms used': forms },
          };
    },
  },
];

export const JUDGES: Record<Service, Judge[]> = { feed: FEED_JUDGES, gateway: GATEWAY_JUDGES };

export function judgeAll(service: Service, xs: ObservedExchange[], ctx: JudgeContext): RuleResult[] {
  return JUDGES[service].map((j) => {
    const out = j.judge(xs, ctx);
    const level = strongestLevel(j.requirements.map((id) => requirement(id).level));
    return {
      id: j.id,
      title: j.title,
      service,
      requirements: j.requirements,
      level,
      // A SHOULD or MAY rule that is not met is reported as a warning; it does not fail the run.
      verdict: out.verdict === 'failed' && level !== 'MUST' ? 'warning' : out.verdict,
      message: out.message,
      observations: out.observations ?? {},
      evidence: [...new Set(out.evidence)].sort((a, b) => a - b),
    };
  });
}

/** Which round's verdict on a rule speaks for the run: a failure anywhere, else a warning, else a pass, ... */
const WEIGHT: Record<RuleVerdict, number> = { failed: 4, warning: 3, passed: 2, 'not exercised': 1, 'not applicable': 0 };

/**
 * The rules judged on each run of the command (each round on its own traffic: a round's first request is no poll
 * of the last one's), then merged: a rule failed in any round failed; one a later round provoked is decided there.
 * `commandStopped` holds per round.
 */
export function judgeRounds(service: Service, xs: ObservedExchange[], ctx: JudgeContext, stopped: (round: number) => boolean): RuleResult[] {
  const rounds = [...new Set(xs.map((x) => x.round ?? 1))].sort((a, b) => a - b);
  if (rounds.length <= 1) return judgeAll(service, xs, { ...ctx, commandStopped: stopped(rounds[0] ?? 1) });
  const judged = rounds.map((r) => ({
    r,
    rules: judgeAll(
      service,
      xs.filter((x) => (x.round ?? 1) === r),
      { ...ctx, commandStopped: stopped(r) },
    ),
  }));
  return judged[0]!.rules.map((first, i) => {
    const all = judged.map(({ r, rules }) => ({ r, rule: rules[i]! }));
    const best = all.reduce((a, b) => (WEIGHT[b.rule.verdict] > WEIGHT[a.rule.verdict] ? b : a));
    const others = all.filter((a) => a !== best).map((a) => `round ${a.r}: ${a.rule.verdict}`);
    return {
      ...first,
      verdict: best.rule.verdict,
      message: `round ${best.r} of ${rounds.length}: ${best.rule.message}`,
      observations: { ...Object.assign({}, ...all.map((a) => a.rule.observations)), 'other rounds': others.join('; ') },
      evidence: best.rule.evidence,
    };
  });
}
