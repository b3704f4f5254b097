/**
 * content-feed-service.md — the contract between two requests: what must hold between any two exchanges a run made
 * with the feed, read from the exchanges it already recorded (suites/feed/run-wide.checks.ts). Each function here is
 * pure: given the run's answers, it returns how many it compared and the pairs that break its rule.
 *
 * Time is the runner's: an exchange was sent at `sent` and its answer was in by `received`. "Later" always means a
 * request sent after the earlier answer was received, so a service that answered both requests while they were in
 * flight together is never held to an order it could not see.
 *
 * An answer carrying `Age` above 0 came from a cache (RFC 9111 4: a stored response used without validation carries
 * Age), which may hand out what the origin served within its freshness window: such an answer is never the later
 * half of a pair.
 */
import { contentDigest, type Exchange } from './http.js';
import { directiveValues, weakMatch, parseCacheControl, sMaxAge } from './caching.js';
import { field } from './spec.js';
import { canonical } from './canonical.js';
import { CLOCK_TOLERANCE_MS, effectiveTime, instant, WINDOW_MS } from './feed.js';

/** The items listing's path, as the run's answers carry it (Seen.path). */
const ITEMS = '/api/v1/items';

/** One answer of the run from a documented operation, as the rules here read it. */
export interface Seen {
  x: Exchange;
  /** The documented path (/api/v1/...), under the base URL's prefix. */
  path: string;
  /** The path and its query, parameters sorted: two answers with the same key are answers of one URL. */
  key: string;
  sent: number;
  received: number;
  status: number;
  etag?: string;
  cacheControl?: string;
  /** The JSON body of a GET 200 read whole, else undefined. */
  body?: unknown;
  /** A GET 200 longer than the recorder keeps: the digest of its whole JSON body, as the recorder took it. */
  digest?: string;
  /** A GET 200 longer than the recorder keeps: its outline (every list cut to its first and last entries). */
  outline?: unknown;
  /** A GET 200 longer than the recorder keeps: the length of each of its lists (not inside a list), by path. */
  lengths?: Record<string, number>;
  /** A GET 200 longer than the recorder keeps: each list of objects with its rows cut to their short scalar fields, by path. */
  rows?: Record<string, Record<string, unknown>[]>;
  /** From a cache: Age above 0. */
  cached: boolean;
}

/**
 * The rows of a list of a recorded 200 (`list`: its path in the body): every row whole when the body was kept whole,
 * else every row cut to its short scalar fields (ids, timestamps, flags) from the row index; undefined when neither.
 */
export function listRows(s: Seen, list: string): Record<string, unknown>[] | undefined {
  const rows = s.body !== undefined ? field(s.body, list) : s.rows?.[list];
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : undefined;
}

/**
 * A 200's own fields (a page's cursor, nextPage, hasMore, count): its body when kept whole, else its outline, where a
 * body longer than the recorder keeps has its lists cut to their ends and every other field whole.
 */
export const topOf = (s: Seen): unknown => s.body ?? s.outline;

/** The outcome of a rule over the run: how many answers (or pairs) it judged, and each break, described. */
export interface Judged {
  judged: number;
  bad: string[];
}

/** A recorded outline, parsed (undefined where the redaction left no JSON). */
function parsedOutline(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Each exchange read as an answer, by the `pathOf` it was read with: an exchange is recorded once and never changes. */
const SEEN = new WeakMap<(url: string) => string | undefined, WeakMap<Exchange, Seen | null>>();

/**
 * The run's answers, oldest first; `pathOf` gives the documented path of a URL (undefined: not the feed's). Each
 * exchange is read once per `pathOf` (about 40 run-wide checks ask for the run's answers, each body parsed once); the
 * answers are shared between callers, which read them only.
 */
export function seenOf(exchanges: Exchange[], pathOf: (url: string) => string | undefined): Seen[] {
  let memo = SEEN.get(pathOf);
  if (!memo) SEEN.set(pathOf, (memo = new WeakMap()));
  const out: Seen[] = [];
  for (const x of exchanges) {
    let s = memo.get(x);
    if (s === undefined) memo.set(x, (s = answerOf(x, pathOf) ?? null));
    if (s) out.push(s);
  }
  return out.sort((a, b) => a.sent - b.sent);
}

/** One exchange as an answer of the feed, or undefined (not a GET or HEAD of the feed's API, no answer). */
function answerOf(x: Exchange, pathOf: (url: string) => string | undefined): Seen | undefined {
  const path = pathOf(x.url);
  if (!path?.startsWith('/api/v1/') || x.error || x.status === undefined || (x.method !== 'GET' && x.method !== 'HEAD')) return undefined;
  const u = new URL(x.url);
  u.searchParams.sort();
  const sent = Date.parse(x.startedAt);
  const h = x.responseHeaders ?? {};
  /** A GET 200 longer than the recorder keeps: read from what it kept of it (digest, outline, lengths, row index). */
  const long = x.method === 'GET' && x.status === 200 && x.truncated;
  let body: unknown;
  if (x.method === 'GET' && x.status === 200 && !x.truncated && x.responseBody !== undefined && x.requestHeaders['connection'] !== 'close')
    try {
      body = JSON.parse(x.responseBody);
    } catch {
      body = undefined;
    }
  return {
    x,
    path,
    key: `${path}${u.search}`,
    sent,
    received: sent + x.durationMs,
    status: x.status,
    etag: h['etag'],
    cacheControl: h['cache-control'],
    body,
    cached: Number(h['age'] ?? '0') > 0,
    ...(long && x.contentDigest && x.requestHeaders['connection'] !== 'close' ? { digest: x.contentDigest } : {}),
    ...(long && x.contentOutline ? { outline: parsedOutline(x.contentOutline) } : {}),
    ...(long && x.contentLengths ? { lengths: x.contentLengths } : {}),
    ...(long && x.contentRows ? { rows: parsedOutline(x.contentRows) as Seen['rows'] } : {}),
  };
}

const at = (s: Seen) => `${s.x.method} ${s.key} (${s.status}, sent ${new Date(s.sent).toISOString().slice(11, 23)})`;
/** The Date header of an answer as an instant (RFC 9110 6.6.1), or undefined. */
const dateOf = (s: Seen) => {
  const d = Date.parse(s.x.responseHeaders?.['date'] ?? '');
  return Number.isNaN(d) ? undefined : d;
};
/**
 * The content of a 200, as its ETag names it: the body, less the per-request `asOf` that snapshot and changes
 * bodies carry and deliberately leave out of their ETag (notes/real-deployments.md). Nothing else is left out.
 */
export function contentOf(s: Seen): string | undefined {
  if (CONTENT.has(s)) return CONTENT.get(s);
  const c = contentNow(s);
  CONTENT.set(s, c);
  return c;
}
/** Each answer's content, taken once: an answer is read only (a copy with more of its body is another answer). */
const CONTENT = new WeakMap<Seen, string | undefined>();
function contentNow(s: Seen): string | undefined {
  const perRequest = s.path === '/api/v1/selected/snapshot' || s.path === '/api/v1/selected/changes';
  // A body longer than the recorder keeps is compared by its digest (taken whole, keys sorted); a per-request asOf is
  // in it, so snapshot and changes bodies that long are not compared.
  if (s.body === undefined) return s.digest && !perRequest ? `(a body longer than the recorder keeps, digest ${s.digest})` : undefined;
  if (perRequest && typeof s.body === 'object' && s.body !== null && !Array.isArray(s.body)) {
    const { asOf: _asOf, ...rest } = s.body as Record<string, unknown>;
    return canonical(rest);
  }
  return canonical(s.body);
}

/**
 * The first 200 of each listing URL the run read (no cursor, not from a cache, an ETag and a JSON body), earliest
 * first, one per set of parameter names and at most `max`: listings a live feed changes as the run goes on, each a
 * different filter. The query `skip` names (a cursor) are left out; so is the listing without parameters; with `only`,
 * only URLs that carry that parameter (continuation pages: `cursor`).
 */
export function firstListings(seen: Seen[], o: { path: string; skip: string[]; max: number; before: number; only?: string }): Seen[] {
  const out: Seen[] = [];
  const kinds = new Set<string>();
  for (const s of seen) {
    if (s.path !== o.path || s.x.method !== 'GET' || s.status !== 200 || !s.etag || s.cached || s.received > o.before) continue;
    if (s.body === undefined && s.digest === undefined) continue;
    const names = [...new URL(s.x.url).searchParams.keys()].sort();
    if (names.length === 0 || names.some((n) => o.skip.includes(n)) || (o.only !== undefined && !names.includes(o.only))) continue;
    const kind = names.join('&');
    if (kinds.has(kind)) continue;
    kinds.add(kind);
    out.push(s);
    if (out.length === o.max) break;
  }
  return out;
}

/** The content digest of a recorded 200 (its body's, or the digest the recorder took of a longer one). */
export function digestOf(s: Seen): string | undefined {
  return s.body !== undefined ? contentDigest(s.body) : s.digest;
}

/** Two answers were made under the same content negotiation: the same Accept-Encoding sent, the same coding back. */
const sameNegotiation = (a: Seen, b: Seen) =>
  (a.x.requestHeaders['accept-encoding'] ?? '') === (b.x.requestHeaders['accept-encoding'] ?? '') &&
  (a.x.responseHeaders?.['content-encoding'] ?? '') === (b.x.responseHeaders?.['content-encoding'] ?? '');

/** Two answers whose content is read the same way: both whole bodies, or both past the recorder's bound (digests). */
const sameMeasure = (a: Seen, b: Seen) => (a.body === undefined) === (b.body === undefined);

/** The answers of `seen` grouped by `key`, each group in the run's order. */
function groupBy(seen: Seen[], key: (s: Seen) => string): Map<string, Seen[]> {
  const by = new Map<string, Seen[]>();
  for (const s of seen) {
    const k = key(s);
    const group = by.get(k);
    if (group) group.push(s);
    else by.set(k, [s]);
  }
  return by;
}

/** The GET 200s of each URL with a body and an ETag, oldest first. */
const bodiesByUrl = (seen: Seen[]): Map<string, Seen[]> =>
  groupBy(
    seen.filter((s) => s.status === 200 && contentOf(s) !== undefined && s.etag && !s.cached),
    (s) => s.key,
  );

/**
 * Two 200s of one URL with matching ETags carry the same content: a client holding the first and sending its ETag
 * gets 304 while the second was current, and keeps content that had changed (feed-changed-resource-200).
 */
export function sameEtagSameContent(seen: Seen[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const list of bodiesByUrl(seen).values()) {
    for (let i = 1; i < list.length; i++) {
      const b = list[i]!;
      const a = list.slice(0, i).find((e) => weakMatch(e.etag!, b.etag!) && sameNegotiation(e, b) && sameMeasure(e, b));
      if (!a) continue;
      judged++;
      if (contentOf(a) !== contentOf(b)) bad.push(`${at(a)} and ${at(b)} both carry ETag ${b.etag} with different content${diffHint(a, b)}`);
    }
  }
  return { judged, bad };
}

/** Where two bodies first differ, as a short hint. */
function diffHint(a: Seen, b: Seen): string {
  if (a.body === undefined || b.body === undefined) return ' (bodies longer than the recorder keeps: their digests differ)';
  const x = contentOf(a) ?? '';
  const y = contentOf(b) ?? '';
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  return `: from …${JSON.stringify(x.slice(Math.max(0, i - 30), i + 30))} to …${JSON.stringify(y.slice(Math.max(0, i - 30), i + 30))}`;
}

/**
 * A snapshot or changes body's asOf: the representation's own time, per request. Two answers with other asOf values
 * are other representations, whose ETags may differ (a deployment that hashes the whole body gives each its own).
 */
function asOfOf(s: Seen): unknown {
  return typeof s.body === 'object' && s.body !== null && !Array.isArray(s.body) ? (s.body as Record<string, unknown>).asOf : undefined;
}

/**
 * Two 200s of one URL in a row (no other 200 of it in between) with the same content carry matching ETags: the
 * ETag stays the same while the content does (feed-etag-stable). Only answers under one content negotiation are
 * compared (a compressing proxy may tag each coding apart).
 */
export function sameContentSameEtag(seen: Seen[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const list of bodiesByUrl(seen).values()) {
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1]!;
      const b = list[i]!;
      if (b.sent < a.received || !sameNegotiation(a, b) || !sameMeasure(a, b) || contentOf(a) !== contentOf(b) || asOfOf(a) !== asOfOf(b)) continue;
      judged++;
      if (!weakMatch(a.etag!, b.etag!)) bad.push(`${at(a)} with ETag ${a.etag}, then ${at(b)} with ETag ${b.etag}: the same content`);
    }
  }
  return { judged, bad };
}

/**
 * No 304 to an ETag the URL had already left behind: after a 200 of the URL carried another ETag, a conditional
 * request sent with the older one (after that 200 was in) is answered 200 (feed-changed-resource-200). A URL whose
 * 200s come back to an ETag they had left (content that went back) is not judged: there the older ETag may be
 * current again.
 */
export function noStaleNotModified(seen: Seen[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const list of validatedByUrl(seen)) {
    const oks = list.filter((s) => s.status === 200 && !s.cached);
    if (comesBack(oks.map((s) => s.etag!))) continue;
    for (const nm of list.filter((s) => s.status === 304 && !s.cached)) {
      const asked = nm.x.requestHeaders['if-none-match'];
      if (!asked || asked.includes(',') || asked.trim() === '*') continue;
      // The newest 200 in before this request was sent, sent after every answer that carried the ETag asked about.
      // Sent at or before it (timestamps in whole ms: a 200 received in the ms this request was sent counts as in).
      const lastAsked = list.filter((s) => weakMatch(s.etag!, asked) && s !== nm && s.sent <= nm.sent).pop();
      const newer = oks.filter((s) => s.received < nm.sent).pop();
      if (!newer) continue;
      judged++;
      if (lastAsked && lastAsked.received >= newer.sent) continue;
      // The next 200 of the URL carries the ETag asked about: the URL had come to carry it (ETags are told apart per
      // resource only, RFC 9110 8.8.3: a revision number may reach a value another resource's ETag had).
      const next = oks.find((s) => s.sent >= nm.received);
      if (next && weakMatch(next.etag!, asked)) continue;
      if (!weakMatch(newer.etag!, asked)) bad.push(`${at(nm)} answered If-None-Match: ${asked} after ${at(newer)} had already carried ETag ${newer.etag}`);
    }
  }
  return { judged, bad };
}

/** The longest time between the two 200s a 304 is judged between: a policy that moves in steps is seen moving there. */
const BRACKET_MS = 5000;

/**
 * Every 304 carries the Cache-Control its URL's 200 carries (feed-304-headers-empty-body; RFC 9110 15.4.5: a 304 has
 * the Cache-Control a 200 to the same request would have): a 304 to a GET is judged between the GET 200s of its URL
 * with its ETag received last before it was sent and sent first after it came back, at most 5 s apart, when those two
 * give the same directives (the policy for that content held across the 304), and fails when its own differ (a HEAD's
 * headers only SHOULD be a GET's, RFC 9110 9.3.2: not judged). Not judged either: answers with Age (a
 * cache's), a 304 without Cache-Control (feed-every-304-etag-cache-control's finding), a 304 with a 200 of its ETag on
 * one side only, or 200s whose directives moved (a policy that changes with time, as a report that stops being the
 * latest).
 */
export function notModifiedCachedAsOk(seen: Seen[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const list of validatedByUrl(seen)) {
    const oks = list.filter((s) => s.x.method === 'GET' && s.status === 200 && !s.cached && s.cacheControl !== undefined);
    for (const nm of list.filter((s) => s.x.method === 'GET' && s.status === 304 && !s.cached && s.cacheControl !== undefined)) {
      const before = oks.filter((s) => s.received < nm.sent && weakMatch(s.etag!, nm.etag!)).pop();
      const after = oks.find((s) => s.sent > nm.received && weakMatch(s.etag!, nm.etag!));
      if (!before || !after || after.sent - before.received > BRACKET_MS || !sameDirectives(before.cacheControl!, after.cacheControl!)) continue;
      judged++;
      if (!sameDirectives(before.cacheControl!, nm.cacheControl!))
        bad.push(
          `${at(nm)} carried Cache-Control "${nm.cacheControl}", where ${at(before)} and ${at(after)}, with its ETag ${nm.etag}, carried "${before.cacheControl}"`,
        );
    }
  }
  return { judged, bad };
}

/**
 * No conditional GET naming a resource's current version is answered 200 with a version that one had replaced, while
 * the answers around it show the current one (feed-conditional-304: an unchanged resource answers 304): A replaced by
 * B (an answer with B sent after one with A had come in), the request sent with If-None-Match: B after B's answer came
 * in, answered 200 with A's ETag, and the URL's next answer (a 200, or a 304 to If-None-Match: B) showing B again. A
 * replica or a cache behind the primary answers so; a resource that really went back to A and forward to B again
 * between two requests is not told apart, and is improbable. Answers with Age, or dated before the answer that showed
 * B, are not judged (a cache's older copy); answers are compared only with those asked with the same Accept-Encoding
 * (a proxy may tag each coding apart).
 */
export function replacedVersionForCurrent(seen: Seen[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  /** The ETag an answer shows: a 200's own, a 304's the one it confirmed. */
  const shows = (s: Seen) => (s.status === 200 ? s.etag : s.x.requestHeaders['if-none-match']);
  // Per URL and Accept-Encoding: a proxy may tag each coding apart (a suffixed ETag).
  const byCoding = groupBy(
    seen.filter((s) => validated(s) && !s.cached && s.x.method === 'GET'),
    (s) => `${s.key} ${s.x.requestHeaders['accept-encoding'] ?? ''}`,
  );
  for (const peers of byCoding.values()) {
    for (const v of peers) {
      const asked = v.x.requestHeaders['if-none-match'];
      if (!asked || asked.includes(',') || asked.trim() === '*') continue;
      // Judged: a conditional request naming the version the URL's last answer before it showed, with an answer after it.
      const current = peers.filter((s) => s !== v && s.received <= v.sent).pop();
      const next = peers.find((s) => s.sent >= v.received);
      if (!current || !next || !weakMatch(shows(current) ?? '', asked)) continue;
      judged++;
      if (v.status !== 200 || weakMatch(v.etag!, asked) || !weakMatch(shows(next) ?? '', asked)) continue;
      // v's version had been shown, then replaced by the one asked about.
      const old = peers.find((a) => a.status === 200 && weakMatch(a.etag!, v.etag!) && a.received <= v.sent);
      const replacedBy = old && peers.find((b) => b.sent >= old.received && b.received <= v.sent && weakMatch(shows(b) ?? '', asked));
      // An answer dated before the one that replaced its version is an older copy a cache without Age kept: not judged.
      if (replacedBy && !datedBefore(v, replacedBy))
        bad.push(
          `${at(v)} answered If-None-Match: ${asked} with ETag ${v.etag}, the version ${at(replacedBy)} had replaced; ${at(current)} before it and ${at(next)} after it showed ${asked}`,
        );
    }
  }
  return { judged, bad };
}

/**
 * No HEAD 200 carries an ETag its URL's GETs had already replaced (feed-changed-resource-200: a changed resource
 * answers 200 with a new ETag; HEAD is GET without the body, whose header fields RFC 9110 9.3.2 says should be the
 * same): the HEAD is judged between two GET 200s of its URL, the one received last before it was sent and the first
 * sent after it came back, neither carrying its ETag, when its ETag is one the GETs had carried before and left. Not
 * judged: a URL whose GET 200s come back to an ETag they had left, a HEAD whose Date is older than the GET's before it
 * (a cache's copy), answers with Age.
 */
export function noStaleHead(seen: Seen[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const list of validatedByUrl(seen)) {
    const oks = list.filter((s) => s.x.method === 'GET' && s.status === 200 && !s.cached);
    if (comesBack(oks.map((s) => s.etag!))) continue;
    for (const h of list.filter((s) => s.x.method === 'HEAD' && s.status === 200 && !s.cached)) {
      const before = oks.filter((s) => s.received < h.sent).pop();
      const after = oks.find((s) => s.sent > h.received);
      if (!before || !after || weakMatch(before.etag!, h.etag!) || weakMatch(after.etag!, h.etag!)) continue;
      const [headDate, beforeDate] = [dateOf(h), dateOf(before)];
      if (headDate === undefined || beforeDate === undefined || headDate < beforeDate) continue;
      judged++;
      // Left: a GET carried it before the one before the HEAD was asked for, and none since.
      const lastWith = oks.filter((s) => weakMatch(s.etag!, h.etag!)).pop();
      if (lastWith && lastWith.received <= before.sent)
        bad.push(`${at(h)} carried ETag ${h.etag}, which its URL had left: ${at(before)} carried ${before.etag}, and ${at(after)} ${after.etag}`);
    }
  }
  return { judged, bad };
}

/** Whether answer `x` carries a Date no earlier than answer `y`'s (both present, whole seconds): not a stored copy made before it. */
function notDatedBefore(x: Seen, y: Seen): boolean {
  const [dx, dy] = [dateOf(x), dateOf(y)];
  return dx !== undefined && dy !== undefined && dx >= dy;
}

/** Whether an answer is a 200 or 304 that carries an ETag (a validated answer). */
const validated = (s: Seen): boolean => (s.status === 200 || s.status === 304) && !!s.etag;
/** The run's 200 and 304 answers that carry an ETag, grouped by URL, each group in the run's order. */
const validatedByUrl = (seen: Seen[]): Seen[][] => [...groupBy(seen.filter(validated), (s) => s.key).values()];

/** Whether a sequence of ETags returns to one it had left (A, B, A). */
function comesBack(etags: string[]): boolean {
  const left: string[] = [];
  for (let i = 1; i < etags.length; i++) {
    if (weakMatch(etags[i]!, etags[i - 1]!)) continue;
    left.push(etags[i - 1]!);
    if (left.some((e) => weakMatch(e, etags[i]!))) return true;
  }
  return false;
}

/** A Cache-Control value's directives, lower-cased and sorted. */
const directives = (cc: string) =>
  [...parseCacheControl(cc).entries()]
    .map(([k, v]) => (v === true ? k : `${k}=${v}`))
    .sort()
    .join(', ');

/**
 * The URLs to revalidate late in the run: those whose 200s all carried one ETag (content that did not move), the
 * longest-lived first, each with that ETag and when the run first saw it.
 */
export function longestUnchanged(seen: Seen[]): { key: string; url: string; etag: string; first: number }[] {
  const out: { key: string; url: string; etag: string; first: number }[] = [];
  for (const [key, list] of bodiesByUrl(seen)) {
    if (list[0]!.x.method !== 'GET' || list.some((s) => !weakMatch(s.etag!, list[0]!.etag!))) continue;
    out.push({ key, url: list[0]!.x.url, etag: list[0]!.etag!, first: list[0]!.sent });
  }
  // A long freshness lifetime first (a resource declared fresh longest is the likeliest not to move), then the oldest.
  const life = (key: string) => sMaxAge(seen.find((s) => s.key === key && s.status === 200)?.cacheControl) ?? 0;
  return out.sort((a, b) => life(b.key) - life(a.key) || a.first - b.first);
}

/**
 * The URLs whose content moved during the run (their 200s carried more than one ETag), the one that moved last
 * first, each with the ETags its 200s carried, oldest first, and when the run first saw it.
 */
export function movedUrls(seen: Seen[]): { url: string; etags: string[]; first: number }[] {
  const out: { url: string; etags: string[]; moved: number; first: number }[] = [];
  for (const list of bodiesByUrl(seen).values()) {
    const etags = list.map((s) => s.etag!).filter((e, i, all) => i === 0 || !weakMatch(e, all[i - 1]!));
    if (etags.length < 2) continue;
    const moved = list.filter((s, i) => i > 0 && !weakMatch(s.etag!, list[i - 1]!.etag!)).pop()!.sent;
    out.push({ url: list[0]!.x.url, etags, moved, first: list[0]!.sent });
  }
  return out.sort((a, b) => b.moved - a.moved);
}

/** Whether two Cache-Control values give the same directives. */
export const sameDirectives = (a: string, b: string) => directives(a) === directives(b);

/** Every 200 and 304 of hot topics gives s-maxage=60 (feed-hot-topics-shared-cache-60s). */
export function hotTopicsSMaxAge(seen: Seen[]): Judged {
  const of = seen.filter((s) => s.path === '/api/v1/hot-topics' && (s.status === 200 || s.status === 304) && sMaxAge(s.cacheControl) !== undefined);
  const bad = of.filter((s) => sMaxAge(s.cacheControl) !== 60).map((s) => `${at(s)}: Cache-Control "${s.cacheControl}"`);
  // What else a shared cache obeys before Cache-Control: the CDN's own field (RFC 9213: CDN-Cache-Control, which CDNs
  // may pass on), whose freshness (its max-age, or an s-maxage in it) is then the shared caches' window; and Vary: *,
  // which leaves a shared cache nothing it may reuse (RFC 9111 4.1). (Surrogate-Control is not judged: the CDNs that
  // obey it take it off, so one a client sees is one no cache applied.)
  for (const s of of) {
    const h = s.x.responseHeaders ?? {};
    const cdn = h['cdn-cache-control'];
    if (cdn !== undefined) {
      const maxAge = directiveValues(cdn, 'max-age').find((d): d is string => typeof d === 'string' && /^\d+$/.test(d));
      const age = sMaxAge(cdn) ?? (maxAge === undefined ? undefined : Number(maxAge));
      if (age !== undefined && age !== 60) bad.push(`${at(s)}: cdn-cache-control "${cdn}" (shared caches follow it before Cache-Control)`);
    }
    if (/(^|,)\s*\*\s*(,|$)/.test(h.vary ?? '')) bad.push(`${at(s)}: Vary "${h.vary}" (no shared cache may reuse it)`);
  }
  return { judged: of.length, bad };
}

/**
 * Every hot-topics 200 of the run holds ten entries, and ten topics: no entry repeats another in everything but its
 * rank (feed-hot-topics-ten; a refresh that leaves a moved topic in its old slot too lists one topic twice).
 */
export function hotTopicsTen(seen: Seen[], listPath: string): Judged {
  const lists = seen.filter((s) => s.path === '/api/v1/hot-topics' && s.status === 200).map((s) => ({ s, list: field(s.body, listPath) }));
  const of = lists.filter((l) => Array.isArray(l.list));
  const bad = of.flatMap(({ s, list }) => {
    const entries = list as unknown[];
    if (entries.length !== 10) return [`${at(s)}: ${entries.length} entries`];
    const topics = entries.map((e) => canonical(e, ['rank']));
    const twice = entries.filter((_e, i) => topics.indexOf(topics[i]!) !== i).map((e) => JSON.stringify(field(e, 'rank')));
    return twice.length ? [`${at(s)}: the entries ranked ${twice.join(', ')} repeat an earlier entry in everything but rank`] : [];
  });
  return { judged: of.length, bad };
}

/**
 * rank is a one-based integer: the entries of each hot-topics 200 rank 1 to n, each rank once (feed-hot-topics-rank),
 * in whatever order the array lists them (the document does not say the array is in rank order). An answer whose ranks
 * are not all integers is feed-run-hot-topic-ranks-typed's finding, and is not judged here.
 */
export function hotTopicRanks(seen: Seen[], listPath: string): Judged {
  const of = seen
    .filter((s) => s.path === '/api/v1/hot-topics' && s.status === 200)
    // A body longer than the recorder keeps is read from its row index (each entry's short fields, rank among them).
    .map((s) => ({ s, list: listRows(s, listPath) }))
    .filter((l): l is { s: Seen; list: Record<string, unknown>[] } => Array.isArray(l.list) && l.list.length > 0)
    .map(({ s, list }) => ({ s, ranks: list.map((e) => field(e, 'rank')) }))
    .filter(({ ranks }) => ranks.every((r) => Number.isInteger(r)));
  const bad = of.flatMap(({ s, ranks }) => {
    const sorted = (ranks as number[]).slice().sort((a, b) => a - b);
    return sorted.every((r, i) => r === i + 1) ? [] : [`${at(s)}: ranks ${ranks.join(', ')} (not 1 to ${ranks.length}, each once)`];
  });
  return { judged: of.length, bad };
}

/** The item records a 200 holds, by operation: items and snapshot pages, and each upsert's image on a changes page. */
export function itemsOf(s: Seen, p: { items: string; snapshot: string; changes: string; changeItem: string }): Record<string, unknown>[] {
  const list =
    s.path === ITEMS
      ? field(s.body, p.items)
      : s.path === '/api/v1/selected/snapshot'
        ? field(s.body, p.snapshot)
        : s.path === '/api/v1/selected/changes'
          ? (field(s.body, p.changes) as unknown[] | undefined)?.map?.((c) => field(c, p.changeItem))
          : undefined;
  return Array.isArray(list) ? list.filter((i): i is Record<string, unknown> => typeof i === 'object' && i !== null && !Array.isArray(i)) : [];
}

/**
 * discoveredAt is the timestamp at which the service received the item: one instant, the same wherever and whenever
 * the item appears (feed-item-discovered-at-fixed). Compared as instants (one instant may be written with any offset).
 */
export function discoveredAtFixed(seen: Seen[], paths: Parameters<typeof itemsOf>[1], idPath: string): Judged {
  const first = new Map<string, { t: number; raw: unknown; s: Seen }>();
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen.filter((e) => e.status === 200 && e.body !== undefined))
    for (const item of itemsOf(s, paths)) {
      const id = field(item, idPath);
      const t = instant(item.discoveredAt);
      if (typeof id !== 'string' || t === undefined) continue;
      const was = first.get(id);
      if (!was) {
        first.set(id, { t, raw: item.discoveredAt, s });
        continue;
      }
      judged++;
      if (was.t !== t && !bad.some((b) => b.startsWith(`item ${id}:`)))
        bad.push(`item ${id}: discoveredAt ${JSON.stringify(was.raw)} in ${at(was.s)}, ${JSON.stringify(item.discoveredAt)} in ${at(s)}`);
    }
  return { judged, bad };
}

const STORY = '/api/v1/stories/';
const storyId = (s: Seen) => decodeURIComponent(s.path.slice(STORY.length));

/** The story id a 308's Location leads to (its final path segment), or undefined without one. */
export function locationId(s: Seen): string | undefined {
  const loc = s.x.responseHeaders?.['location'];
  if (!loc) return undefined;
  try {
    const seg = new URL(loc, s.x.url).pathname.split('/').pop();
    return seg ? decodeURIComponent(seg) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `a` carries a Date earlier than `b`'s (second resolution; either without one: no). */
function datedBefore(a: Seen, b: Seen): boolean {
  const [x, y] = [Date.parse(a.x.responseHeaders?.['date'] ?? ''), Date.parse(b.x.responseHeaders?.['date'] ?? '')];
  return !Number.isNaN(x) && !Number.isNaN(y) && x < y;
}

/**
 * A merge is a transition with no way back (the document's only state row for a story): once a story id answered
 * 308, no later request for it answers 200, nor 304 (a conditional request with the merged story's old ETag
 * confirms no representation: the 308 is the answer), nor 404 while the story endpoint still serves stories (a story
 * answered 200 to a request sent after that 404 was in) (feed-story-merged-308).
 */
export function mergedStaysMerged(seen: Seen[]): Judged {
  const stories = seen.filter((s) => s.path.startsWith(STORY) && s.path.length > STORY.length && !s.cached);
  const bad: string[] = [];
  let judged = 0;
  for (const m of stories.filter((s) => s.status === 308)) {
    const later = stories.filter((s) => storyId(s) === storyId(m) && s.sent > m.received && s.status !== 308);
    judged += stories.filter((s) => storyId(s) === storyId(m) && s.sent > m.received).length;
    // A 304 to a validator the id's own 308s carried confirms the redirect: not judged.
    const redirectTags = stories.filter((s) => storyId(s) === storyId(m) && s.status === 308 && s.etag).map((s) => s.etag!);
    for (const s of later) {
      // An answer dated before the 308 is an older copy a cache without Age kept (one keyed on the client, say).
      if (datedBefore(s, m)) continue;
      const layerUp = s.status === 404 && stories.some((o) => o.status === 200 && o.sent > s.received);
      const asked = s.x.requestHeaders['if-none-match'] ?? '';
      // "*" matches any current representation: a deployment whose 308s carry an ETag has one, one whose 308s carry
      // none has none (a precondition on a request whose answer is not 2xx is ignored, RFC 9110 13.2.1: the 308).
      const confirms = asked.trim() === '*' ? redirectTags.length > 0 : redirectTags.some((e) => asked.split(',').some((a) => weakMatch(a.trim(), e)));
      const stale = s.status === 304 && !confirms;
      if (s.status === 200 || stale || layerUp) bad.push(`${at(m)} redirected to ${locationId(m) ?? '?'}, then ${at(s)}`);
    }
  }
  return { judged, bad: [...new Set(bad)] };
}

/**
 * A 308's Location points at the surviving story id: not at a story the run had already seen merged (answering 308
 * to a request whose answer was in before this one was sent) (feed-story-merged-308).
 */
export function locationSurvives(seen: Seen[]): Judged {
  const stories = seen.filter((s) => s.path.startsWith(STORY) && !s.cached);
  const bad: string[] = [];
  let judged = 0;
  for (const m of stories.filter((s) => s.status === 308)) {
    const to = locationId(m);
    if (to === undefined) continue;
    judged++;
    const merged = stories.find((s) => storyId(s) === to && s.status === 308 && s.received < m.sent);
    if (merged) bad.push(`${at(m)} points at ${to}, which had answered 308 (to ${locationId(merged) ?? '?'}) in ${at(merged)}`);
  }
  return { judged, bad };
}

/** Every 308 of a story carries a Location, conditional requests' included (feed-story-merged-308). */
export function redirectsLocated(seen: Seen[]): Judged {
  const redirects = seen.filter((s) => s.path.startsWith(STORY) && s.status === 308 && !s.cached);
  const bad = redirects
    .filter((s) => !s.x.responseHeaders?.['location'])
    .map((s) => `${at(s)} has no Location${s.x.requestHeaders['if-none-match'] ? ' (If-None-Match sent)' : ''}`);
  return { judged: redirects.length, bad };
}

const DAILIES = '/api/v1/dailies';
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The daily report a 200 of /dailies/latest or /dailies/{date} holds: its date and the report. */
function reportOf(s: Seen, root: string, datePath: string): { date: string; report: unknown } | undefined {
  if (s.status !== 200 || !s.path.startsWith(`${DAILIES}/`)) return undefined;
  const report = field(s.body, root);
  const date = field(report, datePath);
  return typeof date === 'string' && DATE.test(date) ? { date, report } : undefined;
}

/**
 * Past reports are immutable: every 200 of the run that held the report of one date held the same report — by its
 * URL (/dailies/{date} or /dailies/latest) the same content and ETag, and its generatedAt, where both carry one, the
 * same in the archive's entry for that date too (feed-dailies-immutable). The archive is "a date index of past
 * reports": every report it lists is a past one, the newest included.
 */
export function dailySame(seen: Seen[], p: { root: string; date: string; list: string; entryDate: string }): Judged {
  const bad: string[] = [];
  let judged = 0;
  const first = new Map<string, { content: string; s: Seen }>();
  const stamped = new Map<string, { v: unknown; s: Seen }>();
  const stamp = (date: string, v: unknown, s: Seen) => {
    if (typeof v !== 'string') return;
    const was = stamped.get(date);
    if (!was) return void stamped.set(date, { v, s });
    judged++;
    if (was.v !== v) bad.push(`the report of ${date}: generatedAt ${JSON.stringify(was.v)} in ${at(was.s)}, ${JSON.stringify(v)} in ${at(s)}`);
  };
  // Each URL's report against the first one the run read there (a new ETag on the same content is the validator's
  // rule, feed-etag-stable, not this one).
  const sameAsFirst = (k: string, date: string, content: string, s: Seen, differ: (was: Seen) => string) => {
    const was = first.get(k);
    if (!was) return void first.set(k, { content, s });
    judged++;
    if (was.content !== content) bad.push(`the report of ${date}: ${at(was.s)} and ${at(s)} differ in content (${differ(was.s)})`);
  };
  for (const s of seen.filter((e) => (e.body !== undefined || e.digest) && !e.cached)) {
    if (s.body === undefined) {
      // A report by date longer than the recorder keeps: compared by its digest (taken whole, keys sorted) with the
      // URL's other such answers only (one read whole is not compared with one past the bound).
      if (s.status === 200 && isReportByDate(s.path))
        sameAsFirst(`digest ${s.path}`, s.path.slice(DAILIES.length + 1), s.digest!, s, () => 'bodies longer than the recorder keeps: their digests differ');
      continue;
    }
    if (s.path === DAILIES && s.status === 200) {
      const list = field(s.body, p.list);
      if (Array.isArray(list)) for (const e of list) stamp(String(field(e, p.entryDate)), field(e, 'generatedAt'), s);
      continue;
    }
    const r = reportOf(s, p.root, p.date);
    if (!r) continue;
    stamp(r.date, field(r.report, 'generatedAt'), s);
    const k = `${s.path === `${DAILIES}/latest` ? 'latest' : 'by-date'} ${r.date}`;
    sameAsFirst(k, r.date, canonical(r.report), s, (was) => `ETag ${was.etag} and ${s.etag}`);
  }
  return { judged, bad };
}

/** A report's own URL: /api/v1/dailies/{YYYY-MM-DD}. */
export const isReportByDate = (path: string): boolean => path.startsWith(`${DAILIES}/`) && DATE.test(path.slice(DAILIES.length + 1));

/**
 * The latest daily report is the archive's newest entry, and neither goes back: once the run saw a report of date D
 * published (in the archive, as the latest, or by its date), no archive answered later has a newest entry older than
 * D, and no later latest report is older than D (feed-dailies-latest).
 */
export function dailyHeadNeverOlder(seen: Seen[], p: { root: string; date: string; list: string; entryDate: string }): Judged {
  const heads: { s: Seen; head: string; judged: boolean }[] = [];
  for (const s of seen.filter((e) => e.status === 200 && e.body !== undefined)) {
    if (s.path === DAILIES) {
      const list = field(s.body, p.list);
      const dates = Array.isArray(list) ? list.map((e) => field(e, p.entryDate)).filter((d): d is string => typeof d === 'string' && DATE.test(d)) : [];
      if (dates.length) heads.push({ s, head: dates.sort().pop()!, judged: true });
    } else {
      const r = reportOf(s, p.root, p.date);
      if (r) heads.push({ s, head: r.date, judged: s.path === `${DAILIES}/latest` });
    }
  }
  const bad: string[] = [];
  let judged = 0;
  for (const h of heads.filter((e) => e.judged && !e.s.cached)) {
    const before = heads.filter((e) => e.s.received < h.s.sent).sort((a, b) => (a.head < b.head ? -1 : 1));
    const newest = before.pop();
    if (!newest) continue;
    judged++;
    if (h.head < newest.head) bad.push(`${at(h.s)} has ${h.head} as its newest report, after ${at(newest.s)} had shown ${newest.head} published`);
  }
  return { judged, bad };
}

/**
 * A resource's answers never go back to a version the run saw replaced (feed-hot-topics-latest: it "reflects the
 * latest successfully published ranking"): once an answer showing version B arrived after one showing A had, no answer
 * sent after B's arrival shows A again, by its 200's content (a 304 confirming a replaced ETag is
 * feed-changed-resource-200's to judge). Answers from a cache (Age above 0) are not judged, nor ones asked with a query.
 */
export function versionsNeverReturn(seen: Seen[], path: string): Judged {
  const answers = seen.filter((s) => s.path === path && s.key === path && s.x.method === 'GET' && !s.cached && s.status === 200);
  const shown = answers.map((s) => ({ s, c: contentOf(s) })).filter((v): v is { s: Seen; c: string } => v.c !== undefined);
  const bad: string[] = [];
  let judged = 0;
  for (const v of shown) {
    const earlier = shown.filter((b) => b.s.received <= v.s.sent);
    if (!earlier.length) continue;
    judged++;
    // B arrived before v was sent, and showed another version than one (A, v's) that had arrived before B was sent.
    // An answer dated before the one that replaced its version is an older copy a cache without Age kept: not judged.
    const b = earlier.find((b) => b.c !== v.c && !datedBefore(v.s, b.s) && earlier.some((a) => a.c === v.c && a.s.received <= b.s.sent));
    if (b) bad.push(`${at(v.s)} shows again the version that ${at(b.s)} had replaced`);
  }
  return { judged, bad };
}

/**
 * Every archive answer of the run holds at most its `limit` dates (`byDefault` without one), and, since past reports stay, at
 * least as many as an earlier answer listed, up to that limit (feed-dailies-limit-range).
 */
export function archiveSizes(seen: Seen[], list: string, byDefault: number): Judged {
  const bad: string[] = [];
  let judged = 0;
  let most: { n: number; s: Seen } | undefined;
  for (const s of seen.filter((e) => e.path === DAILIES && e.status === 200 && e.body !== undefined && !e.cached)) {
    const entries = field(s.body, list);
    if (!Array.isArray(entries)) continue;
    const limit = Number(new URL(s.x.url).searchParams.get('limit') ?? byDefault);
    judged++;
    if (entries.length > limit) bad.push(`${at(s)} lists ${entries.length} dates for limit ${limit}`);
    else if (most && entries.length < Math.min(limit, most.n))
      bad.push(`${at(s)} lists ${entries.length} dates for limit ${limit}, after ${at(most.s)} had listed ${most.n}`);
    if (!most || entries.length > most.n) most = { n: entries.length, s };
  }
  return { judged, bad };
}

/**
 * Every archive answer of the run that lists two dates or more lists them newest first (feed-dailies-archive-order),
 * whatever its limit: `date` is the profile's path of an entry's date (YYYY-MM-DD, ordered as text).
 */
export function archiveOrder(seen: Seen[], list: string, date: string): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen.filter((e) => e.path === DAILIES && e.status === 200 && e.body !== undefined && !e.cached)) {
    const entries = field(s.body, list);
    if (!Array.isArray(entries) || entries.length < 2) continue;
    const dates = entries.map((e) => field(e, date));
    if (!dates.every((d): d is string => typeof d === 'string')) continue;
    judged++;
    const i = dates.findIndex((d, k) => k > 0 && d >= dates[k - 1]!);
    if (i > 0) bad.push(`${at(s)} lists ${dates[i]} after ${dates[i - 1]} (${dates.length} dates)`);
  }
  return { judged, bad };
}

/** One entry of a changes page, as the backlog comparison keys it: the item id, the operation and its time. */
export interface ChangeEntry {
  id: string;
  /** The id, operation and changedAt: one change. */
  change: string;
}

/** The entries of a changes page (profile paths: the list, an upsert's item id, a removal's id). */
export function changeEntries(body: unknown, p: { list: string; itemId: string; removedId: string }): ChangeEntry[] {
  const list = field(body, p.list);
  if (!Array.isArray(list)) return [];
  return list.map((ch) => {
    const op = field(ch, 'op');
    const id = String(field(ch, op === 'remove' ? p.removedId : p.itemId));
    return { id, change: `${id} ${String(op)} ${String(field(ch, 'changedAt'))}` };
  });
}

/**
 * The change feed is incremental: an answer that lists changes hands out a cursor past them. One that returns the very
 * cursor it was asked with, having listed changes of more than one instant (or said more pages follow), leads the next
 * call to the same changes again (a poller never moves on). A feed whose cursor is an inclusive time boundary may list
 * the changes of that one instant again under the same cursor: not judged. Judged on every changes 200 of the run that
 * listed a change (not one from a cache), whole or read from its outline.
 */
export function changesCursorMoves(seen: Seen[], p: { list: string; cursorParam: string; nextCursor: string; hasMore: string }): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen) {
    if (s.path !== '/api/v1/selected/changes' || s.status !== 200 || s.cached) continue;
    const asked = new URL(s.x.url).searchParams.get(p.cursorParam);
    const next = field(topOf(s), p.nextCursor);
    const rows = listRows(s, p.list);
    const listed = rows?.length ?? s.lengths?.[p.list];
    if (!asked || typeof next !== 'string' || !listed) continue;
    judged++;
    const instants = new Set((rows ?? []).map((r) => String(r.changedAt)));
    const more = field(topOf(s), p.hasMore) === true;
    if (next === asked && (more || instants.size > 1))
      bad.push(
        `${at(s)} listed ${listed} change(s)${more ? ', said more follow,' : ` of ${instants.size} instants`} and handed out the cursor it was asked with`,
      );
  }
  return { judged, bad };
}

/**
 * The changes a walk in small pages lost: each change one large page from the same cursor held both before the walk
 * and after it (so it was in the feed from that cursor all along), while no page of the walk named its item at all (a
 * walk that folded it into a later change of the item still names the item).
 */
export function lostByWalk(before: ChangeEntry[], walk: ChangeEntry[], after: ChangeEntry[]): ChangeEntry[] {
  const walked = new Set(walk.map((e) => e.id));
  const still = new Set(after.map((e) => e.change));
  return before.filter((e) => still.has(e.change) && !walked.has(e.id));
}

/** The items listings' windows (the document's `window` values; 7d by default). */
const WINDOWS: Record<string, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000 };

/**
 * A listing holds only rows of its window: "Older rows may leave the window between requests", and once left they
 * are not listed. The target's own "now" is bounded from below by what it said before: the Date of every answer
 * received before the listing was requested (the target's clock had reached it), so a row whose time under `by` lies
 * more than the window before that is outside the window the listing covers (feed-items-by-timeline,
 * feed-items-by-published). No tolerance is needed and none is taken: the bound never runs ahead of the target's
 * clock. An answer from a cache (any Age header) is not judged.
 */
export function rowsInWindow(seen: Seen[], by: 'timeline' | 'published', p: { list: string; id: string }): Judged {
  const bad: string[] = [];
  let judged = 0;
  // The origin's own 200s (an error may come from an edge in front of it, a cached answer carries Age).
  const dated = seen
    .filter((d) => d.status === 200 && d.x.responseHeaders?.['age'] === undefined && dateOf(d) !== undefined)
    .sort((a, b) => a.received - b.received);
  // The latest Date among the answers received up to each one (in order of receipt): one pass, not one per listing.
  const latest: Seen[] = [];
  for (const d of dated) latest.push(latest.length && dateOf(latest.at(-1)!)! >= dateOf(d)! ? latest.at(-1)! : d);
  for (const s of seen) {
    if (s.path !== ITEMS || s.status !== 200 || s.body === undefined || s.x.responseHeaders?.['age'] !== undefined) continue;
    const q = new URL(s.x.url).searchParams;
    const span = WINDOWS[q.get('window') ?? '7d'];
    const list = field(s.body, p.list);
    if ((q.get('by') ?? 'timeline') !== by || span === undefined || !Array.isArray(list)) continue;
    // The latest Date the target had sent before this request (its clock had reached it); a ms apart at least, as
    // the record's times are whole ms.
    const earlier = latest[lastBefore(dated, s.sent - 1)];
    if (!earlier) continue;
    const bound = dateOf(earlier)! - span;
    judged++;
    const outside = (list as unknown[]).filter((item): item is Record<string, unknown> => {
      const t = typeof item === 'object' && item !== null ? effectiveTime(item as Record<string, unknown>, by) : undefined;
      return t !== undefined && t < bound;
    });
    const first = outside[0];
    if (first)
      bad.push(
        `${at(s)} lists ${outside.length} row(s) before its window (window=${q.get('window') ?? '7d'}), e.g. ${String(field(first, p.id))} at ${new Date(effectiveTime(first, by)!).toISOString()} under by=${by}, when the target's clock had reached ${new Date(dateOf(earlier)!).toISOString()} (the Date of ${at(earlier)})`,
      );
  }
  return { judged, bad };
}

/** The index of the last of `sorted` (in order of receipt) received before `t`, -1 when none was. */
function lastBefore(sorted: Seen[], t: number): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.received < t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * The merged ids whose 308s named more than one story during the run, each as "id → B, then C": the story it had
 * merged into was merged in turn, and its Location moved on to the story that stands (the reading the run saw).
 */
export function movedLocations(seen: Seen[]): string[] {
  const by = new Map<string, string[]>();
  for (const s of seen.filter((e) => e.status === 308 && e.path.startsWith(STORY) && !e.cached)) {
    const to = locationId(s);
    const list = by.get(storyId(s)) ?? [];
    if (to !== undefined && list.at(-1) !== to) by.set(storyId(s), [...list, to]);
  }
  return [...by].filter(([, l]) => l.length > 1).map(([id, l]) => `${id} → ${l.join(', then ')}`);
}

/** One value a body holds, where it sits in the body, and what its schema says of it (undefined: it satisfies it). */
export interface BodyValue {
  where: string;
  value: unknown;
}

/**
 * Every value a rule selects from the run's 200 bodies, judged by its schema (`problem` gives the schema's complaint,
 * undefined when the value satisfies it): continuation and search pages, every parameter value, every story and date
 * the run asked for. A body the recorder cut at its size bound, or that is not JSON, is not judged (seenOf leaves it
 * out); `cut` counts those of the rule's operations.
 */
export function bodiesMatch(
  seen: Seen[],
  of: (path: string) => boolean,
  select: (body: unknown, path: string) => BodyValue[],
  problem: (value: unknown) => string | undefined,
): Judged & { cut: number } {
  const bad: string[] = [];
  let judged = 0;
  let cut = 0;
  for (const s of seen.filter((e) => e.status === 200 && e.x.method === 'GET' && of(e.path))) {
    if (s.body === undefined) {
      cut++;
      continue;
    }
    for (const v of select(s.body, s.path)) {
      judged++;
      const p = problem(v.value);
      if (p !== undefined) bad.push(`${at(s)}: ${v.where} ${JSON.stringify(v.value)?.slice(0, 80)} (${p})`);
    }
  }
  return { judged, bad, cut };
}

/**
 * nextPage is the continuation cursor for the NEXT page (feed-snapshot-paging): a snapshot page answered to `page=P`
 * whose nextPage is P again sends the walk back to the page it is on (it repeats that page's rows, or never ends).
 */
export function snapshotNextPageMoves(seen: Seen[], pageParam = 'page'): Judged {
  return nextPageMoves(seen, { path: '/api/v1/selected/snapshot', param: pageParam, next: 'nextPage', hasMore: 'hasMore', what: 'nextPage' });
}

/**
 * No continuation page of a paged listing of the run (a request carrying its page parameter) says there is more and
 * gives as its next cursor the one it was asked with: a client following it would read that page again, for ever.
 */
export function nextPageMoves(seen: Seen[], o: { path: string; param: string; next: string; hasMore: string; what: string }): Judged {
  const continued = seen.filter(
    (s) => s.path === o.path && s.status === 200 && s.x.method === 'GET' && topOf(s) !== undefined && new URL(s.x.url).searchParams.get(o.param) !== null,
  );
  const bad = continued
    .filter((s) => field(topOf(s), o.hasMore) !== false && field(topOf(s), o.next) === new URL(s.x.url).searchParams.get(o.param))
    .map((s) => `${at(s)}: ${o.what} is the cursor it was asked with`);
  return { judged: continued.length, bad };
}

/**
 * Every snapshot nextPage of a page that said there was more, sent back by the run as `page` with the limit of the
 * page that gave it (none when it had none), was accepted: not refused with a 400 (feed-snapshot-paging: `page` is the
 * "opaque cursor taken from the previous response's nextPage"). A request that also sends another fields value is not
 * judged (the lock may refuse it), nor one answered 429 or 5xx.
 */
export function nextPagesAccepted(seen: Seen[], pageParam = 'page'): Judged {
  const path = '/api/v1/selected/snapshot';
  /** Each nextPage handed out, with the limit its page was asked with and when it arrived. */
  const given = new Map<string, { limit: string | null; received: number }>();
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen.filter((x) => x.path === path && x.x.method === 'GET')) {
    const q = new URL(s.x.url).searchParams;
    const token = q.get(pageParam);
    const from = token === null ? undefined : given.get(token);
    const others = [...q.keys()].filter((k) => k !== pageParam);
    if (from && from.received <= s.sent && others.every((k) => k === 'limit') && q.get('limit') === from.limit && s.status < 500 && s.status !== 429) {
      judged++;
      if (s.status === 400) bad.push(`${at(s)} refused the nextPage a snapshot page of the run had given`);
    }
    // Only a page that says there is more hands out a token to follow ("Request pages while hasMore is true").
    const next = s.status === 200 && field(topOf(s), 'hasMore') === true ? field(topOf(s), 'nextPage') : undefined;
    if (typeof next === 'string' && next !== '') given.set(next, { limit: q.get('limit'), received: s.received });
  }
  return { judged, bad };
}

/**
 * Every continuation page of a snapshot walk of the run carries the sync cursor its walk's first page gave (a page is
 * of the walk whose earlier page handed out its page token as nextPage) (feed-snapshot-cursor-stable).
 */
export function snapshotWalkCursors(seen: Seen[], pageParam = 'page'): Judged {
  // A page longer than the recorder keeps is read from its outline: its own fields (cursor, nextPage) are kept whole.
  const of = seen.filter((s) => s.path === '/api/v1/selected/snapshot' && s.status === 200 && s.x.method === 'GET' && topOf(s) !== undefined);
  type Walk = { cursor: string; first: Seen };
  /** The walks that handed out each nextPage token (two walks of one query may hand out the same token). */
  const walksOf = new Map<string, Walk[]>();
  const bad: string[] = [];
  let judged = 0;
  for (const s of of) {
    const token = new URL(s.x.url).searchParams.get(pageParam);
    const cursor = JSON.stringify(field(topOf(s), 'cursor'));
    let walks: Walk[] = token === null ? [{ cursor, first: s }] : (walksOf.get(token) ?? []);
    if (token !== null && walks.length) {
      judged++;
      const same = walks.filter((w) => w.cursor === cursor);
      if (!same.length) bad.push(`${at(s)} gives cursor ${cursor}, where its walk's first page ${at(walks[0]!.first)} gave ${walks[0]!.cursor}`);
      else walks = same;
    }
    const next = field(topOf(s), 'nextPage');
    if (walks.length && typeof next === 'string') walksOf.set(next, [...(walksOf.get(next) ?? []), ...walks]);
  }
  return { judged, bad };
}

/**
 * Every continuation page of a snapshot walk of the run keeps the `fields` value its walk began with (a page is of the
 * walk whose earlier page handed out its page token as nextPage): on a walk begun with fields=default every item
 * carries what minimal drops, on one begun with fields=minimal none does, on one begun without fields what its first
 * page showed (feed-snapshot-fields-locked). `dropped` names the fields of an item that minimal drops and the item
 * carries; `list` reads a page's items. A first page that asked for fields=minimal is held to it too, its last
 * rows included (a page longer than the recorder keeps is read from its outline: its first and last entries).
 */
export function snapshotWalkFields(seen: Seen[], o: { list: (body: unknown) => unknown[]; dropped: (item: unknown) => string[]; all: number }): Judged {
  // A page longer than the recorder keeps is read from its outline, which keeps each list's first and last entries
  // whole (a one-page walk at a large limit is the page whose last rows a client reads last).
  const of = seen
    .filter((s) => s.path === '/api/v1/selected/snapshot' && s.status === 200 && (s.body ?? s.outline) !== undefined)
    .map((s) => (s.body === undefined ? { ...s, body: s.outline } : s));
  /** Whether an item shows the fields value `f`: what minimal drops, all of it (default) or none (minimal). */
  const shows = (i: unknown, f: string) => o.dropped(i).length === (f === 'minimal' ? 0 : o.all);
  /** The fields value of the walks that handed out each nextPage token. */
  const walksOf = new Map<string, Set<string>>();
  const bad: string[] = [];
  let judged = 0;
  for (const s of of) {
    const q = new URL(s.x.url).searchParams;
    const token = q.get('page');
    const items = o.list(s.body);
    // A walk begun without fields has the default value, whichever it is (feed-snapshot-fields-minimal judges which):
    // read from its first page's items, all carrying what minimal drops or none.
    const shown = () => (items.length ? ['default', 'minimal'].find((f) => items.every((i) => shows(i, f))) : undefined);
    const first = token === null ? (q.get('fields') ?? shown()) : undefined;
    const fields = token === null ? (first === undefined ? undefined : new Set([first])) : walksOf.get(token);
    if (!fields || ![...fields].every((f) => f === 'default' || f === 'minimal')) continue;
    // A continuation page keeps its walk's value; a first page that asked for minimal explicitly shows it as well (a
    // default one is not held to carrying both fields here: summary's presence is feed-item-summary-present's).
    if (token !== null || q.get('fields') === 'minimal') {
      judged++;
      if (![...fields].some((f) => items.every((i) => shows(i, f)))) {
        const off = items.find((i) => ![...fields].some((f) => shows(i, f)));
        bad.push(
          `${at(s)}, ${token === null ? 'the first page' : 'a page'} of a walk begun with fields=${[...fields].join(' or ')}, has an item carrying ${o.dropped(off).join(' and ') || 'neither field fields=minimal drops'}`,
        );
      }
    }
    const next = field(s.body, 'nextPage');
    if (typeof next === 'string') walksOf.set(next, new Set([...(walksOf.get(next) ?? []), ...fields]));
  }
  return { judged, bad };
}

/**
 * No items cursor refused with invalid_cursor in the run is served later in the run with the same query: a cursor by
 * the timeline whose anchor left the window cannot come back into it, so one served afterwards was refused while its
 * anchor was in the window (feed-items-cursor-no-timer). Judged for a cursor whose anchor (the last row of the page
 * that gave it, where the run read it) lay more than ten minutes inside the window when it was refused (instances a
 * little apart in their clocks may disagree at the edge), and not on an answer a cache gave (Age above 0).
 * `code` reads a refusal's problem code; `list` and `next` read a page.
 */
export function refusedCursorsStayRefused(seen: Seen[], o: { code: (s: Seen) => unknown; list: (body: unknown) => unknown[]; next: string }): Judged {
  const items = seen.filter((s) => s.path === ITEMS && s.x.method === 'GET' && !s.cached);
  /** The timeline time of each cursor's anchor: the last row of the page that gave it. */
  const anchorAt = new Map<string, number>();
  // A page longer than the recorder keeps is read from its outline, which keeps each list's last entry.
  for (const s of items.filter((x) => x.status === 200 && (x.body ?? x.outline) !== undefined)) {
    const body = s.body ?? s.outline;
    const next = field(body, o.next);
    const last = o.list(body).at(-1);
    const time = typeof last === 'object' && last !== null ? effectiveTime(last as Record<string, unknown>, 'timeline') : undefined;
    if (typeof next === 'string' && time !== undefined && !anchorAt.has(next)) anchorAt.set(next, time);
  }
  const params = (s: Seen) => new URL(s.x.url).searchParams;
  const byTimeline = (s: Seen) => (params(s).get('by') ?? 'timeline') === 'timeline' && params(s).get('cursor') !== null;
  const refused = new Map<string, Seen>();
  const bad: string[] = [];
  let judged = 0;
  for (const s of items.filter(byTimeline)) {
    const cursor = params(s).get('cursor')!;
    if (s.status === 400 && o.code(s) === 'invalid_cursor') {
      const anchor = anchorAt.get(cursor);
      const window = params(s).get('window') ?? '7d';
      const windowMs = WINDOW_MS[window];
      // An anchor not read (its page longer than the recorder keeps): judged in the 7d window, whose edge lies a week
      // back (a cursor anchored within a clock's skew of it is all but never met); not in the 24h window, whose edge
      // cursors the run sends on purpose.
      const inside = anchor === undefined ? window === '7d' : windowMs !== undefined && anchor > s.sent - windowMs + 10 * 60_000;
      if (inside && !refused.has(s.key)) refused.set(s.key, s);
      continue;
    }
    const before = refused.get(s.key);
    // Later: sent after the refusal was received (two requests in flight together may be answered in either order).
    if (!before || s.status !== 200 || s.sent < before.received) continue;
    judged++;
    bad.push(`${at(before)} refused the cursor as invalid_cursor, its anchor well inside the window, and ${at(s)} served the same request afterwards`);
    refused.delete(s.key);
  }
  return { judged: judged + refused.size, bad };
}

/**
 * No items page the run followed a cursor to holds a row of the page that gave it that cursor (feed-items-paging):
 * keyset paging by the listing's sort key (the timeline's discoveredAt, or publishedAt under by=published: neither
 * changes) leads on after the anchor, the issuing page's last row, and every row of that page sorts at or before it,
 * whenever the cursor is followed: seconds later, after rows arrived, after a retry. A continuation page's `by` is its
 * URL's or else its walk's first page's. Pages of a search (q) are not judged; `list`, `id` and `next` read a page.
 */
export function cursorPagesLeadOn(seen: Seen[], o: { list: string; id: (item: unknown) => string; next: string }): Judged {
  // A page longer than the recorder keeps is read from its row index (ids and times) and its outline (its cursor).
  const of = seen.filter((s) => s.path === ITEMS && s.x.method === 'GET' && s.status === 200 && listRows(s, o.list) !== undefined);
  type By = 'timeline' | 'published';
  /** The rows of the pages that handed out each cursor (with their sort times), the anchor's time, the first such page, and the walk's order. */
  const issued = new Map<
    string,
    { rows: Set<string>; times: Map<string, number | undefined>; anchor: number | undefined; anchorId: string | undefined; by: Seen; sort: By; search: boolean }
  >();
  const timeOf = (r: unknown, sort: By) => (typeof r === 'object' && r !== null ? effectiveTime(r as Record<string, unknown>, sort) : undefined);
  const bad: string[] = [];
  let judged = 0;
  for (const s of of) {
    const q = new URL(s.x.url).searchParams;
    const cursor = q.get('cursor');
    const from = cursor === null ? undefined : issued.get(cursor);
    const own = q.get('by');
    const sort: By | undefined = own === null ? (from?.sort ?? 'timeline') : own === 'timeline' || own === 'published' ? own : undefined;
    const search = q.get('q') !== null || (from?.search ?? false);
    if (sort === undefined) continue;
    if (from && !search && from.sort === sort && s.sent >= from.by.received && !s.cached) {
      judged++;
      // A row whose sort time is what it was, and not the anchor's (a tie broken by a field that may change), is still
      // before the anchor, and the anchor is never after itself: a row whose time moved (publishedAt filled in later)
      // may rightly come after it.
      const again = listRows(s, o.list)!
        .filter((r) => {
          const t = timeOf(r, sort);
          return from.rows.has(o.id(r)) && t !== undefined && t === from.times.get(o.id(r)) && (t !== from.anchor || o.id(r) === from.anchorId);
        })
        .map(o.id);
      if (again.length) bad.push(`${at(s)} holds ${again.slice(0, 3).join(', ')} of the page that gave its cursor, ${at(from.by)}`);
    }
    const next = field(s.body ?? s.outline, o.next);
    if (typeof next === 'string' && !s.cached) {
      const rows = listRows(s, o.list)!;
      const last = rows.at(-1);
      const known = issued.get(next) ?? {
        rows: new Set<string>(),
        times: new Map(),
        anchor: timeOf(last, sort),
        anchorId: last === undefined ? undefined : o.id(last),
        by: s,
        sort,
        search,
      };
      for (const r of rows) {
        known.rows.add(o.id(r));
        known.times.set(o.id(r), timeOf(r, sort));
      }
      issued.set(next, known);
    }
  }
  return { judged, bad };
}

/**
 * Every paged answer of the run that says there is more gives the cursor of its next page (feed-items-paging,
 * feed-snapshot-paging: a client follows it while hasMore is true). `pages` names each paged path's fields.
 */
export function moreHasNext(seen: Seen[], pages: { path: string; hasMore: string; next: string }[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  // A page longer than the recorder keeps is read from its outline: its own fields are kept whole there.
  for (const s of seen.filter((x) => x.status === 200 && topOf(x) !== undefined && x.x.method === 'GET')) {
    const body = topOf(s);
    const p = pages.find((q) => q.path === s.path);
    if (!p || field(body, p.hasMore) !== true) continue;
    judged++;
    const next = field(body, p.next);
    if (typeof next !== 'string' || next === '') {
      bad.push(`${at(s)} says ${p.hasMore} true and gives ${p.next} ${JSON.stringify(next)}`);
    }
  }
  return { judged, bad };
}

/**
 * Every page of a paged operation says whether there is more: where some 200 page of `path` the run read carries a
 * boolean at `hasMore` (the deployment's paging data), every other 200 page of it does too, the last page included
 * (false there). A deployment whose pages never carry that field is not judged (its names are its own).
 */
export function pagesSayMore(seen: Seen[], page: { path: string; hasMore: string }): Judged {
  const pages = seen.filter((x) => x.path === page.path && x.status === 200 && x.x.method === 'GET' && topOf(x) !== undefined);
  if (!pages.some((s) => typeof field(topOf(s), page.hasMore) === 'boolean')) return { judged: 0, bad: [] };
  const bad: string[] = [];
  for (const s of pages) {
    const more = field(topOf(s), page.hasMore);
    if (typeof more !== 'boolean')
      bad.push(`${at(s)} gives ${page.hasMore} ${more === undefined ? '(absent)' : JSON.stringify(more)}, where other pages of it give a boolean`);
  }
  return { judged: pages.length, bad };
}

/** Every string under a `links` object of a body, with where it was found. */
function linksIn(value: unknown, where = ''): { at: string; link: string }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => linksIn(v, `${where}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
    const here = where ? `${where}.${k}` : k;
    if (k === 'links' && typeof v === 'object' && v !== null && !Array.isArray(v))
      return Object.entries(v as Record<string, unknown>).flatMap(([n, l]) => (typeof l === 'string' ? [{ at: `${here}.${n}`, link: l }] : []));
    return linksIn(v, here);
  });
}

/** A documented operation's path under /api/, with whatever version segment it has (none, v1, v2, ...). */
const OPERATION_UNDER_API = /^\/api\/(v\d+\/)?(?:items|hot-topics|stories\/[^/]+|dailies|dailies\/[^/]+|selected\/snapshot|selected\/changes)\/?$/;

/**
 * Every GET 200 of the run answered to an If-None-Match of one entity tag, the very ETag the 200 carries, as it carries
 * it: the server says the client's version is the current one, so the answer is 304 ("an unchanged resource answers
 * 304"; feed-conditional-304), whatever the request was (a merged story's last ETag sent again, a cursor page
 * revalidated). Lists, `*` and a form the suite made of a tag (weak for strong, or the reverse) are
 * feed-if-none-match-forms' matter, not this rule's; an answer from a shared cache (Age above 0) is not judged.
 */
export function matchingEtagAnsweredFull(seen: Seen[]): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen) {
    const sent = s.x.requestHeaders['if-none-match']?.trim();
    if (s.x.method !== 'GET' || s.cached || !sent || !/^(?:W\/)?"[^"]*"$/.test(sent)) continue;
    judged++;
    if (s.status === 200 && s.etag === sent) bad.push(`${at(s)}: If-None-Match ${sent} answered 200 carrying that same ETag, where 304 is required`);
  }
  return { judged, bad };
}

/**
 * Every link of the run's 200 bodies that leads to one of the documented operations (under the base URL, /api/ and an
 * operation's path, with or without a version segment) leads to it under /api/v1 ("All paths are under the prefix
 * /api/v1"; feed-paths-v1-prefix). `pathOf` gives a URL's path under the base URL (undefined: outside it); links to
 * other hosts, pages and anything else under /api/ (a redirector, an image proxy) are not judged.
 */
export function apiLinksUnderV1(seen: Seen[], pathOf: (url: string) => string | undefined): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen.filter((x) => x.status === 200 && x.body !== undefined)) {
    for (const { at: where, link } of linksIn(s.body)) {
      let url: URL;
      try {
        url = new URL(link, s.x.url);
      } catch {
        continue;
      }
      const p = pathOf(url.href);
      const op = p === undefined ? null : OPERATION_UNDER_API.exec(p);
      if (url.origin !== new URL(s.x.url).origin || !op) continue;
      judged++;
      if (op[1] !== 'v1/') bad.push(`${at(s)}: ${where} ${link} leads to ${p}, a documented operation outside /api/v1`);
    }
  }
  return { judged, bad };
}

/**
 * Every small first snapshot page of the run (limit at most 5) says hasMore true when the run's snapshot pages received
 * before it was asked showed ten or more items beyond its limit (feed-snapshot-paging: "true while further pages exist"; the margin is for a
 * live set that loses a few items meanwhile). `list` and `id` read a page.
 */
export function smallSnapshotPagesHaveMore(seen: Seen[], o: { list: (body: unknown) => unknown[]; id: (item: unknown) => string }): Judged {
  const pages = seen.filter((s) => s.path === '/api/v1/selected/snapshot' && s.status === 200 && s.body !== undefined && s.x.method === 'GET' && !s.cached);
  const bad: string[] = [];
  let judged = 0;
  for (const s of pages) {
    const q = new URL(s.x.url).searchParams;
    const limit = Number(q.get('limit'));
    if (q.get('page') !== null || !Number.isInteger(limit) || limit < 1 || limit > 5) continue;
    // The items the run's pages showed before this page was asked: the set then held at least those (less a few left).
    const ids = new Set(pages.filter((p) => p.received <= s.sent).flatMap((p) => o.list(p.body).map(o.id)));
    if (ids.size < limit + 10) continue;
    judged++;
    if (field(s.body, 'hasMore') !== true)
      bad.push(`${at(s)} says hasMore ${JSON.stringify(field(s.body, 'hasMore'))}, where the run's snapshot pages showed ${ids.size} items`);
  }
  return { judged, bad };
}

/**
 * Every story reference of the run (storyline, related) whose link leads to the story endpoint names the reference's
 * own id there (feed-story-references: a client follows the reference to the story it names). `refs` reads a story
 * body's references, `id` a reference's id; `pathOf` gives a URL's path under the base URL.
 */
export function referenceLinksNameTheirIds(
  seen: Seen[],
  o: { refs: (body: unknown) => unknown[]; id: (ref: unknown) => unknown; pathOf: (url: string) => string | undefined },
): Judged {
  /** The story each merged id of the run redirected to (its 308's Location). */
  const survivor = new Map<string, string>();
  for (const s of seen.filter((x) => x.path.startsWith(STORY) && x.status === 308)) {
    const to = locationId(s);
    if (to !== undefined) survivor.set(storyId(s), to);
  }
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen.filter((x) => x.path.startsWith(STORY) && x.status === 200 && x.body !== undefined)) {
    for (const ref of o.refs(s.body)) {
      const id = o.id(ref);
      if (typeof id !== 'string') continue;
      // The reference's own API link (links.api, real-deployments.md): other links it carries may lead anywhere.
      for (const { at: where, link } of linksIn({ ref }).filter((l) => l.at === 'ref.links.api')) {
        let p: string | undefined;
        try {
          p = o.pathOf(new URL(link, s.x.url).href);
        } catch {
          continue;
        }
        const m = p === undefined ? null : /^\/api\/v1\/stories\/([^/?#]+)$/.exec(p.split('?')[0]!);
        if (!m) continue;
        judged++;
        const named = decodeURIComponent(m[1]!);
        // A merged reference may link straight to the story its id redirects to (a 308 of the run says which).
        if (named !== id && survivor.get(id) !== named)
          bad.push(`${at(s)}: the reference ${String(id)} links (${where.replace(/^ref\./, '')}) to the story ${named}`);
      }
    }
  }
  return { judged, bad };
}

/** The filter an items first page was asked with: its mode as sent ('(default)' when absent) and its category, if one. */
function itemsFilter(s: Seen, issuedBy?: Map<string, string>): { mode: string; category?: string } | undefined {
  const q = new URL(s.x.url).searchParams;
  if (q.getAll('mode').length > 1 || q.getAll('category').length > 1 || q.getAll('cursor').length > 1) return undefined;
  const category = q.get('category')?.trim();
  // The mode as sent: a page without one is the default's, which is feed-items-defaults' to judge.
  const filter = { mode: q.get('mode') ?? '(default)', ...(category ? { category } : {}) };
  // A continuation page's filter is its cursor's query: judged only when the page that gave that cursor was asked
  // with the same filter its URL shows (a cursor sent with another query is the cursor rules' to judge).
  const cursor = q.get('cursor');
  if (cursor !== null && issuedBy?.get(cursor) !== JSON.stringify(filter)) return undefined;
  return filter;
}

/** The items pages of the run that answered a GET with 200. */
const itemsPages = (seen: Seen[]): Seen[] => seen.filter((x) => x.path === ITEMS && x.x.method === 'GET' && x.status === 200);

/** Each items cursor a page of the run gave, with the filter (mode, category) that page was asked with. */
function cursorFilters(seen: Seen[], next: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of itemsPages(seen)) {
    const c = field(topOf(s), next);
    const filter = typeof c === 'string' ? itemsFilter(s, out) : undefined;
    if (typeof c === 'string' && filter) out.set(c, JSON.stringify(filter));
  }
  return out;
}

/**
 * Every row of an items page holds the filter it was asked with (a continuation page's, when the page that gave its
 * cursor was asked with the same filter: `next` names where a page gives it), where the rows carry the field: with
 * mode=selected sent, none says it is not selected (a page without mode is the default's: feed-items-defaults); with
 * category=X, none has another of the listed categories (`categories`, compared without case). A page longer than the
 * recorder keeps is read from its row index.
 */
export function filteredRowsHold(
  seen: Seen[],
  o: { list: string; id: string; next?: string; selected?: string; category?: string; categories?: string[] },
): Judged {
  const listed = new Set((o.categories ?? []).map((c) => c.toLowerCase()));
  const bad: string[] = [];
  let judged = 0;
  const issuedBy = o.next ? cursorFilters(seen, o.next) : undefined;
  for (const s of itemsPages(seen)) {
    const filter = itemsFilter(s, issuedBy);
    const rows = listRows(s, o.list);
    if (!filter || !rows) continue;
    for (const row of rows) {
      const id = String(field(row, o.id));
      if (filter.mode === 'selected' && o.selected && field(row, o.selected) !== undefined) {
        judged++;
        if (field(row, o.selected) === false) bad.push(`${at(s)}: item ${id} says ${o.selected}: false in a mode=selected list`);
      }
      // Only a row of another listed category is judged: a deployment may label rows in another vocabulary (a
      // translated label), and a row without the field says nothing.
      const c = o.category ? field(row, o.category) : undefined;
      if (filter.category !== undefined && typeof c === 'string') {
        judged++;
        const mine = c.trim().toLowerCase();
        if (mine !== filter.category.toLowerCase() && listed.has(mine))
          bad.push(`${at(s)}: item ${id} has ${o.category} ${JSON.stringify(c)} in a category=${filter.category} list`);
      }
    }
  }
  return { judged, bad };
}

/**
 * Every first page of `page.path` the run asked with `limit` holds at most that many rows (feed-items-limit-range,
 * feed-snapshot-limit-range: the limit is the page size), every query, fields=minimal too. A page longer than the
 * recorder keeps is counted by the length it recorded.
 */
export function pagesWithinLimit(seen: Seen[], page: { path: string; list: string; max: number; byDefault?: number }): Judged {
  const bad: string[] = [];
  let judged = 0;
  for (const s of seen.filter((x) => x.path === page.path && x.x.method === 'GET' && x.status === 200)) {
    const q = new URL(s.x.url).searchParams;
    const limits = q.getAll('limit');
    // A continuation page may keep the limit of its walk's first page (the cursor is bound to the query): not judged.
    if (q.has('cursor') || q.has('page')) continue;
    // With `byDefault`, the first pages asked without limit, held to the default; else those asked with one.
    let limit: number;
    if (page.byDefault !== undefined) {
      if (limits.length !== 0) continue;
      limit = page.byDefault;
    } else {
      if (limits.length !== 1 || !/^[1-9]\d*$/.test(limits[0]!) || Number(limits[0]) > page.max) continue;
      limit = Number(limits[0]);
    }
    const n = listRows(s, page.list)?.length ?? s.lengths?.[page.list];
    if (n === undefined) continue;
    judged++;
    if (n > limit) bad.push(`${at(s)} held ${n} rows${page.byDefault !== undefined ? `, asked without limit (the default is ${limit})` : ''}`);
  }
  return { judged, bad };
}

/**
 * An items first page's query as the completeness rules compare two: its window and mode apart (absent: the default),
 * every other parameter as sent (a default is not filled in: the rules compare pages whose defaults are the same,
 * whatever they are).
 */
function listingOf(s: Seen): { rest: string; window: string | null; mode: string | null; by: 'timeline' | 'published' | undefined } | undefined {
  const q = new URL(s.x.url).searchParams;
  if (q.has('cursor') || q.has('q') || [...new Set(q.keys())].some((k) => q.getAll(k).length > 1)) return undefined;
  // Without by the order is the deployment's default (feed-items-defaults' to judge): undefined here.
  const by = q.get('by') ?? undefined;
  if (by !== undefined && by !== 'timeline' && by !== 'published') return undefined;
  const rest = [...q.entries()].filter(([k]) => !['limit', 'window', 'mode'].includes(k));
  return {
    rest: rest
      .sort()
      .map(([k, v]) => `${k}=${v}`)
      .join('&'),
    window: q.get('window'),
    mode: q.get('mode'),
    by,
  };
}
type Listing = NonNullable<ReturnType<typeof listingOf>>;

/**
 * An items first page holds every row that other listings, read just before and just after it, both show inside the
 * last 24 hours by the page's own Date (the window rules' clock tolerance aside), within its reach: newer than its last
 * row by the listing's order (ties not judged), all when it says there is no more. Which pages and which listings:
 * - `window` (feed-items-window-selects): a page of window=24h against listings of its query in any window;
 * - `mode` (feed-items-mode-selects): a page of mode=all against listings of its query with mode=selected or without
 *   mode (all holds the selected rows whichever the default is), in any window.
 * The three answers' Dates must not go back (a cache's older copy, which keeps the origin's Date, is not judged).
 * A row whose time differs between the two reads proves nothing, nor does one the run's change feed lists in `changed`
 * (it may have left and come back in between). Only the run's first answer to a page's URL is judged (a later one may
 * be a cache's that keeps no Age). Pages longer than the recorder keeps are read from the row index; a row without an
 * id is not judged.
 */
export function filteredPagesComplete(seen: Seen[], o: { kind: 'window' | 'mode'; list: string; id: string; hasMore: string; changed: Set<string> }): Judged {
  const pages = seen
    .filter((s) => s.path === ITEMS && s.x.method === 'GET' && s.status === 200 && !s.cached && listRows(s, o.list) !== undefined)
    .map((s) => ({ s, l: listingOf(s) }))
    .filter((p): p is { s: Seen; l: Listing } => p.l !== undefined);
  const judgedPage = (l: Listing) => (o.kind === 'mode' ? l.mode === 'all' : l.window === '24h');
  const compared = (f: Listing, u: Listing) => f.rest === u.rest && (o.kind === 'mode' ? u.mode === null || u.mode === 'selected' : u.mode === f.mode);
  const bad: string[] = [];
  let judged = 0;
  const idOf = (r: unknown) => {
    const id = field(r, o.id);
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  };
  const asked = new Set<string>();
  for (const f of pages) {
    // Only the first answer to its URL in the run: a later one may come from a cache that keeps no Age.
    const again = asked.has(f.s.key);
    asked.add(f.s.key);
    const date = dateOf(f.s);
    if (again || !judgedPage(f.l) || date === undefined) continue;
    const fRows = listRows(f.s, o.list)!;
    const ids = new Set(fRows.map(idOf));
    const us = pages.filter((u) => u !== f && compared(f.l, u.l));
    const before = us.filter((u) => u.s.received <= f.s.sent).at(-1);
    const after = us.find((u) => u.s.sent >= f.s.received);
    if (!before || !after) continue;
    // A copy older than the listing read before it (a cache that keeps the origin's Date and sends no Age) is not judged,
    // nor one compared with a listing older than itself.
    const [beforeDate, afterDate] = [dateOf(before.s), dateOf(after.s)];
    if (beforeDate === undefined || afterDate === undefined || beforeDate > date || date > afterDate) continue;
    const hasMore = field(topOf(f.s), o.hasMore);
    if (typeof hasMore !== 'boolean' || fRows.some((r) => idOf(r) === undefined)) continue;
    // Its order's time. Without by the order is the deployment's default: a row is placed by the earlier of its two
    // times (inside the window under either rule), the page's last row by the later (a row newer than it under both
    // rules comes before it in either order).
    const times = (r: Record<string, unknown>) => {
      const ts = f.l.by ? [effectiveTime(r, f.l.by)] : [effectiveTime(r, 'timeline'), effectiveTime(r, 'published')];
      return ts.every((x) => x !== undefined) ? (ts as number[]) : undefined;
    };
    const timeOf = (r: Record<string, unknown>) => (times(r) ? Math.min(...times(r)!) : undefined);
    const last = fRows.at(-1) && times(fRows.at(-1)!);
    const lastTime = last ? Math.max(...last) : undefined;
    if (hasMore && lastTime === undefined) continue;
    // Inside the last 24 hours: the whole of a 24h page's window, and inside every window a mode=all page may have.
    const inside = (t: number) => t >= date - WINDOWS['24h']! + CLOCK_TOLERANCE_MS;
    const afterRows = new Map(listRows(after.s, o.list)!.map((r) => [idOf(r), r]));
    const missing: string[] = [];
    for (const r of listRows(before.s, o.list)!) {
      const id = idOf(r);
      if (id === undefined) continue;
      const r2 = afterRows.get(id);
      const t = timeOf(r);
      if (!r2 || o.changed.has(id) || t === undefined || t !== timeOf(r2) || !inside(t)) continue;
      if (hasMore && !(t > lastTime!)) continue;
      judged++;
      if (!ids.has(id)) missing.push(id);
    }
    if (missing.length)
      bad.push(
        `${at(f.s)} lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}, which ${at(before.s)} and ${at(after.s)} both list well inside the last 24 hours, within its reach`,
      );
  }
  return { judged, bad };
}

/**
 * No listing goes back to an item's earlier title: across every items page and snapshot page of the run (GET 200s,
 * not from a cache), in the order they were sent, an item read with title A, then (asked after that answer came) with
 * title B, is not read with A again by an answer asked after the one that gave B, when a later answer still (asked
 * after that) gives B or a newer title. A view that kept an item's old image (a stale copy of one query shape, a
 * lagging index of one order) serves content its resource had left (feed-changed-resource-200). Rows without an id or
 * a string title are not judged; the change feed's entries are not read (they are events, not the listing).
 */
export function itemTitlesGoBack(seen: Seen[], o: { lists: Record<string, string>; id: string; title: string }): Judged {
  const byId = new Map<string, { s: Seen; title: string }[]>();
  for (const s of seen) {
    const list = o.lists[s.path];
    if (!list || s.x.method !== 'GET' || s.status !== 200 || s.cached) continue;
    // A snapshot continuation page may show the set as of its walk's watermark (the first page's): not judged.
    if (s.path === '/api/v1/selected/snapshot' && new URL(s.x.url).searchParams.has('page')) continue;
    for (const r of listRows(s, list) ?? []) {
      const id = field(r, o.id);
      const title = field(r, o.title);
      if ((typeof id !== 'string' && typeof id !== 'number') || typeof title !== 'string') continue;
      const k = String(id);
      const reads = byId.get(k) ?? byId.set(k, []).get(k)!;
      reads.push({ s, title });
    }
  }
  const bad: string[] = [];
  let judged = 0;
  for (const [id, reads] of byId) {
    reads.sort((x, y) => x.s.sent - y.s.sent);
    if (new Set(reads.map((r) => r.title)).size < 2) continue;
    judged++;
    let found = '';
    for (const [bi, b] of reads.entries()) {
      const a = reads.slice(0, bi).find((x) => x.title !== b.title && x.s.received <= b.s.sent);
      if (!a) continue;
      // A stored copy keeps the Date its origin gave it (a cache that sends no Age): the answer that went back must be
      // dated no earlier than the one that gave the newer title, by the target's clock.
      const c = reads.find((x) => x.title === a.title && x.s.sent >= b.s.received && notDatedBefore(x.s, b.s));
      if (!c) continue;
      const d = reads.find((x) => x.title !== a.title && x.s.sent >= c.s.received);
      if (!d) continue;
      found = `${id}: ${at(a.s)} titled it ${JSON.stringify(a.title)}, ${at(b.s)} ${JSON.stringify(b.title)}, then ${at(c.s)} ${JSON.stringify(c.title)} again, and ${at(d.s)} ${JSON.stringify(d.title)}`;
      break;
    }
    if (found) bad.push(found);
  }
  return { judged, bad };
}

/** Every item id the run's change feed listed (upserted or removed), from its pages read whole or from the row index. */
export function changedIds(seen: Seen[], p: { list: string; itemId: string; removedId: string; removedOnly?: boolean }): Set<string> {
  const out = new Set<string>();
  for (const s of seen.filter((x) => x.path === '/api/v1/selected/changes' && x.status === 200))
    for (const ch of listRows(s, p.list) ?? []) {
      if (p.removedOnly && field(ch, 'op') !== 'remove') continue;
      for (const id of [field(ch, p.itemId), field(ch, p.removedId)]) if (typeof id === 'string') out.add(id);
    }
  return out;
}

/** One view of the selected listing a client may ask for: a category, the publication order, the last 24 hours, or mode=all. */
export type ItemsView =
  /** With `all`, under mode=all (judged against mode=all listings). */
  { kind: 'category'; category: string; all?: boolean } | { kind: 'published' } | { kind: 'window' } | { kind: 'mode' };

/**
 * The rows a view of the listing lacks, judged against plain listings (selected, timeline order, 7d) read around it
 * (one before it; one after it too, when it is read again). A row is expected in the view when every plain listing shows it with one image (nothing about it
 * changed meanwhile), the view's filter takes it (its category; any row for the other views), its time under the
 * view's order is well inside the view's window (judged by the view's Date, CLOCK_TOLERANCE_MS inside the edge), and,
 * when the view has more pages, it comes before the view's last row under that order, newer (older, in a view that
 * lists oldest first) (a tie is not judged: which of
 * two rows of one time comes first is the deployment's). A view whose last row has no time under its order is not
 * judged (where it reaches is not known). Returns the ids expected and the ones the view lacks.
 */
export function viewLacks(o: {
  bases: Record<string, unknown>[][];
  view: { rows: Record<string, unknown>[]; hasMore: boolean; date: number };
  spec: ItemsView;
  id: string;
  category?: string;
}): { expected: string[]; missing: string[] } | undefined {
  const idOf = (r: unknown) => {
    const id = field(r, o.id);
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  };
  const by = o.spec.kind === 'published' ? 'published' : 'timeline';
  const window = WINDOW_MS[o.spec.kind === 'window' ? '24h' : '7d']!;
  const last = o.view.rows.at(-1);
  const lastTime = last ? effectiveTime(last, by) : undefined;
  if (o.view.hasMore && lastTime === undefined) return undefined;
  // The view's direction, from its own rows (the document states none): oldest first when its first row is older
  // than its last. Within its reach are the rows beyond its last one in that direction's opposite.
  const firstTime = o.view.rows.length ? effectiveTime(o.view.rows[0]!, by) : undefined;
  const ascending = firstTime !== undefined && lastTime !== undefined && firstTime < lastTime;
  const images = o.bases.map((rows) => new Map(rows.map((r) => [idOf(r), JSON.stringify(r)])));
  const inView = new Set(o.view.rows.map(idOf));
  const expected: string[] = [];
  const missing: string[] = [];
  for (const r of o.bases[0] ?? []) {
    const id = idOf(r);
    if (id === undefined) continue;
    const image = images[0]!.get(id);
    if (!images.every((m) => m.get(id) === image)) continue;
    if (o.spec.kind === 'category' && (o.category === undefined || field(r, o.category) !== o.spec.category)) continue;
    const t = effectiveTime(r, by);
    if (t === undefined || t < o.view.date - window + CLOCK_TOLERANCE_MS || t > o.view.date) continue;
    if (o.view.hasMore && !(ascending ? t < lastTime! : t > lastTime!)) continue;
    expected.push(id);
    if (!inView.has(id)) missing.push(id);
  }
  return { expected, missing };
}
