/**
 * content-feed-service.md — the procedures walked across a change: what must hold between two requests while the
 * feed changes (the mirror, keyset paging, conditional polling, a merge, a story's timeline, the hot-topics ranking,
 * the daily index). Each check notes the state, waits (within LIVE_WAIT_MS) until the target has changed by itself,
 * and verifies what the document says must then hold. A target that did not change within the wait leaves the check
 * "not applicable" (named with what it waited for): never passed, and a quiet deployment stays conformant.
 */
import { check, checkGroup, fail, precondition, type CheckTools } from '../../src/harness.js';
import { FIRST_ITEMS_VAR, runExchanges, type FirstAnswer } from '../../src/context.js';
import { weakMatch } from '../../src/caching.js';
import {
  FEED_OPERATIONS,
  LIVE_WAIT_MS,
  afterTheWait,
  archiveDate,
  changeOf,
  commonTitleWord,
  contentOf,
  feedGet,
  firstCursor,
  effectiveTime,
  fromCache,
  idOf,
  inputJson,
  listOf,
  once,
  operationProbe,
  pause,
  problemCode,
  profile,
  readChanges,
  readingAgain,
  storyPath,
  waitUntilChanged,
  WINDOW_MS,
  CLOCK_TOLERANCE_MS,
  type FeedOperation,
  minimalDropped,
} from '../../src/feed.js';
import { field } from '../../src/spec.js';
import { canonical } from '../../src/canonical.js';
import type { HttpResponse } from '../../src/http.js';

const SNAPSHOT = '/api/v1/selected/snapshot';
const ITEMS = '/api/v1/items';
/**
 * The least age at which the run's oldest items cursor is reused: three seconds, so a timer of two whole seconds is
 * seen whatever the phase of the second the cursor was issued in (a realistic delay between two pages). The cursor
 * of the command's first request reaches it about when the watches end (it is reused after them too: LIVE_WAIT_MS
 * and their requests). A longer timer is beyond a run of a few seconds.
 */
const CURSOR_REUSE_MS = 3000;
const CHANGES = '/api/v1/selected/changes';
const op = (id: string): FeedOperation => FEED_OPERATIONS.find((o) => o.operationId === id)!;
const waited = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const json = (res: HttpResponse): unknown => inputJson(res, `GET ${res.url}`);

/** Not applicable: the target did not change within the wait (what was watched, for how long). */
function quiet(t: { notApplicable(why: string): never }, what: string, ms: number): never {
  return t.notApplicable(`the target did not change during the run: waited ${waited(ms)} for ${what} to change`);
}

/** The problem code of a 400 in JSON (a cursor's refusal), undefined for any other answer. */
const refusalCode = (res: HttpResponse): unknown =>
  res.status === 400 && res.header('content-type')?.includes('json') ? problemCode(json(res) as Record<string, unknown>) : undefined;

/** Rows in the timeline order, each with a timeline time: where a cursor's anchor lies is known on such a page only. */
const timelineOrdered = (rows: Record<string, unknown>[]) => {
  const keys = rows.map((r) => effectiveTime(r, 'timeline'));
  return keys.every((k, i) => k !== undefined && (i === 0 || k <= keys[i - 1]!));
};

/** The continuation page the default listing's first cursor leads to, watched as a resource of its own. */
const NEXT_PAGE = 'listItems:next';
/** The operations watched across a change: each once per run, all at once (their waits run side by side). */
const WATCHED = ['listItems', NEXT_PAGE, 'hotTopics', 'getStory', 'listDailies', 'latestDaily', 'selectedChanges'];
interface Watch extends FirstRead {
  after?: HttpResponse;
  /** If-None-Match with the first answer's ETag, sent as soon as the change was seen (200 is due). */
  replaced?: HttpResponse;
  waitedMs: number;
}

/** A watched operation's first answer (before its wait), once per run. */
interface FirstRead {
  o: FeedOperation;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  before: HttpResponse;
  /** When the first answer arrived (epoch ms). */
  at: number;
  /** The page whose cursor `query` carries (the continuation page's watch). */
  issuedBy?: HttpResponse;
}
function firstRead(operationId: string): Promise<FirstRead> {
  return once(`live-first:${operationId}`, async () => {
    if (operationId === NEXT_PAGE) return nextPageRead();
    const o = op(operationId);
    if (operationId === 'getStory') {
      const linked = await linkedStory(o);
      if (linked) return linked;
    }
    const { path, query } = await o.resolve();
    // A watch's requests go before requests not sent yet: its wait is the run's longest.
    const before = await feedGet(path, { query, continuation: true });
    return { o, path, query, before, at: Date.now() };
  });
}

/**
 * A continuation page: the one the default listing's cursor leads to (a page whose rows a live feed edits, removes
 * and inserts among while its URL, the cursor's, stays the same). The first page itself when it gave no cursor.
 */
async function nextPageRead(): Promise<FirstRead> {
  const o = op('listItems');
  const first = await feedGet(ITEMS, { continuation: true });
  const cursor = first.status === 200 ? field(json(first), profile().items.nextCursor!) : undefined;
  const query = typeof cursor === 'string' ? { cursor } : undefined;
  const before = query ? await feedGet(ITEMS, { query, continuation: true }) : first;
  return { o, path: ITEMS, query, before, at: Date.now(), issuedBy: first };
}

/**
 * The story watched: the first one the hot topics link (as the hot-topics watch first read them) that answers 200,
 * so the story's watch begins with the others (the run's story discovery may still wait behind other requests).
 */
async function linkedStory(o: FeedOperation): Promise<FirstRead | undefined> {
  const hot = await firstRead('hotTopics');
  for (const id of linkedIds(hot.before).slice(0, 4)) {
    const path = storyPath(id);
    const before = await feedGet(path, { continuation: true });
    if (before.status === 200) return { o, path, before, at: Date.now() };
  }
  return undefined;
}

/** The story ids a hot-topics answer links (the final path segment of each links.story), none when it is not JSON. */
function linkedIds(hot: HttpResponse): string[] {
  let links: unknown[] = [];
  try {
    links = hot.status === 200 ? listOf(JSON.parse(hot.body), profile().hotTopics.list!).map((e) => field(e, profile().hotTopics.storyLink!)) : [];
  } catch {
    return [];
  }
  const ids = links.flatMap((l) => (typeof l === 'string' ? [decodeURIComponent(new URL(l, hot.url).pathname.split('/').filter(Boolean).pop() ?? '')] : []));
  return [...new Set(ids.filter(Boolean))];
}

/** One operation watched across a change, once per run: its first answer, then one look after the wait. */
function watchOne(operationId: string): Promise<Watch> {
  return once(`live:${operationId}`, async () => {
    const { o, path, query, before, at, issuedBy } = await firstRead(operationId);
    const read = () => feedGet(path, { query, continuation: true });
    const change = before.status === 200 ? await waitUntilChanged(read, (r) => contentOf(o, r), { base: before }) : undefined;
    // The validator the change replaced, asked at once: a validator honoured for a while after it was replaced shows
    // here, when it is youngest (feed-live-changed-resource-answers-200 judges the answer).
    const old = before.header('etag');
    const replaced =
      change && old && !weakMatch(old, change.res.header('etag') ?? '')
        ? await feedGet(path, { query, headers: { 'if-none-match': old }, continuation: true })
        : undefined;
    return { o, path, query, before, at, issuedBy, after: change?.res, replaced, waitedMs: change?.waitedMs ?? LIVE_WAIT_MS };
  });
}

/**
 * A watched operation (the checks of conditional polling, paging, the timeline, the ranking and the daily index share
 * the watches). Whichever check asks first starts every watch, so their waits run side by side: the run waits once.
 */
function watched(operationId: string): Promise<Watch> {
  startWatches();
  return watchOne(operationId);
}
function startWatches(): void {
  for (const id of WATCHED) watchOne(id).catch(() => undefined);
  edgeCursor().catch(() => undefined);
  wideCursor().catch(() => undefined);
  searchBefore().catch(() => undefined);
}

/** A search index may trail the set by this much: a row left the set at least this long before a search is asked. */
const SEARCH_LAG_MS = 1000;
/** A search (q) of the selected set as the watches begin, and the changes feed's position just before it. */
interface SearchBefore {
  word: string;
  query: Record<string, string | number>;
  /** A sync cursor taken just before the search (a snapshot page of one row). */
  cursor: string;
  res: HttpResponse[];
  /** The ids the search listed. */
  listed: Set<string>;
  at: number;
}
/**
 * The word most titles of the default listing's first 100 rows share (three letters or more), searched in
 * mode=selected and window=24h with limit=100 as the watches begin, after a sync cursor is taken: the rows a live feed removes from
 * the selection while the run waits are among those the search lists. Undefined when no word or row is found.
 */
function searchBefore(): Promise<SearchBefore | undefined> {
  return once('live-search-before', async () => {
    const wide = await wideCursor();
    const word = wide ? commonTitleWord(listOf(wide.body, profile().items.list!)) : undefined;
    if (!word) return undefined;
    const sync = await feedGet(SNAPSHOT, { query: { limit: 1 }, continuation: true });
    const cursor = sync.status === 200 ? field(json(sync), 'cursor') : undefined;
    if (typeof cursor !== 'string') return undefined;
    // The last 24 hours: where a live feed's removals mostly fall, and a page of 100 holds the whole search there.
    const query = { mode: 'selected', window: '24h', q: word, limit: 100 };
    const found = await feedGet(ITEMS, { query, continuation: true });
    if (found.status !== 200) return undefined;
    const listed = new Set(listOf(json(found), profile().items.list!).map((i) => idOf(i)));
    return listed.size ? { word, query, cursor, res: [sync, found], listed, at: Date.now() } : undefined;
  });
}

/**
 * The cursor of a first page of 100 of the default listing, taken as the watches begin: the rows of its page are the
 * ones a live feed removes from the selection and withdraws while the run waits, its anchor stays in the window.
 */
function wideCursor(): Promise<Issued | undefined> {
  return once('live-wide-cursor', async () => {
    const query = { limit: 100 };
    const res = await feedGet(ITEMS, { query, continuation: true });
    const cursor = res.status === 200 ? field(json(res), profile().items.nextCursor!) : undefined;
    if (typeof cursor !== 'string') return undefined;
    return { cursor, at: Date.now(), query, body: json(res), res, source: 'the cursor of a first page of 100, taken as the watches began' };
  });
}

/** A window=24h cursor anchored on the row next to the window's oldest, issued as the watches begin. */
interface EdgeCursor {
  cursor: string;
  query: Record<string, string | number>;
  anchor: { id: string; at: number };
  at: number;
  res: HttpResponse[];
  /**
   * A cursor anchored on the oldest row more than INSIDE_MS inside the window (by the target's Date), sent at once,
   * with its anchor: a rule that rejects before the anchor has left refuses it.
   */
  inside?: { res: HttpResponse; anchor: { id: string; at: number }; page: HttpResponse };
}
/**
 * How far inside the window the anchor of the cursor sent at once lies at least: the clock tolerance of the window
 * rules (a Date stamped by a proxy, an edge rounded to the minute) and a few seconds for the requests in between.
 */
const INSIDE_MS = CLOCK_TOLERANCE_MS + 5000;
/**
 * The longest the aged-cursor check waits, beyond the watches' wait, for its anchor to leave the window when the
 * target's clock shows it due within that time (the edge page of a slow walk may end a few rows before the oldest).
 */
const EDGE_WAIT_MS = 6000;
/**
 * The listing of window=24h in pages of 100 (five at most), then a page that ends on the row next to the oldest: its
 * cursor is anchored on the row next to the window's edge, the one a live feed's clock takes out of the window
 * soonest. Over more than 100 rows that page continues the walk with a smaller limit (a deployment whose cursor is
 * bound to the limit refuses it: then undefined). Undefined when the window holds fewer than two rows or more than 500.
 * Then the page ending on the oldest row at least INSIDE_MS inside the window, its cursor sent at once.
 */
function edgeCursor(): Promise<EdgeCursor | undefined> {
  return once('live-edge-cursor', async () => {
    const ip = profile().items;
    const res: HttpResponse[] = [];
    /** The cursor each page of 100 was asked with (none for the first). */
    const starts: (string | undefined)[] = [];
    /** Each row of the walk: its timeline time, and the instant its page was served (the page's Date). */
    const walked: { at: number | undefined; date: number }[] = [];
    let n = 0;
    let next: unknown;
    for (let k = 0; k < 5; k++) {
      const start = k === 0 ? undefined : (next as string);
      const all = await feedGet(ITEMS, { query: { window: '24h', limit: 100, ...(start ? { cursor: start } : {}) }, continuation: true });
      res.push(all);
      if (all.status !== 200) return undefined;
      starts.push(start);
      const rows = listOf(json(all), ip.list!) as Record<string, unknown>[];
      n += rows.length;
      const date = Date.parse(all.header('date') ?? '');
      for (const r of rows) walked.push({ at: effectiveTime(r, 'timeline'), date: Number.isNaN(date) ? Date.now() : date });
      next = field(json(all), ip.nextCursor!);
      if (field(json(all), ip.hasMore!) !== true) break;
      if (typeof next !== 'string' || k === 4) return undefined;
    }
    if (n < 2) return undefined;
    /** The page ending on row `end` (0-based): from the start of the page of 100 holding it, as many rows as it needs. */
    const pageEndingAt = async (end: number) => {
      const k = Math.floor((end + 1) / 100);
      const query = { window: '24h', limit: (end + 1) % 100 || 100 };
      const from = (end + 1) % 100 === 0 ? starts[k - 1] : starts[k];
      const page = await feedGet(ITEMS, { query: from ? { ...query, cursor: from } : query, continuation: true });
      res.push(page);
      const cursor = page.status === 200 ? field(json(page), ip.nextCursor!) : undefined;
      const rows = page.status === 200 ? (listOf(json(page), ip.list!) as Record<string, unknown>[]) : [];
      return { query, page, cursor, rows };
    };
    // The page ending on row n-2 (the one next to the oldest). Rows at the window's tail leave while the walk goes on
    // (a slow run's pages lie seconds apart): when that page reaches the listing's end (no cursor: rows left
    // meanwhile), the page ending 2, 6, then 14 rows earlier.
    let edge: Awaited<ReturnType<typeof pageEndingAt>> | undefined;
    for (const end of [n - 2, n - 4, n - 8, n - 16]) {
      if (end < 0) break;
      edge = await pageEndingAt(end);
      if (edge.page.status !== 200 || typeof edge.cursor === 'string') break;
    }
    if (!edge) return undefined;
    const { cursor, query, rows } = edge;
    const last = rows.at(-1);
    const key = last && effectiveTime(last, 'timeline');
    if (typeof cursor !== 'string' || !last || key === undefined) return undefined;
    // The anchor's place is the timeline rule's: on a page out of that order the target anchors by another key, and
    // when the anchor leaves is not known here (the order is feed-items-by-timeline's to judge).
    if (!timelineOrdered(rows)) return undefined;
    const at = Date.now();
    const issued: EdgeCursor = { cursor, query, anchor: { id: idOf(last), at: key }, at, res };
    // The oldest row of the walk well inside the window when its page was served (not the last row: a page ending
    // there gives no cursor), and the page ending on it; its cursor sent at once.
    let i = walked.length - 2;
    while (i >= 0 && !(walked[i]!.at !== undefined && walked[i]!.at! >= walked[i]!.date + INSIDE_MS - WINDOW_MS['24h']!)) i--;
    if (i >= 0) {
      const p = await pageEndingAt(i);
      const anchor = p.rows.at(-1);
      const anchorAt = anchor && effectiveTime(anchor, 'timeline');
      // As for the edge page: on a page out of the timeline order the anchor's place is not known here.
      if (typeof p.cursor === 'string' && anchor && anchorAt !== undefined && timelineOrdered(p.rows)) {
        const sent = await feedGet(ITEMS, { query: { ...p.query, cursor: p.cursor }, continuation: true });
        res.push(sent);
        issued.inside = { res: sent, anchor: { id: idOf(anchor), at: anchorAt }, page: p.page };
      }
    }
    return issued;
  });
}

/**
 * The target's clock, from below: the Date of an answer received before a cursor is sent again. A row leaves
 * window=24h 24 hours after its time: when the anchor at `anchorAt` is still inside but due to leave within
 * EDGE_WAIT_MS by that clock, the clock is read again once it is due (a Date counts whole seconds: 1.5 s more).
 */
async function clockPast(anchorAt: number, t: CheckTools): Promise<number> {
  const clockNow = async () => {
    const clock = await feedGet(ITEMS, { query: { window: '24h', limit: 1 } });
    t.cite(clock);
    return Date.parse(clock.header('date') ?? '');
  };
  const reached = await clockNow();
  const due = anchorAt + WINDOW_MS['24h']! - reached;
  if (!(due >= 0 && due <= EDGE_WAIT_MS)) return reached;
  await pause(due + 1500);
  return clockNow();
}

checkGroup('the 24h window edge, across the watches', () => {
  check(
    {
      id: 'feed-live-cursor-anchor-left-window',
      title: 'a window=24h cursor whose anchor has left the window while the run waited is rejected with invalid_cursor',
      requirements: ['feed-items-cursor-window'],
    },
    async (t) => {
      startWatches();
      const c = await edgeCursor();
      if (!c)
        return t.notApplicable(
          'window=24h gave no cursor anchored next to its oldest row (fewer than two rows, more than 500, a continuation refused, or a page not in the timeline order)',
        );
      t.cite(...c.res);
      await afterTheWait(c.at);
      const reached = await clockPast(c.anchor.at, t);
      if (Number.isNaN(reached) || c.anchor.at >= reached - WINDOW_MS['24h']!)
        return t.notApplicable(
          `the target did not change during the run: waited ${waited(Date.now() - c.at)} for the anchor ${c.anchor.id} (${new Date(c.anchor.at).toISOString()}) of a window=24h cursor to leave the window by the target's Date`,
        );
      const res = await feedGet(ITEMS, { query: { ...c.query, cursor: c.cursor } });
      t.cite(res);
      t.observe(
        'anchor',
        `${c.anchor.id} at ${new Date(c.anchor.at).toISOString()}, outside window=24h once the target's Date read ${new Date(reached).toISOString()}`,
      );
      const code = refusalCode(res);
      if (res.status !== 400 || code !== 'invalid_cursor')
        t.violation(
          `the cursor anchored on ${c.anchor.id}, which had left window=24h, answered ${res.status}${code === undefined ? '' : ` (${String(code)})`}, where 400 invalid_cursor is required`,
        );
    },
  );
  check(
    {
      id: 'feed-live-cursor-anchor-in-window-accepted',
      title:
        'a window=24h cursor anchored on the oldest row more than the clock tolerance inside the window, sent at once, is not rejected: only one whose anchor has left is',
      requirements: ['feed-items-cursor-window'],
    },
    async (t) => {
      startWatches();
      const c = await edgeCursor();
      if (!c?.inside)
        return t.notApplicable(
          'window=24h gave no cursor anchored on a row more than the clock tolerance inside the window (fewer than two rows, more than 500, a continuation refused, or a page not in the timeline order)',
        );
      const { res, anchor, page } = c.inside;
      t.cite(page, res);
      // The target's clock: the answer came before its Date + 1 s; the anchor was inside the window for certain when it
      // lies after that instant minus 24 h, by more than the clock tolerance of the window rules.
      const date = Date.parse(res.header('date') ?? '');
      if (Number.isNaN(date)) return t.notApplicable("the answer carried no Date: the target's clock, which places the window, is not known");
      const edge = date + 1000 + CLOCK_TOLERANCE_MS - WINDOW_MS['24h']!;
      t.observe(
        'anchor',
        `${anchor.id} at ${new Date(anchor.at).toISOString()}, the window's edge ${new Date(edge - CLOCK_TOLERANCE_MS).toISOString()} at the latest`,
      );
      if (anchor.at < edge)
        return t.notApplicable(`the anchor ${anchor.id} had come within ${CLOCK_TOLERANCE_MS / 60_000} minutes of the window's edge when the cursor was sent`);
      const code = refusalCode(res);
      if (res.status === 400 && code === 'invalid_cursor')
        t.violation(
          `the cursor anchored on ${anchor.id}, ${((anchor.at - edge + CLOCK_TOLERANCE_MS) / 1000).toFixed(0)} s inside window=24h by the target's Date, was rejected with invalid_cursor: only a cursor whose anchor has left the window is`,
        );
    },
  );
});

// ---------------------------------------------------------------- the mirror: snapshot, a change, changes

interface Mirror {
  pages: HttpResponse[];
  items: Map<string, string>;
  cursor: string;
  /** The answer to the continuation page requested after the set changed (the walk's second page). */
  afterChange?: HttpResponse;
  changedMs: number;
  changed: boolean;
}

/**
 * The client procedure with a change in the middle: the first page, the wait, then whether the selected set changed
 * since that page (the changes after its sync cursor list something), then the rest of the walk.
 */
function mirrorWalk(): Promise<Mirror> {
  return once('live-mirror', async () => {
    const sp = profile().snapshot;
    const pages: HttpResponse[] = [];
    const items = new Map<string, string>();
    const take = (res: HttpResponse) => {
      pages.push(res);
      precondition(res.status === 200, `snapshot page ${pages.length} answered ${res.status}`);
      const body = json(res);
      for (const it of listOf(body, sp.list!)) items.set(idOf(it, sp.id!), canonical(it));
      return body as Record<string, unknown>;
    };
    const first = take(await feedGet(SNAPSHOT, { query: { fields: 'default', limit: 300 }, continuation: true }));
    const cursor = first.cursor;
    precondition(typeof cursor === 'string', 'the snapshot gave no cursor');
    const start = Date.now();
    startWatches(); // their waits and this one side by side (also when the checks run one at a time)
    await afterTheWait(start);
    // One look: the changes after the first page's sync cursor (the first changes call of the procedure reads it again).
    const look = await feedGet(CHANGES, { query: { [profile().changes.cursorParam!]: cursor } });
    const changed = look.status === 200 && listOf(json(look), profile().changes.list!).length > 0;
    const changedMs = Date.now() - start;
    let body = first;
    let afterChange: HttpResponse | undefined;
    for (let i = 0; body.hasMore === true && typeof body.nextPage === 'string' && i < 20; i++) {
      const res = await feedGet(SNAPSHOT, { query: { page: body.nextPage, limit: 1000 }, continuation: true });
      afterChange ??= res;
      if (res.status !== 200) break;
      body = take(res);
    }
    return { pages, items, cursor, afterChange, changedMs, changed };
  });
}

interface Applied {
  res: HttpResponse[];
  cursor: string;
  /** The ids the changes read named (upserts and removals). */
  named: Set<string>;
  /** The read reached the changes' end (hasMore false) within its ten pages. */
  complete: boolean;
}

/**
 * Brings `mirror` up to date with the changes after the snapshot's `cursor` and compares it with the selected set read
 * afresh: the set may change again while the two are brought up to date, so they are compared again (three times at
 * most); an id that differs every time is lost or stale in the mirror.
 */
async function reconcile(
  mirror: Map<string, string>,
  cursor: string,
): Promise<{ diff: string[]; res: HttpResponse[]; fresh: Map<string, string>; compared: number }> {
  let applied = await applyChanges(mirror, cursor, undefined, 'snapshot');
  const res = [...applied.res];
  let diff: string[] | undefined;
  let fresh = new Map<string, string>();
  let compared = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    // A comparison after the first is made only because the set moved meanwhile: it reads again (bounded per run).
    const set = await readingAgain(attempt > 0, () => freshSet());
    const more = await readingAgain(attempt > 0, () => applyChanges(mirror, applied.cursor));
    res.push(...set.res, ...more.res);
    applied = more;
    fresh = set.items;
    // A read that stopped at its ten pages while more changes followed is behind the set: the changes came faster
    // than it could read them, so that comparison is not made (neither side was brought up to date).
    if (!set.complete || !more.complete) continue;
    let now = differences(mirror, fresh);
    if (now.length) {
      // The fresh read ended before the mirror's: an item changed in between differs for that alone. The changes after
      // the fresh read's own cursor name every such item (an item no change after it names did not change since).
      const since = await readingAgain(attempt > 0, () => applyChanges(new Map(), set.cursor));
      res.push(...since.res);
      if (!since.complete) continue;
      now = now.filter((id) => !since.named.has(id));
    }
    compared++;
    diff = diff === undefined ? now : diff.filter((id) => now.includes(id));
    if (diff.length === 0) break;
  }
  return { diff: diff ?? [], res, fresh, compared };
}

interface Reconciled {
  mirror: Map<string, string>;
  diff: string[];
  /** How many times the mirror and a fresh read, both brought to the changes' end, were compared. */
  compared: number;
  res: HttpResponse[];
  /** The set as last read afresh. */
  fresh: Map<string, string>;
}
/** The mirror walk's snapshot with every change after its cursor, compared with the selected set read afresh (once per run). */
function reconciled(): Promise<Reconciled> {
  return once('live-mirror-reconciled', async () => {
    const m = await mirrorWalk();
    const mirror = new Map(m.items);
    return { mirror, ...(await reconcile(mirror, m.cursor)) };
  });
}

/**
 * Whether the target changed during the mirror walk's wait: the changes after its first page's cursor listed some, or
 * another watched resource moved meanwhile (a change feed that lists nothing must not make a changing target look quiet).
 */
async function targetChanged(m: Mirror): Promise<boolean> {
  if (m.changed) return true;
  const others = await Promise.all(WATCHED.filter((id) => id !== 'selectedChanges').map((id) => watched(id)));
  return others.some((w) => w.after !== undefined);
}

/** Not applicable for the reason the kept-on procedure stopped: quiet (the target did not change) or another one. */
const skippedOut = (t: CheckTools, s: NonNullable<KeptOn['skipped']>): never => (s.quiet !== undefined ? quiet(t, s.why, s.quiet) : t.notApplicable(s.why));

/** The most pages (of 999) a selected set the mirror is kept on with fills: a larger set is not kept on. */
const KEPT_ON_PAGES = 2;

/** The mirror kept on after it was caught up: the answers, and what the mirror and the set then were. */
interface KeptOn {
  /** An error the procedure met (a finding of the mirror's check, thrown again there). */
  error?: unknown;
  /** Why the procedure was not walked to its end (the mirror not reconciled, the changes never empty, the set quiet). */
  skipped?: { why: string; quiet?: number };
  /** The changes answer with no change, for the cursor the mirror was up to date with. */
  empty?: HttpResponse;
  /**
   * After the wait: If-None-Match with the empty answer's ETag; when that is not a 200, the same cursor asked plainly,
   * and when the first was a 304 and the plain one lists changes, the conditional request once more (the changes came
   * before it).
   */
  conditional?: HttpResponse;
  plain?: HttpResponse;
  conditionalAgain?: HttpResponse;
  /** The ids of `changed` the changes from the empty answer's cursor did not name. */
  diff: string[];
  /** The ids two snapshot walks, before and after the empty answer, show changed, and no change before it named. */
  changed: string[];
  res: HttpResponse[];
}

/**
 * A mirror kept on as the document's procedure keeps it ("then /api/v1/selected/changes continuously"): a snapshot,
 * the changes after its cursor read until an answer lists none, the wait (LIVE_WAIT_MS), a second snapshot, then the
 * changes after the empty answer's cursor (with that answer's ETag first, as a poller holding it asks). Every item the
 * two snapshots show changed, that no change before the empty answer named, must be named by the changes after it (two
 * snapshots compare like with like: no change image is compared with a snapshot image). A target whose set did not
 * change in between leaves it quiet. Once per run.
 */
function keptOn(): Promise<KeptOn> {
  // An error of the procedure (a refused changes call, a walk cut short) is kept as its outcome, read by both checks: the
  // mirror's check reports it, the 304 check has nothing to judge (and the procedure is not walked again for it).
  return once('live-mirror-kept-on', () => keptOnWalk().catch((error: unknown): KeptOn => ({ error, diff: [], changed: [], res: [] })));
}

async function keptOnWalk(): Promise<KeptOn> {
  const none = (why: string, quietMs?: number): KeptOn => ({
    skipped: { why, ...(quietMs !== undefined ? { quiet: quietMs } : {}) },
    diff: [],
    changed: [],
    res: [],
  });
  const p = profile().changes;
  // The set as a snapshot shows it, then the changes after its cursor, read until an answer lists none (caught up):
  // the ids they named were delivered before that answer. Walked as the run begins, beside the watches, so that the
  // wait after it ends about when theirs does (after them it would make the whole run wait LIVE_WAIT_MS longer).
  // Page sizes of their own (999, then 998): URLs no other walk of the run asks, so no two answers of one URL compare
  // walks made at other moments. Two pages at most: a larger set is not kept on (two more walks of it would take a
  // large deployment's run past its budget), and stopping at the second page is what tells it.
  const before = await walkSnapshot(999, 999, KEPT_ON_PAGES);
  if (before.cut)
    return {
      ...none(
        `the selected set holds more than ${before.items.size} items: two more walks of it (pages of 999) would take the run past the remote budget of 600 feed requests`,
      ),
      res: before.res,
    };
  const res: HttpResponse[] = [...before.res];
  const { delivered, cursor, empty } = await caughtUp(before.cursor, res);
  if (!empty) return { ...none("the changes after the snapshot's cursor listed a change at each of four reads: never caught up"), res };
  const emptyAt = Date.now();
  await pause(LIVE_WAIT_MS);
  // A target that did not change during the mirror walk's wait (its own watches, ending about now) is quiet: the
  // second walk is not asked.
  const m = await mirrorWalk();
  if (!(await targetChanged(m)))
    return { ...none('the selected set (the changes after the first sync cursor) or any other watched resource', m.changedMs), res, empty };
  // The set again, then the changes from the empty answer's cursor (with that answer's ETag first, as a poller holding
  // it asks): every item the second walk shows changed, and the changes before the empty answer did not name, changed
  // after that answer, before these changes were asked.
  const after = await walkSnapshot(998, 998);
  res.push(...after.res);
  const etag = empty.header('etag');
  const conditional = etag ? await feedGet(CHANGES, { query: { [p.cursorParam!]: cursor }, headers: { 'if-none-match': etag } }) : undefined;
  if (conditional) res.push(conditional);
  const plain = conditional?.status === 200 ? undefined : await feedGet(CHANGES, { query: { [p.cursorParam!]: cursor } });
  if (plain) res.push(plain);
  const first = (plain ?? conditional)!;
  if (first.status !== 200) return { ...none(`GET ${CHANGES} with the empty answer's cursor, asked again, answered ${first.status}`), res, empty };
  const conditionalAgain =
    conditional?.status === 304 && plain && listOf(json(plain), p.list!).length > 0
      ? await feedGet(CHANGES, { query: { [p.cursorParam!]: cursor }, headers: { 'if-none-match': etag! } })
      : undefined;
  if (conditionalAgain) res.push(conditionalAgain);
  const read = await applyChanges(new Map(), cursor, first, 'changes');
  res.push(...read.res.slice(1));
  // Ten pages that did not reach the changes' end: the changes not read yet may name the rest.
  if (!read.complete) return { ...none('the changes after the empty answer came faster than ten pages could read them'), res, empty };
  const named = read.named;
  // Both walks ask the default fields: an item a walk read on a page served in another field set differs for that
  // alone (feed-snapshot-fields-locked's finding), not because it changed.
  const changed = differences(before.items, after.items).filter((id) => !delivered.has(id) && !before.otherFields?.has(id) && !after.otherFields?.has(id));
  if (!changed.length) return { ...none('the selected set after the empty changes answer', Date.now() - emptyAt), res, empty };
  const unnamed = changed.filter((id) => !named.has(id));
  const diff = await notLostByPaging(unnamed, before, after, res);
  if (unnamed.length && !diff.length) return { ...none(PAGING_LOSES_THEM), res, empty };
  return {
    empty,
    ...(conditional ? { conditional } : {}),
    ...(plain ? { plain } : {}),
    ...(conditionalAgain ? { conditionalAgain } : {}),
    diff,
    changed,
    res,
  };
}

const PAGING_LOSES_THEM =
  'the items the walks disagree on are held or not by walks of other page sizes read at one moment alike: the paging loses them, not the change feed';

/**
 * The changes after `from` read until an answer lists none (four reads at most): the ids they named, the cursor of the
 * empty answer and that answer (none when each read listed a change). The answers are added to `res`.
 */
async function caughtUp(from: string, res: HttpResponse[]): Promise<{ delivered: Set<string>; cursor: string; empty?: HttpResponse }> {
  const delivered = new Set<string>();
  let cursor = from;
  let empty: HttpResponse | undefined;
  for (let i = 0; i < 4 && !empty; i++) {
    // A third read and after: the changes kept coming (reading again, bounded per run).
    const read = await readingAgain(i >= 2, () => applyChanges(new Map(), cursor, undefined, i === 0 ? 'snapshot' : 'changes'));
    res.push(...read.res);
    read.named.forEach((id) => delivered.add(id));
    if (read.res.length === 1 && read.named.size === 0) empty = read.res[0];
    cursor = read.cursor;
  }
  return { delivered, cursor, ...(empty ? { empty } : {}) };
}

/**
 * The ids of `diff` the paging does not explain. An item one walk holds and the other does not may be one the
 * snapshot's paging loses at one page size (an item skipped at a page boundary): a third walk now in the first walk's
 * page size (999) shows it, when the item's presence there differs from the second walk's, read at about the same
 * moment. That is feed-snapshot-paging's finding, not the change feed's. Asked only when such an item is unnamed (a
 * conformant run asks nothing more); its answers are added to `res`.
 */
async function notLostByPaging(diff: string[], before: Walk, after: Walk, res: HttpResponse[]): Promise<string[]> {
  if (!diff.some((id) => before.items.has(id) !== after.items.has(id))) return diff;
  const control = await walkSnapshot(999, 999, KEPT_ON_PAGES + 1);
  res.push(...control.res);
  return diff.filter((id) => before.items.has(id) === after.items.has(id) || control.items.has(id) === after.items.has(id));
}

/** The changes after `cursor` applied to `mirror` (upserts replace, removals delete), every page until hasMore is false. */
async function applyChanges(mirror: Map<string, string>, cursor: string, first?: HttpResponse, from: 'snapshot' | 'changes' = 'changes'): Promise<Applied> {
  const read = await readChanges(
    cursor,
    10,
    (r, i) => {
      // A credential demanded, or a snapshot's sync cursor refused at once, is another rule's finding (anonymous access,
      // the changes endpoint accepting a snapshot's cursor): no mirror can be judged past it.
      precondition(r.status !== 401, `GET ${CHANGES} answered 401: it demanded a credential`, 'feed-anonymous-access');
      precondition(
        !(i === 0 && from === 'snapshot' && r.status >= 400 && r.status < 500 && r.status !== 429),
        `GET ${CHANGES} refused the snapshot's sync cursor (${r.status})`,
        'feed-changes-accepts-snapshot-cursor',
      );
      // The cursor came from the service seconds ago (the changes' own): the procedure takes the snapshot once and the
      // changes continuously, so a refusal (a client error) breaks it; a 429 or 5xx does not.
      if (r.status >= 400 && r.status < 500 && r.status !== 429)
        fail(
          `GET ${CHANGES} with the sync cursor ${i === 0 ? 'the service had just issued' : 'its page before gave'} answered ${r.status}: the mirror cannot go on without a new snapshot`,
        );
      precondition(r.status === 200, `GET ${CHANGES} with a sync cursor answered ${r.status}`);
      return true;
    },
    json,
    undefined,
    first,
  );
  const named = new Set<string>();
  for (const ch of read.bodies.flatMap((body) => listOf(body, profile().changes.list!))) {
    const { op, id, item } = changeOf(ch);
    named.add(String(id));
    if (op === 'remove') mirror.delete(String(id));
    else mirror.set(String(id), canonical(item));
  }
  return { res: read.res, cursor: read.cursor, named, complete: read.complete };
}

interface Walk {
  items: Map<string, string>;
  cursor: string;
  res: HttpResponse[];
  /** The walk stopped at its page bound while the service said more followed. */
  cut?: boolean;
  /** The ids it read on a page served in the minimal field set although the walk asked the default. */
  otherFields?: Set<string>;
}
/** A snapshot walk as it is now: a first page of `firstLimit`, continuation pages of 1000. */
async function walkSnapshot(firstLimit: number, nextLimit = 1000, maxPages = 20): Promise<Walk> {
  const sp = profile().snapshot;
  const items = new Map<string, string>();
  const otherFields = new Set<string>();
  const res: HttpResponse[] = [];
  let next: string | undefined;
  let cursor = '';
  let more = false;
  for (let i = 0; i < maxPages; i++) {
    const r = await feedGet(SNAPSHOT, {
      query: next ? { page: next, limit: nextLimit } : { fields: 'default', limit: firstLimit },
      continuation: next !== undefined,
    });
    res.push(r);
    precondition(r.status === 200, `a fresh snapshot page answered ${r.status}`);
    const body = json(r) as Record<string, unknown>;
    if (i === 0) cursor = String(body.cursor);
    const rows = listOf(body, sp.list!);
    // A page (asked in the default fields) whose field set says minimal, or whose rows all lack what minimal drops.
    const minimal = body.fields === 'minimal' || (rows.length > 0 && rows.every((it) => minimalDropped(it).length === 0));
    for (const it of rows) {
      items.set(idOf(it, sp.id!), canonical(it));
      if (minimal) otherFields.add(idOf(it, sp.id!));
    }
    more = body.hasMore === true && typeof body.nextPage === 'string';
    if (!more) break;
    next = body.nextPage as string;
  }
  return { items, cursor, res, ...(more ? { cut: true } : {}), ...(otherFields.size ? { otherFields } : {}) };
}

/** A fresh snapshot walk (the set as it is now), brought up to date with its own changes. */
async function freshSet(): Promise<Walk & { complete: boolean }> {
  const walk = await walkSnapshot(1000);
  const applied = await applyChanges(walk.items, walk.cursor, undefined, 'snapshot');
  return { items: walk.items, cursor: applied.cursor, res: [...walk.res, ...applied.res], complete: applied.complete && !walk.cut };
}

/**
 * The control for a mirror that lacks items: a walk in the mirror walk's page sizes (300, then 1000) and, right
 * after, one in pages of 1000, neither brought up to date. The ids of `among` the second holds and the first never
 * delivered, no change after the first's cursor naming them, are lost by the snapshot's paging (feed-snapshot-paging
 * judges that), not by the changes.
 */
async function lostByPaging(among: string[]): Promise<{ ids: string[]; res: HttpResponse[] }> {
  const paged = await walkSnapshot(300);
  const whole = await walkSnapshot(1000);
  const changed = new Set<string>();
  const p = profile().changes;
  const since = await feedGet(CHANGES, { query: { [p.cursorParam!]: paged.cursor } });
  if (since.status === 200) for (const ch of listOf(json(since), p.list!)) changed.add(String(changeOf(ch).id));
  const ids = among.filter((id) => whole.items.has(id) && !paged.items.has(id) && !changed.has(id));
  return { ids, res: [...paged.res, ...whole.res, since] };
}

/** Ids whose image differs between two mirrors (missing on one side, or another image). */
function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  const ids = new Set([...a.keys(), ...b.keys()]);
  return [...ids].filter((id) => a.get(id) !== b.get(id)).sort();
}

interface Issued {
  cursor: string;
  /** When the page that gave it arrived (epoch ms). */
  at: number;
  query: Record<string, string | number>;
  body: unknown;
  res?: HttpResponse;
  source: string;
}
/**
 * The run's oldest items cursor: the command's first request (the items list, probed before any check; handed to
 * the checks in FIRST_ITEMS_VAR), the first page the items watch read, or the items checks' first cursor, whichever
 * came first (each reused with the query it was issued for: the default one, or limit=5).
 */
async function earliestCursor(): Promise<Issued | undefined> {
  const nextOf = (body: unknown) => {
    const c = field(body, profile().items.nextCursor!);
    return typeof c === 'string' ? c : undefined;
  };
  const found: Issued[] = [];
  try {
    const first = JSON.parse(process.env[FIRST_ITEMS_VAR] ?? 'null') as FirstAnswer | null;
    const body: unknown = first && JSON.parse(first.body);
    const cursor = nextOf(body);
    if (first && cursor) found.push({ cursor, at: first.at, query: {}, body, source: `the cursor of GET ${first.url}, the command's first request` });
  } catch {
    // not JSON: the checks' own cursors
  }
  const w = await watched('listItems').catch(() => undefined);
  const cursor = w?.before.status === 200 ? nextOf(json(w.before)) : undefined;
  if (w && cursor) found.push({ cursor, at: w.at, query: {}, body: json(w.before), res: w.before, source: "the cursor of the items watch's first page" });
  const f = await firstCursor().catch(() => undefined);
  if (f) found.push({ cursor: f.cursor, at: f.at, query: { limit: 5 }, body: json(f.res), res: f.res, source: "the items checks' first cursor (limit=5)" });
  return found.sort((x, y) => x.at - y.at)[0];
}

/**
 * What is wrong with `page`, the page a cursor anchored on the last row of `first` led to, read between two reads of
 * the listing (`before`, `after`): rows of the first page again, or a row that follows the anchor in both listings,
 * within the page's reach, missing from the page or out of the listing's order ('' when nothing is).
 */
function pageAfterAnchor(first: string[], page: string[], before: string[], after: string[]): string {
  const anchor = first[first.length - 1]!;
  const again = page.filter((id) => first.includes(id));
  if (again.length) return `the page after the cursor repeats ${again.length} row(s) of the first page (${again.slice(0, 3).join(', ')})`;
  const following = (list: string[]) => (list.includes(anchor) ? list.slice(list.indexOf(anchor) + 1) : undefined);
  const f1 = following(before);
  const f2 = following(after);
  if (!f1 || !f2) return ''; // the anchor left the listing: nothing to place the page against
  // Within reach: rows that arrived after the anchor in between push the page's last rows out (a margin of five).
  const stayed = f1.slice(0, Math.min(page.length, f1.length, f2.length) - 5).filter((id) => f2.includes(id));
  const missing = stayed.filter((id) => !page.includes(id));
  if (missing.length)
    return `the page after the cursor lacks ${missing.length} row(s) that follow its anchor ${anchor} in the listing read before and after it (${missing.slice(0, 3).join(', ')} skipped)`;
  const order = page.filter((id) => stayed.includes(id));
  if (order.join() !== stayed.join()) return `the page after the cursor holds the rows that follow its anchor ${anchor} in another order than the listing`;
  return '';
}

/**
 * Rows of `page` (the page a cursor led to) that sort before the cursor's anchor, the last row of `first` (a listing
 * of the default rule, timeline): a time under that rule later than the anchor's. A keyset cursor leads to the rows
 * after its anchor only; rows that arrived at the head since belong to a new first page. '' when there are none.
 */
function newerThanAnchor(first: unknown, page: HttpResponse): string {
  const anchor = listOf(first, profile().items.list!).at(-1) as Record<string, unknown> | undefined;
  const at = anchor && effectiveTime(anchor, 'timeline');
  if (at === undefined || page.status !== 200) return '';
  const newer = (listOf(json(page), profile().items.list!) as Record<string, unknown>[]).filter((i) => (effectiveTime(i, 'timeline') ?? -Infinity) > at);
  return newer.length
    ? `the page after the cursor holds ${newer.length} row(s) newer on the timeline than its anchor ${idOf(anchor)} (${newer
        .slice(0, 3)
        .map((i) => idOf(i))
        .join(', ')}): rows that sort before the anchor, not after it`
    : '';
}

/**
 * The story a merged id's Location (`location`, of `res`) leads to answers 200. On a live feed it may have merged in
 * turn since (a chain): the surviving story is then the one that still stands, so the id, asked again, must name
 * another story (one seen answering 308 is not the survivor), which is followed. The Location followed, for the report.
 */
async function followToSurvivor(t: CheckTools, id: string, res: HttpResponse, location: string): Promise<string> {
  let survivor = await feedGet(new URL(location, res.url));
  t.cite(survivor);
  if (survivor.status === 308) {
    const again = await feedGet(storyPath(id), { continuation: true });
    t.cite(again);
    const moved = again.header('location');
    if (again.status !== 308 || !moved) t.violation(`after ${id} was merged, it answered ${again.status}${moved ? '' : ' without Location'}`);
    if (new URL(moved, again.url).href === new URL(location, res.url).href)
      t.violation(`${id} still answers 308 to ${moved} after that story answered 308 (merged in turn): not the surviving story`);
    survivor = await feedGet(new URL(moved, again.url));
    t.cite(survivor);
    t.observe('Location after the survivor merged in turn', `${id} → ${location}, then → ${moved}`);
    location = moved;
  }
  if (survivor.status !== 200 && survivor.status !== 308) t.violation(`the Location of merged story ${id} (${location}) answered ${survivor.status}`);
  return location;
}

checkGroup('procedures walked across a change', () => {
  check(
    {
      id: 'feed-live-snapshot-page-after-change',
      title: 'a snapshot walk continues with nextPage after the selected set changed',
      requirements: ['feed-snapshot-paging'],
    },
    async (t) => {
      const m = await mirrorWalk();
      t.cite(...m.pages);
      if (!m.changed) quiet(t, 'the selected set (the changes after the first sync cursor)', m.changedMs);
      if (!m.afterChange) return t.notApplicable('the snapshot fit one page of 300: no continuation page to request after the change');
      t.cite(m.afterChange);
      t.observe('continuation after the change', `requested ${waited(m.changedMs)} after the set changed: ${m.afterChange.status}`);
      if (m.afterChange.status !== 200)
        t.violation(`the continuation page (nextPage of page 1), requested after the selected set changed, answered ${m.afterChange.status}`);
    },
  );

  check(
    {
      id: 'feed-live-mirror-reconciled',
      title: 'a snapshot walked while the set changes, then the changes from its cursor, give the selected set',
      requirements: ['feed-changes-reconcile', 'feed-changes-mirror'],
    },
    async (t) => {
      const m = await mirrorWalk();
      t.cite(...m.pages);
      if (!(await targetChanged(m))) quiet(t, 'the selected set (the changes after the first sync cursor) or any other watched resource', m.changedMs);
      precondition(m.afterChange === undefined || m.afterChange.status === 200, 'the snapshot walk did not complete');
      const { mirror, res, diff: found, fresh, compared } = await reconciled();
      t.cite(...res);
      if (compared === 0)
        t.notApplicable(
          "the changes came faster than the suite could read them: in each of three tries, a read of ten changes pages (the mirror's, or a fresh snapshot's) stopped with more to follow, so no mirror brought to the end was compared",
        );
      // Another watched resource moved, and the set read afresh is the walk's: the set itself did not change.
      if (!m.changed && differences(m.items, fresh).length === 0) quiet(t, 'the selected set (a fresh read equals the walk)', m.changedMs);
      let diff = found;
      t.observe('mirror', `${mirror.size} items after a walk of ${m.pages.length} page(s) across a change and the changes after its cursor`);
      if (diff.length) {
        const lost = await lostByPaging(diff.filter((id) => !mirror.has(id)));
        t.cite(...lost.res);
        diff = diff.filter((id) => !lost.ids.includes(id));
        precondition(
          diff.length > 0,
          `a snapshot walk in the mirror walk's page sizes never delivers ${lost.ids.slice(0, 3).join(', ')}, which a walk in pages of 1000 holds (feed-snapshot-paging judges that)`,
        );
      }
      if (diff.length) {
        const show = diff.slice(0, 3).map((id) => `${id}: mirror ${mirror.has(id) ? 'holds it' : 'lacks it'}`);
        t.violation(
          `after the snapshot walk and every change after its cursor, the mirror differs from the selected set on ${diff.length} item(s), each time compared (${show.join('; ')})`,
        );
      }
    },
  );

  check(
    {
      id: 'feed-live-items-page-after-arrivals',
      title: 'after rows arrive, the page a cursor leads to holds the rows that follow its anchor',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      const ip = profile().items;
      // The listing as the run's watch of it saw it, before and after its wait (the suite looks at it once more, no more).
      const w = await watched('listItems');
      const first = w.before;
      t.cite(first);
      precondition(first.status === 200, `GET /api/v1/items answered ${first.status}`);
      const p1 = listOf(json(first), ip.list!).map((i) => idOf(i));
      const cursor = field(json(first), ip.nextCursor!);
      if (typeof cursor !== 'string') return t.notApplicable('the listing has a single page: no cursor to follow');
      const anchorCursor: string = cursor;
      // Rows arrived (or left): the ids of the first page changed, not only an item's content.
      const ids = (r: HttpResponse) => (r.status === 200 ? listOf(json(r), ip.list!).map((i) => idOf(i)) : []);
      const change = w.after && ids(w.after).join() !== ids(first).join() ? { res: w.after, waitedMs: w.waitedMs } : undefined;
      if (!change) quiet(t, 'the rows of the first page of /api/v1/items', w.waitedMs || LIVE_WAIT_MS);
      t.cite(change.res);
      // The page the cursor leads to, between two reads of the listing: a row that follows the anchor in both (it was
      // there all along) and within the page's reach must be on the page, in the listing's order; rows that came or
      // went in between prove nothing (compared again, three times at most).
      let problem = '';
      for (let attempt = 0; attempt < 3; attempt++) {
        const again = attempt > 0;
        const before = await feedGet(ITEMS, { query: { limit: 100 }, again });
        const next = await feedGet(ITEMS, { query: { cursor: anchorCursor }, again });
        const after = await feedGet(ITEMS, { query: { limit: 100 }, again });
        t.cite(before, next, after);
        precondition(next.status === 200, `the cursor of the first page answered ${next.status} ${waited(change.waitedMs)} after it was issued`);
        problem = newerThanAnchor(json(first), next) || pageAfterAnchor(p1, ids(next), ids(before), ids(after));
        if (!problem) break;
      }
      t.observe('rows arrived', `the first page changed ${waited(change.waitedMs)} after it was read; its cursor followed then`);
      if (problem) t.violation(`${problem}, every time compared`);
    },
  );

  check(
    {
      id: 'feed-live-changed-resource-answers-200',
      title: 'a resource that changed answers 200 with a new ETag, not 304 to the old one',
      requirements: ['feed-changed-resource-200'],
    },
    async (t) => {
      const seen = await Promise.all(WATCHED.map((id) => watched(id)));
      const changed = seen.filter((w) => w.after);
      for (const w of seen) t.cite(w.before, ...(w.after ? [w.after] : []));
      if (!changed.length) quiet(t, `any of ${WATCHED.join(', ')}`, LIVE_WAIT_MS);
      t.observe('changed during the run', changed.map((w) => `${w.o.operationId} (after ${waited(w.waitedMs)})`).join(', '));
      for (const w of changed) {
        const old = w.before.header('etag');
        const now = w.after!.header('etag');
        if (old && now && weakMatch(old, now)) t.violation(`${w.path}: its content changed and its 200 kept the ETag ${old}`);
        // If-None-Match with the ETag of the old content: the watch's, asked as soon as the change was seen; and the
        // run's first read of the old content, when it carried another ETag.
        const probe = await operationProbe(w.o);
        const first = [probe.first].find((r) => r.status === 200 && r.header('etag') && contentOf(w.o, r) === contentOf(w.o, w.before))?.header('etag');
        const asked: [string, HttpResponse][] = w.replaced ? [[old!, w.replaced]] : [];
        if (first && !(old && weakMatch(first, old)))
          asked.push([first, await feedGet(w.path, { query: w.query, headers: { 'if-none-match': first }, continuation: true })]);
        const stale = asked.find(([, r]) => r.status === 304);
        t.cite(...asked.map(([, r]) => r));
        if (!stale) continue;
        const [tag] = stale;
        // A 304 is stale unless the content went back to the old one (read again to tell).
        const plain = await feedGet(w.path, { query: w.query, continuation: true });
        t.cite(plain);
        if (contentOf(w.o, plain) !== contentOf(w.o, w.before))
          t.violation(`${w.path}: its content changed (ETag ${tag} → ${plain.header('etag')}), and If-None-Match: ${tag} answered 304`);
      }
    },
  );

  check(
    {
      id: 'feed-live-304-after-change',
      title: 'after a change, a 304 carries the ETag and Cache-Control of the 200 it confirms',
      requirements: ['feed-304-headers-empty-body'],
    },
    async (t) => {
      const seen = await Promise.all(WATCHED.map((id) => watched(id)));
      const changed = seen.filter((w) => w.after?.header('etag'));
      if (!changed.length) quiet(t, `any of ${WATCHED.join(', ')}`, LIVE_WAIT_MS);
      let confirmed = 0;
      for (const w of changed) {
        // The 200 of the changed content, then If-None-Match with its ETag; moved in between: the new 200, again.
        let r200 = w.after!;
        let r304 = r200;
        for (let attempt = 0; attempt < 3; attempt++) {
          r304 = await feedGet(w.path, { query: w.query, headers: { 'if-none-match': r200.header('etag')! }, continuation: true, again: attempt > 0 });
          t.cite(r304);
          if (r304.status !== 200 || !r304.header('etag')) break;
          r200 = r304;
        }
        const etag = r200.header('etag')!;
        if (r304.status !== 304) continue; // kept moving: nothing to confirm
        confirmed++;
        // Weak comparison: a compressing proxy weakens the 200's ETag and not the 304's (the reference's proxy configuration, nginx).
        if (!weakMatch(r304.header('etag') ?? '', etag)) t.violation(`${w.path}: a 304 to If-None-Match: ${etag} carries ETag ${r304.header('etag')}`);
        // A 200 without Cache-Control gives nothing to compare (feed-200-etag-cache-control reports it).
        if (r200.header('cache-control') !== undefined && r304.header('cache-control') !== r200.header('cache-control'))
          t.violation(`${w.path}: a 304 carries Cache-Control "${r304.header('cache-control')}", its 200 "${r200.header('cache-control')}"`);
      }
      if (!confirmed) return t.notApplicable('every changed resource moved again before its 304 could be asked for');
    },
  );

  check(
    {
      id: 'feed-live-story-timeline-after-coverage',
      title: 'after new coverage, a story timeline is still reverse-chronological',
      requirements: ['feed-story-timeline-order'],
    },
    async (t) => {
      const w = await watched('getStory');
      t.cite(w.before);
      if (!w.after) quiet(t, `story ${w.path}`, LIVE_WAIT_MS);
      t.cite(w.after);
      if (w.after.status !== 200) return t.notApplicable(`story ${w.path} answered ${w.after.status} after it changed`);
      const p = profile().story;
      const timeline = listOf(field(json(w.after), p.root!), p.timeline!);
      const times = timeline.map((e) => Date.parse(String(field(e, p.timelineTime!))));
      t.observe('timeline after the change', `${timeline.length} entries, ${waited(w.waitedMs)} after it was first read`);
      for (let i = 1; i < times.length; i++)
        if (times[i]! > times[i - 1]!)
          t.violation(
            `after the story changed, timeline entry ${i} (${new Date(times[i]!).toISOString()}) is newer than entry ${i - 1} (${new Date(times[i - 1]!).toISOString()})`,
          );
    },
  );

  check(
    {
      id: 'feed-live-hot-topics-after-refresh',
      title: 'after the ranking is refreshed, hot topics are ten entries ranked 1 to 10 whose story links lead to stories',
      requirements: ['feed-hot-topics-ten', 'feed-hot-topics-rank', 'feed-hot-topics-story-link'],
    },
    async (t) => {
      const w = await watched('hotTopics');
      t.cite(w.before);
      if (!w.after) quiet(t, 'the hot-topics ranking', LIVE_WAIT_MS);
      t.cite(w.after);
      const entries = listOf(json(w.after), profile().hotTopics.list!);
      if (entries.length !== 10) t.violation(`after a refresh the hot topics have ${entries.length} entries`);
      // The ranks, in whatever order the array lists them (the document does not say the array is in rank order).
      const ranks = entries.map((e) => field(e, 'rank'));
      const sorted = ranks.every((r) => Number.isInteger(r)) ? (ranks as number[]).slice().sort((a, b) => a - b) : ranks;
      // 1 to the number of entries: a count other than ten is the line above's finding.
      if (sorted.join() !== entries.map((_e, i) => i + 1).join()) t.violation(`after a refresh the ranks are ${ranks.join(', ')}`);
      const before = new Set(listOf(json(w.before), profile().hotTopics.list!).map((e) => String(field(e, profile().hotTopics.storyLink!))));
      for (const e of entries) {
        const link = field(e, profile().hotTopics.storyLink!);
        if (typeof link !== 'string' || before.has(link)) continue;
        const id = decodeURIComponent(new URL(link).pathname.split('/').filter(Boolean).pop() ?? '');
        const res = await feedGet(storyPath(id));
        t.cite(res);
        if (res.status === 404) t.violation(`after a refresh, links.story ${link} names ${id}, which the story endpoint answers 404`);
      }
      t.observe('refresh', `the ranking changed ${waited(w.waitedMs)} after it was first read`);
    },
  );

  check(
    {
      id: 'feed-live-daily-published',
      title: 'after the next daily report is published, it heads the archive, latest is it, and past reports stay',
      requirements: ['feed-dailies-archive-order', 'feed-dailies-latest', 'feed-dailies-immutable'],
    },
    async (t) => {
      // The newest report as it was before the watch began (it is a past report once the next is published).
      const head = await archiveDate();
      const early = await feedGet(`/api/v1/dailies/${head.date}`);
      const w = await watched('listDailies');
      t.cite(early, w.before);
      if (!w.after) quiet(t, 'the daily-report archive', LIVE_WAIT_MS);
      t.cite(w.after);
      const dp = profile().dailies;
      const dates = (res: HttpResponse) => listOf(json(res), dp.list!).map((e) => String(field(e, dp.date!)));
      const old = dates(w.before);
      const now = dates(w.after);
      for (let i = 1; i < now.length; i++)
        if (!(now[i - 1]! > now[i]!)) t.violation(`after a publication the archive lists ${now[i - 1]} before ${now[i]}: not newest first`);
      if (now[0]! <= old[0]!) return t.notApplicable(`the archive changed without a new report at its head (${old[0]} → ${now[0]})`);
      const latest = await feedGet('/api/v1/dailies/latest');
      t.cite(latest);
      const latestDate = latest.status === 200 ? field(field(json(latest), profile().daily.root!), profile().daily.date!) : undefined;
      // Latest is the newest report: the one that headed the archive, or one published since (then the archive lists it).
      if (typeof latestDate !== 'string' || latestDate < now[0]!)
        t.violation(`after ${now[0]} was published, /api/v1/dailies/latest serves ${String(latestDate ?? latest.status)}`);
      else if (latestDate > now[0]!) {
        const archive = await feedGet(w.path, { query: w.query });
        t.cite(archive);
        const head2 = archive.status === 200 ? dates(archive)[0] : undefined;
        if (head2 !== undefined && latestDate > head2) t.violation(`/api/v1/dailies/latest serves ${latestDate}, newer than the archive's newest ${head2}`);
      }
      // The report read before the publication is a past report now: unchanged, the ETag it had then still current.
      const etag = early.header('etag');
      if (early.status === 200 && etag && head.date < now[0]!) {
        const again = await feedGet(`/api/v1/dailies/${head.date}`, { headers: { 'if-none-match': etag }, continuation: true });
        t.cite(again);
        if (again.status !== 304)
          t.violation(`the past report ${head.date} answered ${again.status} to the ETag ${etag} it had before ${now[0]} was published`);
      }
      t.observe('published', `${now[0]} appeared ${waited(w.waitedMs)} after the archive was first read`);
    },
  );

  check(
    {
      id: 'feed-live-merge-308',
      title: 'a story merged during the run answers 308, also to a conditional request with its old ETag',
      requirements: ['feed-story-merged-308'],
    },
    async (t) => {
      // The stories the hot topics link, as the hot-topics watch first read them (at the start of the run).
      const hot = await firstRead('hotTopics');
      t.cite(hot.before);
      const first = await Promise.all(linkedIds(hot.before).map(async (id) => ({ id, res: await feedGet(storyPath(id), { continuation: true }) })));
      const start = Date.now();
      const live = first.filter((s) => s.res.status === 200 && s.res.header('etag'));
      t.cite(...first.map((s) => s.res));
      // A linked story that answers 308 now, and that the run saw answer 200 with an ETag earlier, was merged during
      // the run (before this check began): its last ETag is that 200's. One that answered 308 from the run's first
      // look at it may have been merged long before: not known to be new.
      const lastEtag = (url: string) =>
        runExchanges('feed')
          .filter((x) => x.method === 'GET' && x.status === 200 && x.url.split('?')[0] === url.split('?')[0] && x.responseHeaders?.etag)
          .at(-1)?.responseHeaders?.etag;
      let merged: { id: string; res: HttpResponse; etag?: string } | undefined = first
        .filter((s) => s.res.status === 308)
        .map((s) => ({ id: s.id, res: s.res, etag: lastEtag(s.res.url) }))
        .find((s) => s.etag);
      if (!merged && !live.length) return t.notApplicable('no story the hot topics link answered 200 with an ETag');
      if (!merged) {
        // One look at each after the wait (lookAgain): one that answers 308 then was merged during it.
        await afterTheWait(start);
        const looks = await Promise.all(live.map(async (s) => ({ s, res: await lookAgain(s.id, lastEtag(s.res.url)) })));
        const hit = looks.find((l) => l.res.status === 308);
        // Its last ETag: the run's last 200 of it (another check may have read it after this one's first look).
        if (hit) merged = { id: hit.s.id, res: hit.res, etag: lastEtag(hit.s.res.url) ?? hit.s.res.header('etag')! };
      }
      if (!merged)
        return t.notApplicable(
          `the target did not change during the run: waited ${waited(Date.now() - start)} for one of the stories ${live.map((s) => s.id).join(', ')} to answer 308`,
        );
      t.cite(merged.res);
      const location = merged.res.header('location');
      if (!location) fail(`${storyPath(merged.id)} answered 308 without Location`);
      if (merged.etag) {
        const cond = await feedGet(storyPath(merged.id), { headers: { 'if-none-match': merged.etag }, continuation: true });
        t.cite(cond);
        if (cond.status !== 308) t.violation(`after ${merged.id} was merged, If-None-Match with its last ETag answered ${cond.status}, where 308 is required`);
      } else t.observe('conditional request', `not made: the run saw no 200 of ${merged.id} with an ETag before it was merged`);
      const to = await followToSurvivor(t, merged.id, merged.res, location);
      t.observe('merged during the run', `${merged.id} → ${to}, ${waited(Date.now() - start)} after the watch began`);
    },
  );

  check(
    {
      id: 'feed-live-cursor-reused-late',
      title: 'an items cursor reused after the run has waited is still accepted',
      requirements: ['feed-items-cursor-no-timer'],
    },
    async (t) => {
      const c = await earliestCursor();
      precondition(c, 'the items listing gave no cursor (a single page)');
      // After the longest wait of the run: every watch and the mirror walk have ended.
      await Promise.all([...WATCHED.map((id) => watched(id)), mirrorWalk()].map((p) => p.catch(() => undefined)));
      // Also a cursor the run has used once already (the continuation page's watch followed it at once: a cursor
      // consumed by its first use shows), and one whose page's rows a live feed removes while the run waits.
      const next = await watched(NEXT_PAGE).catch(() => undefined);
      const used: Issued | undefined =
        next?.issuedBy && typeof next.query?.cursor === 'string'
          ? {
              cursor: next.query.cursor,
              at: next.at,
              query: {},
              body: json(next.issuedBy),
              res: next.issuedBy,
              source: 'the cursor the continuation page watch followed at once',
            }
          : undefined;
      const wide = await wideCursor().catch(() => undefined);
      const all = [c, ...[used, wide].filter((x): x is Issued => !!x && x.cursor !== c.cursor)];
      // Every cursor is sent again by the moment the earliest one is CURSOR_REUSE_MS old, not later: the run does
      // not wait longer for the younger ones (each says how long it waited; a timer longer than that is not seen).
      const notAfter = Math.max(c.at + CURSOR_REUSE_MS, Date.now());
      for (const x of all) await reuseLate(t, x, x === used ? 'after its first use' : 'after it was issued', notAfter);
    },
  );
});

checkGroup('a mirror kept on after it caught up', () => {
  check(
    {
      id: 'feed-live-mirror-kept-on',
      title: "a mirror kept on after a changes answer listed no change gets, from that answer's cursor, the changes made after it",
      requirements: ['feed-changes-mirror'],
    },
    async (t) => {
      const k = await keptOn();
      t.cite(...k.res);
      if (k.error) throw k.error;
      if (k.skipped) return skippedOut(t, k.skipped);
      t.observe('after the empty answer', `the set changed on ${k.changed.length} item(s) (${k.changed.slice(0, 3).join(', ')})`);
      if (k.diff.length)
        t.violation(
          `after a changes answer with no change (${k.empty!.url}), two snapshot walks show ${k.changed.length} item(s) changed that no change before it named, and the changes from its cursor, asked ${waited(LIVE_WAIT_MS)} later, name none of ${k.diff.length} of them (${k.diff.slice(0, 3).join(', ')}): changes made after a quiet poll are not delivered`,
        );
    },
  );

  check(
    {
      id: 'feed-live-changes-304-after-quiet',
      title: 'the ETag of a changes answer that listed no change gets no 304 once changes after that cursor are listed',
      requirements: ['feed-changed-resource-200'],
    },
    async (t) => {
      const k = await keptOn();
      t.cite(...k.res);
      if (k.error)
        return t.notApplicable(
          `the kept-on mirror's procedure broke off (feed-live-mirror-kept-on reports it): ${String((k.error as Error).message ?? k.error).split('\n')[0]}`,
        );
      if (k.skipped) return skippedOut(t, k.skipped);
      precondition(k.conditional, 'the empty changes answer carried no ETag', 'feed-200-etag-cache-control');
      if (!k.plain) return t.observe('after the wait', `If-None-Match ${k.empty!.header('etag')}: ${k.conditional.status}`);
      const listed = listOf(json(k.plain), profile().changes.list!).length;
      if (listed === 0) return t.notApplicable('the cursor, asked again after the wait, listed no change (the set changed after that answer)');
      t.observe('after the wait', `If-None-Match ${k.empty!.header('etag')}: ${k.conditional.status}; asked plainly: ${listed} change(s)`);
      const again = k.conditionalAgain;
      if (again?.status === 304 && ![k.conditional, k.plain, again].some(fromCache))
        t.violation(
          `GET ${again.url} with If-None-Match ${k.empty!.header('etag')} (the ETag of its answer listing no change) answered 304 twice, before and after the same request without it listed ${listed} change(s)`,
        );
    },
  );
});

/**
 * A story looked at again as a polling client looks: If-None-Match with the last ETag the run saw it answer (a version
 * replayed to it shows in feed-run-matching-etag-not-answered-200). A 304 is asked once more plainly: a merged story
 * that answers its old ETag 304 is feed-live-merge-308's own defect (the 308 comes first, also to a conditional
 * request), seen when the plain look answers 308.
 */
async function lookAgain(id: string, etag: string | undefined): Promise<HttpResponse> {
  const res = await feedGet(storyPath(id), { continuation: true, ...(etag ? { headers: { 'if-none-match': etag } } : {}) });
  return res.status === 304 ? feedGet(storyPath(id), { continuation: true }) : res;
}

/**
 * `c` sent again CURSOR_REUSE_MS after `c.at` (when it was issued, or first used), or at `notAfter` if that comes first: while its anchor (the last
 * row of the page that gave it) is in the 7d window and still listed, it is accepted.
 */
async function reuseLate(t: CheckTools, c: Issued, since: string, notAfter: number): Promise<void> {
  // Since its first use when the run sent it already (a cursor consumed by its first use shows then).
  const firstUse = runExchanges('feed').find((x) => x.method === 'GET' && x.status === 200 && new URL(x.url).searchParams.get('cursor') === c.cursor);
  if (firstUse && Date.parse(firstUse.startedAt) + firstUse.durationMs > c.at) {
    c = { ...c, at: Date.parse(firstUse.startedAt) + firstUse.durationMs };
    since = 'after its first use';
  }
  const wait = Math.min(c.at + CURSOR_REUSE_MS, notAfter) - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const age = Date.now() - c.at;
  const res = await feedGet(ITEMS, { query: { ...c.query, cursor: c.cursor } });
  t.cite(...(c.res ? [c.res] : []), res);
  t.observe(`cursor (${c.source})`, `reused ${waited(age)} ${since}: a timer longer than that is not seen`);
  if (res.status !== 400 || !/invalid_cursor/.test(res.body)) return;
  // Only an anchor that left the window may be rejected: the last row of the page that gave the cursor.
  const items = listOf(c.body, profile().items.list!);
  const anchor = items[items.length - 1] as Record<string, unknown> | undefined;
  const key = anchor ? effectiveTime(anchor, 'timeline') : undefined;
  if (key !== undefined && key <= Date.now() - 7 * 86_400_000 + 120_000) return;
  // An anchor taken out of the listing since (removed, withdrawn) is not judged: the document says nothing of it.
  if (anchor && !(await stillListed(t, idOf(anchor))))
    return t.observe('rejected', `${c.source}: its anchor ${idOf(anchor)} has left the listing since: not judged`);
  t.violation(`${c.source}, reused ${waited(age)} ${since}, whose anchor is still in the 7d window, was rejected with invalid_cursor`);
}

/** Whether `id` is among the first 300 rows of the default listing now. */
async function stillListed(t: CheckTools, id: string): Promise<boolean> {
  const ip = profile().items;
  let cursor: unknown;
  for (let i = 0; i < 3; i++) {
    const res = await feedGet(ITEMS, { query: typeof cursor === 'string' ? { limit: 100, cursor } : { limit: 100 } });
    t.cite(res);
    if (res.status !== 200) return false;
    if (listOf(json(res), ip.list!).some((r) => idOf(r) === id)) return true;
    cursor = field(json(res), ip.nextCursor!);
    if (typeof cursor !== 'string') return false;
  }
  return false;
}

checkGroup('a search of the selected set, across a removal', () => {
  check(
    {
      id: 'feed-live-search-selected-current',
      title: 'a search (q) in mode=selected no longer lists an item once it has left the selected set',
      requirements: ['feed-items-mode-selects'],
    },
    async (t) => {
      startWatches();
      const s = await searchBefore();
      if (!s) return t.notApplicable('no search to repeat: no title word of three letters or more, no sync cursor, or the search listed nothing');
      t.cite(...s.res);
      await afterTheWait(s.at);
      // The changes since the sync cursor, read to their end: the ids whose last change was a removal have been out
      // of the selected set since (at least) that answer.
      const changes = await readChanges(s.cursor, 30, (r) => r.status === 200, json);
      t.cite(...changes.res);
      if (!changes.complete) t.notApplicable('the changes since the search came faster than thirty pages could read them');
      const last = new Map<string, unknown>();
      for (const ch of changes.bodies.flatMap((b) => listOf(b, profile().changes.list!))) last.set(String(changeOf(ch).id), changeOf(ch).op);
      const removed = [...last].filter(([id, op]) => op === 'remove' && s.listed.has(id)).map(([id]) => id);
      if (!removed.length) quiet(t, `the selected set (an item the search q=${s.word}, mode=selected, listed leaving it)`, Date.now() - s.at);
      t.observe('left the selected set after the search listed them', removed.join(', '));
      // The same search, after a pause a search index may trail the set by; then the plain listing and the changes
      // since: a row back in the set (an upsert after the first read) is not judged.
      await pause(SEARCH_LAG_MS);
      const again = await feedGet(ITEMS, { query: s.query, continuation: true });
      const plain = await feedGet(ITEMS, { query: { mode: 'selected', window: '24h', limit: 100 }, continuation: true });
      const since = await readChanges(changes.cursor, 10, (r) => r.status === 200, json);
      t.cite(again, plain, ...since.res);
      precondition(again.status === 200 && plain.status === 200, `the search asked again answered ${again.status}, the plain listing ${plain.status}`);
      const back = new Set(since.bodies.flatMap((b) => listOf(b, profile().changes.list!)).map((ch) => String(changeOf(ch).id)));
      const plainRows = listOf(json(plain), profile().items.list!) as Record<string, unknown>[];
      const plainIds = new Set(plainRows.map((r) => idOf(r)));
      const reach = field(json(plain), profile().items.hasMore!) === true ? effectiveTime(plainRows.at(-1) ?? {}, 'timeline') : -Infinity;
      // Judged only where the plain listing of the selected set, read right after, reaches and agrees.
      const ghosts = (listOf(json(again), profile().items.list!) as Record<string, unknown>[]).filter((r) => {
        const id = idOf(r);
        const at = effectiveTime(r, 'timeline');
        return removed.includes(id) && !back.has(id) && !plainIds.has(id) && reach !== undefined && at !== undefined && at >= reach;
      });
      if (ghosts.length)
        t.violation(
          `the search q=${s.word} in mode=selected, asked at least ${waited(SEARCH_LAG_MS)} after the changes feed listed their removal, still lists ${ghosts.length} item(s) no longer selected: ` +
            `${ghosts
              .slice(0, 3)
              .map((r) => idOf(r))
              .join(', ')} (the changes feed names no return, and the plain mode=selected listing read right after, reaching their place, lacks them)`,
        );
    },
  );
});

checkGroup('a publication, across the watches', () => {
  check(
    {
      id: 'feed-live-daily-new-date-served',
      title: 'a daily report published during the run answers 200 at /dailies/{date} as soon as the archive lists its date',
      requirements: ['feed-dailies-by-date'],
    },
    async (t) => {
      const w = await watched('listDailies');
      t.cite(w.before);
      if (!w.after) quiet(t, 'the daily-report archive', LIVE_WAIT_MS);
      t.cite(w.after);
      const dp = profile().dailies;
      const dates = (res: HttpResponse) => listOf(json(res), dp.list!).map((e) => String(field(e, dp.date!)));
      const old = new Set(dates(w.before));
      const fresh = dates(w.after).filter((d) => !old.has(d));
      if (!fresh.length) return t.notApplicable('the archive changed without listing a new date');
      // Asked at once: the archive listed the date, so its report is served.
      for (const date of fresh.slice(0, 2)) {
        const res = await feedGet(`/api/v1/dailies/${date}`);
        t.cite(res);
        if (res.status !== 200)
          t.violation(`${date}, listed by the archive ${waited(w.waitedMs)} into the run, answered ${res.status} at /api/v1/dailies/${date}`);
        const served = field(field(json(res), profile().daily.root!), profile().daily.date!);
        if (served !== date) t.violation(`/api/v1/dailies/${date} served the report of ${String(served)}`);
      }
      t.observe('published', fresh.slice(0, 2).join(', '));
    },
  );
});
