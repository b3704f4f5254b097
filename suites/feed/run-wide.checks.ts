/**
 * content-feed-service.md — Errors; Endpoints: checks over every exchange the run made with the feed, run after
 * all other feed checks (suites/all.conformance.ts loads this module last); and the run's first cursor, reused at
 * its end.
 */
import { beforeAll, describe } from 'vitest';
import { AssertionViolation, check, expect, precondition, PreconditionFailed, type CheckTools } from '../../src/harness.js';
import type { Exchange } from '../../src/http.js';
import { operationPath, runExchanges } from '../../src/context.js';
import {
  FEED_BUDGET,
  feedGet,
  firstCursor,
  fromCache,
  heatNamedKeys,
  datedWellBefore,
  inputJson,
  instant,
  listOf,
  minimalDropped,
  needsAccess,
  once,
  pagesOrder,
  problemCode,
  profile,
  storyPath,
} from '../../src/feed.js';
import { ENTITY_TAG, sMaxAge, staleForADay, weakMatch } from '../../src/caching.js';
import { componentSchema, field, formatAjvErrors, loadOpenApi, parameter, validator } from '../../src/spec.js';
import { contentDigest, USER_AGENT, type HttpResponse } from '../../src/http.js';
import {
  changeEntries,
  changesCursorMoves,
  archiveOrder,
  archiveSizes,
  dailyHeadNeverOlder,
  dailySame,
  bodiesMatch,
  discoveredAtFixed,
  itemsOf,
  hotTopicsSMaxAge,
  hotTopicRanks,
  hotTopicsTen,
  locationSurvives,
  redirectsLocated,
  lostByWalk,
  mergedStaysMerged,
  longestUnchanged,
  movedUrls,
  noStaleNotModified,
  replacedVersionForCurrent,
  matchingEtagAnsweredFull,
  noStaleHead,
  itemTitlesGoBack,
  sameDirectives,
  notModifiedCachedAsOk,
  sameContentSameEtag,
  sameEtagSameContent,
  seenOf,
  snapshotNextPageMoves,
  nextPageMoves,
  snapshotWalkCursors,
  rowsInWindow,
  movedLocations,
  type BodyValue,
  type Judged,
  type Seen,
  isReportByDate,
  refusedCursorsStayRefused,
  cursorPagesLeadOn,
  moreHasNext,
  pagesSayMore,
  smallSnapshotPagesHaveMore,
  apiLinksUnderV1,
  referenceLinksNameTheirIds,
  snapshotWalkFields,
  firstListings,
  digestOf,
  filteredRowsHold,
  pagesWithinLimit,
  filteredPagesComplete,
  versionsNeverReturn,
  nextPagesAccepted,
  changedIds,
  viewLacks,
  type ItemsView,
} from '../../src/between.js';

/** The run's exchanges with the feed: under its base URL (a redirect followed out of a path prefix reached something else). */
const feedExchanges = () => runExchanges('feed').filter((x) => operationPath('feed', x.url) !== undefined);
/**
 * A 403 to the suite's one request that names no client (an empty User-Agent): an edge in front of the service
 * (a bot filter) turns such callers away in its own form, which the conditions of a 403, not shown, allow; the
 * every-error rules do not judge it.
 */
const edgeRefusal = (x: Exchange) => x.status === 403 && x.requestHeaders?.['user-agent'] === '';
/** The run's error responses (a HEAD has no body to judge). */
const errorExchanges = () => feedExchanges().filter((x) => x.status! >= 400 && x.method !== 'HEAD' && !edgeRefusal(x));
const mediaType = (x: Exchange) => (x.responseHeaders?.['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
/** A charset parameter naming another than UTF-8, which JSON exchanged between systems is (RFC 8259 8.1). */
const notUtf8 = (x: Exchange) => {
  const c = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(x.responseHeaders?.['content-type'] ?? '')?.[1]?.toLowerCase();
  // US-ASCII is UTF-8's subset: JSON in it is UTF-8 too.
  return c !== undefined && !['utf-8', 'utf8', 'us-ascii', 'ascii'].includes(c);
};

/** The content digest of an answer's JSON body (as the record takes it), undefined when it is not JSON. */
function bodyDigest(res: HttpResponse): string | undefined {
  try {
    return contentDigest(JSON.parse(res.body));
  } catch {
    return undefined;
  }
}

/**
 * A string that can be a URI reference (RFC 3986 4.1): none of the characters a URI never holds (space and the other
 * excluded ASCII characters), every % the start of a percent-encoding. Characters beyond ASCII are not judged (an IRI).
 */
const uriReference = (s: string) => !/[\x00-\x20"<>\\^`{|}\x7f]/.test(s) && !/%(?![0-9A-Fa-f]{2})/.test(s);

/** Fail with how many of the `seen` responses broke the rule, and the first three of them. */
function violations<T>(t: CheckTools, bad: T[], seen: number, what: string, show: (b: T) => string): void {
  if (bad.length) t.violation(`${bad.length} of ${seen} ${what}, e.g. ${bad.slice(0, 3).map(show).join('; ')}`);
}

/**
 * The least age of the cursor reused below: one reused a moment after it was issued says nothing about a timer. The
 * cursor is the run's first (taken by the items checks at its start) and reused here, after every other feed check,
 * as old as the run allows: against a remote deployment that is many seconds, and nothing waits; against one on
 * loopback the run is shorter than this, and the check waits the rest.
 */
const CURSOR_REUSE_AGE_MS = 1500;

/** The oldest a sync cursor is asked to be: about what a walk of several thousand items in pages of 500 takes at a remote pace. */
const SYNC_CURSOR_AGE_MAX_MS = 60_000;

/** The run's earliest snapshot sync cursor (a first page's, read whole), and when its answer came. */
function earliestSyncCursor(): { cursor: string; at: number; x: Exchange } | undefined {
  for (const s of runSeen()) {
    const q = new URL(s.x.url).searchParams;
    const cursor = field(s.body, 'cursor');
    if (s.path === '/api/v1/selected/snapshot' && s.status === 200 && q.get('page') === null && typeof cursor === 'string')
      return { cursor, at: s.received, x: s.x };
  }
  return undefined;
}

describe.sequential('the cursor lifetime, at the end of the run', () => {
  check(
    {
      id: 'feed-changes-snapshot-cursor-still-valid',
      title: "the sync cursor of the run's first snapshot is still accepted by the changes endpoint at the end of the run",
      requirements: ['feed-changes-accepts-snapshot-cursor'],
    },
    async (t) => {
      const first = earliestSyncCursor();
      if (!first) return t.notApplicable('the run read no first snapshot page with a sync cursor');
      t.observe('sync cursor', `of ${first.x.method} ${first.x.url}`);
      const young = CURSOR_REUSE_AGE_MS - (Date.now() - first.at);
      if (young > 0) await new Promise((r) => setTimeout(r, young));
      // The procedure calls the changes endpoint with that cursor after the last page, however long the walk of a set of
      // several thousand items took: a minute at most is asked of it here (the document states no retention beyond).
      const age = Date.now() - first.at;
      if (age > SYNC_CURSOR_AGE_MAX_MS)
        return t.notApplicable(
          `the run's first sync cursor is ${(age / 1000).toFixed(0)} s old: longer than a snapshot walk needs (a change log's retention is not stated)`,
        );
      const again = await feedGet('/api/v1/selected/changes', { query: { [profile().changes.cursorParam!]: first.cursor } });
      t.cite(again);
      needsAccess(again, 'the changes endpoint');
      t.observe('sync cursor age when used', `${(age / 1000).toFixed(1)} s`);
      expect(again.status, "the changes endpoint with the sync cursor of the run's first snapshot").toBe(200);
    },
  );

  check(
    {
      id: 'feed-items-cursor-still-valid',
      title: 'a cursor taken earlier in the run is still accepted: it does not expire on a timer',
      requirements: ['feed-items-cursor-no-timer'],
    },
    async (t) => {
      // Whether the listing answers 200 at all, and gives a cursor, is other checks' requirement.
      const first = await firstCursor().catch((e: unknown) => {
        if (e instanceof AssertionViolation) throw new PreconditionFailed(e.message, ['feed-items-paging']);
        throw e;
      });
      const { cursor, at, res } = first;
      t.cite(res);
      const young = CURSOR_REUSE_AGE_MS - (Date.now() - at);
      if (young > 0) await new Promise((r) => setTimeout(r, young));
      const again = await feedGet('/api/v1/items', { query: { limit: 5, cursor } });
      t.observe('cursor age when reused', `${((Date.now() - at) / 1000).toFixed(1)} s`);
      expect(again.status, 'the same query with a cursor from earlier in the run').toBe(200);
    },
  );
});

describe.sequential('the listings read first, revalidated at the end of the run', () => {
  check(
    {
      id: 'feed-run-first-listings-revalidated',
      title:
        'the filtered listings and continuation pages the run read first, asked at its end with their first ETag, do not answer 304 once their content has changed',
      requirements: ['feed-changed-resource-200'],
    },
    async (t) => {
      // Listings read at least this long ago, each another set of parameters (a filter, a window, a mode, a search):
      // a live feed changes some of them meanwhile, and a validator computed over the query, or kept per URL, says 304.
      // A continuation page too (the one of the smallest limit: nearest the head, where a live feed edits most): a
      // page's ETag computed over the ids it lists misses an edit of one of its rows.
      const before = Date.now() - 1000;
      const limitOf = (s: Seen) => Number(new URL(s.x.url).searchParams.get('limit') ?? 50) || 50;
      const firsts = [
        ...firstListings(runSeen(), { path: '/api/v1/items', skip: ['cursor'], max: 5, before }),
        ...firstListings(runSeen(), { path: '/api/v1/items', skip: [], only: 'cursor', max: 20, before })
          .sort((a, b) => limitOf(a) - limitOf(b))
          .slice(0, 1),
      ];
      if (firsts.length === 0) return t.notApplicable('the run read no filtered listing with an ETag');
      let changed = 0;
      for (const s of firsts) {
        const query = Object.fromEntries(new URL(s.x.url).searchParams);
        const ask = () => feedGet('/api/v1/items', { query, headers: { 'if-none-match': s.etag! } });
        const again = await ask();
        t.cite(again);
        if (again.status === 200) {
          if (bodyDigest(again) !== digestOf(s)) changed++;
          continue;
        }
        if (again.status !== 304 || fromCache(again)) continue;
        // A 304: the content as it is now, read plainly; then, when it is another content under another ETag (the same
        // ETag on other content is feed-run-same-etag-same-content's), the first ETag again, and the content once more
        // (an instance that still held the old content rightly said 304: the content read after it tells).
        const plain = await feedGet('/api/v1/items', { query });
        t.cite(plain);
        const moved = (r: HttpResponse) => r.status === 200 && !fromCache(r) && bodyDigest(r) !== digestOf(s) && !weakMatch(r.header('etag') ?? '', s.etag!);
        if (!moved(plain)) continue;
        changed++;
        const stale = await ask();
        t.cite(stale);
        if (stale.status !== 304 || fromCache(stale)) continue;
        const confirm = await feedGet('/api/v1/items', { query });
        t.cite(confirm);
        if (moved(confirm))
          t.violation(
            `${s.key}: read first with ETag ${s.etag} at ${new Date(s.received).toISOString().slice(11, 23)}; its content has changed since (read again, ETag ${plain.header('etag') ?? '(none)'}), and If-None-Match: ${s.etag} answered 304 between that read and another of the changed content (ETag ${confirm.header('etag') ?? '(none)'})`,
          );
      }
      t.observe('listings asked again with their first ETag', `${firsts.length} (${firsts.map((s) => s.key).join(', ')}); ${changed} changed since`);
      if (changed === 0) return t.notApplicable(`the target did not change during the run: none of the ${firsts.length} listings first read changed`);
    },
  );
});

// Requests at the end of the run, before the rules that read every response: the changes backlog from the run's first
// sync cursor (its helpers below).
describe.sequential('the changes backlog, paged', () => {
  check(
    {
      id: 'feed-changes-backlog-paged',
      title: 'the changes after a sync cursor, read in small pages while hasMore is true, hold every change one large page from that cursor holds',
      requirements: ['feed-changes-mirror'],
    },
    async (t) => {
      const p = profile().changes;
      const keys = { list: p.list!, itemId: p.itemId!, removedId: p.removedId! };
      // The run's oldest sync cursor: the longest backlog the run can read without waiting.
      const cursor = runSeen()
        .filter((s) => s.path === '/api/v1/selected/snapshot' && s.status === 200)
        .map((s) => field(s.body, 'cursor'))
        .find((c): c is string => typeof c === 'string');
      if (!cursor) return t.notApplicable('the run read no snapshot page with a sync cursor');
      // notes/real-deployments.md: the changes endpoint takes limit=1..100 (the document shows no parameter of it).
      const before = await changesPage(cursor, 100, t);
      if (!before) return t.notApplicable('the changes endpoint refused limit=100 (400): it pages no backlog by limit');
      const large = changeEntries(before.body, keys);
      if (large.length < 2) return t.notApplicable(`${large.length} change(s) after the run's oldest sync cursor: no backlog to page`);
      const size = Math.ceil(large.length / 3);
      const walk: ReturnType<typeof changeEntries> = [];
      let c = cursor;
      let pages = 0;
      while (pages < Math.ceil(large.length / size) + BACKLOG_SPARE_PAGES) {
        pages++;
        const page = await changesPage(c, size, t, c !== cursor);
        if (!page) return t.notApplicable(`the changes endpoint refused limit=${size} (400), having taken limit=100`);
        walk.push(...changeEntries(page.body, keys));
        const next = field(page.body, p.nextCursor!);
        if (typeof next === 'string') c = next;
        if (field(page.body, p.hasMore!) !== true) break;
      }
      const after = await changesPage(cursor, 100, t);
      precondition(after, 'the changes endpoint refused limit=100 (400) the second time');
      const lost = lostByWalk(large, walk, changeEntries(after.body, keys));
      t.observe('backlog', `${large.length} change(s) in one page of 100; walked in ${pages} page(s) of ${size}: ${walk.length} change(s)`);
      violations(
        t,
        lost,
        large.length,
        `changes one page of 100 from the cursor held before and after a walk in pages of ${size} were named by no page of the walk (lost between pages, or a page that said hasMore false with more to come)`,
        (e) => e.change,
      );
    },
  );
});

// After every other feed check: these read every response the run saw.
// Late in the run, after the changes a live feed made during it: each view of the listing read between two plain
// listings, all at URLs the run has not asked before (no cache, a server's own included, can answer them with an older
// copy), and what a view lacks asked again at other such URLs before it is named.
const VIEW_LIMITS = [99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, 80];
/**
 * The views read late: the categories the plain listing's newest rows carry most (two), and the publication order.
 * (window=24h and mode=all pages are held to the listings around them by the run-wide rules over the run's own pages:
 * feed-run-items-window-pages-complete, feed-run-items-all-mode-pages-complete.)
 */
const MAX_VIEW_CATEGORIES = 2;
interface ViewsRead {
  /** Why no view was read: the run's requests so far leave no room for them under the remote budget. */
  skipped?: string;
  bases: HttpResponse[];
  views: { spec: ItemsView; label: string; res: HttpResponse; again?: HttpResponse; lacks?: { expected: string[]; missing: string[] } }[];
}
const viewLabel = (v: ItemsView) =>
  v.kind === 'category'
    ? `category=${v.category}${v.all ? '&mode=all' : ''}`
    : v.kind === 'published'
      ? 'by=published'
      : v.kind === 'window'
        ? 'window=24h'
        : 'mode=all';
const viewQuery = (v: ItemsView): Record<string, string> =>
  v.kind === 'category'
    ? { category: v.category, ...(v.all ? { mode: 'all' } : {}) }
    : v.kind === 'published'
      ? { by: 'published' }
      : v.kind === 'window'
        ? { window: '24h' }
        : { mode: 'all' };
/** The plain listing a view is judged against: mode=all for a view under mode=all, else the selected one. */
const baseQuery = (v: ItemsView): Record<string, string> => (v.kind === 'category' && v.all ? { mode: 'all' } : {});

/** The rows of an items answer (none unless it is a 200). */
const itemRows = (r: HttpResponse) => (r.status === 200 ? (listOf(inputJson(r, `GET ${r.url}`), profile().items.list!) as Record<string, unknown>[]) : []);

/** What a view lacks against the plain listings read around it (viewLacks), or undefined when it cannot be judged. */
function judgeView(bs: HttpResponse[], v: HttpResponse, spec: ItemsView): ReturnType<typeof viewLacks> {
  const p = profile().items;
  // An answer dated well before it was read is a stored one, Age or not.
  if ([...bs, v].some((r) => r.status !== 200 || fromCache(r) || datedWellBefore(r.header('date'), Date.now()))) return undefined;
  const hasMore = field(inputJson(v, `GET ${v.url}`), p.hasMore!);
  if (typeof hasMore !== 'boolean') return undefined;
  const date = Date.parse(v.header('date') ?? '');
  return viewLacks({
    bases: bs.map(itemRows),
    view: { rows: itemRows(v), hasMore, date: Number.isNaN(date) ? Date.now() : date },
    spec,
    id: p.id!,
    ...(p.category ? { category: p.category } : {}),
  });
}

/** What the views may take of the remote budget (FEED_BUDGET). */
const VIEWS_AT_MOST = 12;
/** What the run sends after the views (the late look, the changes backlog): 21 requests, measured 2026-11-29. */
const AFTER_THE_VIEWS = 24;

/** Whether `n` more feed requests keep the run within the remote budget. */
const roomFor = (n: number): boolean => runExchanges('feed').length + n <= FEED_BUDGET;
/** Why a late question was not asked: `what`, and the run's feed requests so far against the remote budget. */
const leftForBudget = (what: string): string => `${what}: the run had sent ${runExchanges('feed').length} feed requests (the remote budget is ${FEED_BUDGET})`;

/**
 * Late in the run, the views are read only when the run's requests so far leave room for them under the remote budget
 * (a busy feed's walks take more of it): why not, or undefined.
 */
function overBudget(): string | undefined {
  if (roomFor(VIEWS_AT_MOST + AFTER_THE_VIEWS)) return undefined;
  return `the run had sent ${runExchanges('feed').length} feed requests: the late views (up to ${VIEWS_AT_MOST}) and the requests after them (about ${AFTER_THE_VIEWS}) would pass the remote budget of ${FEED_BUDGET}`;
}

function viewsRead(): Promise<ViewsRead> {
  return once('late:views', async () => {
    const skipped = overBudget();
    if (skipped) return { skipped, bases: [], views: [] };
    const asked = new Set(runExchanges('feed').map((x) => sortedQuery(x.url)));
    // The limits in an order of this run's own: two runs close together ask other URLs (a cache in front that sends
    // no Age may still hold the last run's).
    const offset = Math.floor(Math.random() * VIEW_LIMITS.length);
    const limits = [...VIEW_LIMITS.slice(offset), ...VIEW_LIMITS.slice(0, offset)];
    const fresh = (query: Record<string, string>) => {
      for (const limit of limits) {
        const q = { ...query, limit: String(limit) };
        const key = sortedQuery(`http://x/api/v1/items?${new URLSearchParams(q)}`);
        if (!asked.has(key)) {
          asked.add(key);
          return q;
        }
      }
      return undefined;
    };
    const p = profile().items;
    // Every request of the views names window=7d: a default window the deployment gets wrong is its own rule's finding.
    const base = (extra: Record<string, string> = {}) => {
      const q = fresh({ window: '7d', ...extra });
      return q ? feedGet('/api/v1/items', { query: q }) : undefined;
    };
    const first = await base();
    if (!first) return { bases: [], views: [] };
    const categories = new Map<string, number>();
    for (const r of itemRows(first).slice(0, 20)) {
      const c = p.category ? field(r, p.category) : undefined;
      if (typeof c === 'string' && c.trim()) categories.set(c, (categories.get(c) ?? 0) + 1);
    }
    const top = [...categories].sort((a, b) => b[1] - a[1]).slice(0, MAX_VIEW_CATEGORIES);
    const specs: ItemsView[] = [
      ...top.map(([category]) => ({ kind: 'category' as const, category })),
      // The most common category under mode=all too, judged against a mode=all listing: its rows outside the selection
      // are rows of that category as much as the selected ones.
      ...top.slice(0, 1).map(([category]) => ({ kind: 'category' as const, category, all: true })),
      { kind: 'published' },
    ];
    const ask = (spec: ItemsView) => {
      const q = fresh({ window: '7d', ...viewQuery(spec) });
      return q ? feedGet('/api/v1/items', { query: q }) : undefined;
    };
    // The mode=all listing before the views under mode=all.
    const firstAll = specs.some((spec) => Object.keys(baseQuery(spec)).length) ? await base({ mode: 'all' }) : undefined;
    const views: ViewsRead['views'] = [];
    for (const v of await Promise.all(specs.map(async (spec) => ({ spec, label: viewLabel(spec), res: await ask(spec) }))))
      if (v.res) views.push({ spec: v.spec, label: v.label, res: v.res });
    // One plain listing (of each kind) before the views; one more after them only when a view lacks a row (below), so a
    // conformant run pays one request for it.
    const bases = [first, ...(firstAll ? [firstAll] : [])];
    // The plain listing each view is judged against (baseQuery): the mode=all one for a view under mode=all.
    const basesOf = (spec: ItemsView): HttpResponse[] => {
      const b = 'mode' in baseQuery(spec) ? firstAll : first;
      return b ? [b] : [];
    };
    const out: ViewsRead = { bases, views };
    // Under mode=all only the rows the selected listing does not show are the view's to judge: a selected row that a
    // mode=all listing lacks is mode=all's finding (feed-run-items-all-mode-pages-complete), not the category's.
    const selected = new Set(itemRows(first).map((r) => String(field(r, p.id!))));
    for (const v of out.views) {
      const bs = basesOf(v.spec);
      const lacks = bs.length ? judgeView(bs, v.res, v.spec) : undefined;
      const mine = (id: string) => !(v.spec.kind === 'category' && v.spec.all && selected.has(id));
      v.lacks = lacks && { expected: lacks.expected.filter(mine), missing: lacks.missing.filter(mine) };
    }
    await readLackingAgain(out.views, ask, base, basesOf, bases);
    return out;
  });
}

/**
 * A view that lacks rows is read once more (at another new URL), then its plain listing once more: only the rows it
 * lacks both times, with one image in both plain listings (nothing about them changed in between), are named (a row
 * taken out of the selection and put back at once is missed by one read only). The plain listings read are added to
 * `bases`.
 */
async function readLackingAgain(
  views: ViewsRead['views'],
  ask: (spec: ItemsView) => Promise<HttpResponse> | undefined,
  base: (extra?: Record<string, string>) => Promise<HttpResponse> | undefined,
  basesOf: (spec: ItemsView) => HttpResponse[],
  bases: HttpResponse[],
): Promise<void> {
  const lacking = views.filter((v) => v.lacks?.missing.length);
  if (!lacking.length) return;
  const again = await Promise.all(lacking.map((v) => ask(v.spec)));
  const seconds = new Map<string, HttpResponse | undefined>();
  for (const v of lacking) {
    const k = JSON.stringify(baseQuery(v.spec));
    if (!seconds.has(k)) seconds.set(k, await base(baseQuery(v.spec)));
  }
  lacking.forEach((v, i) => {
    const res = again[i];
    const second = seconds.get(JSON.stringify(baseQuery(v.spec)));
    if (!res || !second) return (v.lacks = undefined);
    v.again = res;
    const later = judgeView([...basesOf(v.spec), second], res, v.spec);
    const still = new Set(later?.missing ?? []);
    v.lacks = { expected: v.lacks!.expected, missing: v.lacks!.missing.filter((id) => still.has(id)) };
  });
  for (const second of seconds.values()) if (second) bases.push(second);
}

/** A URL's path and its query parameters in one order: two requests of one query compare equal. */
function sortedQuery(url: string): string {
  const u = new URL(url);
  const q = [...u.searchParams].sort(([a, x], [b, y]) => (a === b ? x.localeCompare(y) : a.localeCompare(b)));
  return `${operationPath('feed', u.href) ?? u.pathname}?${new URLSearchParams(q)}`;
}

describe.sequential('each view of the listing, read late between two plain listings', () => {
  for (const [kind, requirement, what] of [
    ['category', 'feed-items-category-selects', 'a category=X listing holds each row of category X'],
    ['published', 'feed-items-by-published', 'a by=published listing holds each row published within its window'],
  ] as const)
    check(
      {
        id: `feed-run-items-${kind}-view-complete`,
        title: `late in the run, ${what} that a plain listing read just before it shows, within its reach, and again when asked once more (at URLs not asked before, so no cache answers)`,
        requirements: [requirement],
      },
      async (t) => {
        const read = await viewsRead();
        t.cite(...read.bases);
        if (read.skipped) return t.notApplicable(read.skipped);
        const mine = read.views.filter((v) => v.spec.kind === kind);
        if (mine.length === 0)
          return t.notApplicable(kind === 'category' ? 'the plain listing showed no row with a category' : 'the run had asked every limit this view would use');
        let judged = 0;
        const bad: string[] = [];
        for (const v of mine) {
          t.cite(v.res, ...(v.again ? [v.again] : []));
          if (!v.lacks) continue;
          judged += v.lacks.expected.length;
          if (v.lacks.missing.length)
            bad.push(
              `${v.label} (GET ${sortedQuery(v.res.url)}${v.again ? `, and again as GET ${sortedQuery(v.again.url)}` : ''}) lacks ${v.lacks.missing.slice(0, 3).join(', ')}${v.lacks.missing.length > 3 ? ` and ${v.lacks.missing.length - 3} more` : ''}`,
            );
        }
        if (judged === 0)
          return t.notApplicable(
            `no row of the plain listings was inside the reach of ${mine.map((v) => v.label).join(', ')} (or a listing answered other than 200, or from a cache)`,
          );
        t.observe('rows expected', `${judged} in ${mine.map((v) => v.label).join(', ')}`);
        if (bad.length)
          t.violation(
            `${bad.join('; ')}: rows that plain listings (selected, or mode=all for a view under mode=all; by=timeline, 7d) read before and after it show, unchanged, inside its window and newer than its last row`,
          );
      },
    );
});

describe.sequential('every request the run sent without a credential', () => {
  check(
    {
      id: 'feed-every-request-anonymous',
      title: 'no request of the run sent without a credential answered 401 or carried WWW-Authenticate (a past report, a deep page, a search: every place)',
      requirements: ['feed-anonymous-access'],
    },
    async (t) => {
      const plain = feedExchanges().filter((x) => !Object.keys(x.requestHeaders ?? {}).some((h) => h.toLowerCase() === 'authorization'));
      const bad = plain.filter((x) => x.status === 401 || x.responseHeaders?.['www-authenticate'] !== undefined);
      violations(t, bad, plain.length, 'requests without a credential were challenged for one', (x) => `${x.method} ${x.url} answered ${x.status}`);
    },
  );
});

describe.sequential('every response the run saw', () => {
  // The late look's requests (revalidations at the end of the run, below) come before the rules read every response.
  beforeAll(() =>
    lateLook().then(
      () => undefined,
      () => undefined,
    ),
  );
  check(
    {
      id: 'feed-retry-after-on-429-503',
      title: 'every 429 and 503 of the run carried Retry-After in integer seconds, at least 1',
      requirements: ['feed-retry-after'],
    },
    async (t) => {
      const seen = feedExchanges().filter((x) => x.status === 429 || x.status === 503);
      if (seen.length === 0) return t.notApplicable('the target sent no 429 or 503 during this run');
      t.observe('429/503 responses seen', String(seen.length));
      for (const x of seen) {
        const ra = x.responseHeaders?.['retry-after'];
        if (ra === undefined || !/^[1-9]\d*$/.test(ra.trim()))
          t.violation(`${x.method} ${x.url} answered ${x.status} with Retry-After ${JSON.stringify(ra ?? '(none)')}`);
      }
    },
  );

  check(
    {
      id: 'feed-every-error-is-problem',
      title: 'every 4xx and 5xx of the run was application/problem+json (JSON: UTF-8, if a charset is named)',
      requirements: ['feed-problem-json'],
    },
    async (t) => {
      const errors = errorExchanges();
      if (errors.length === 0) return t.notApplicable('the run saw no error response');
      t.observe('error responses seen', String(errors.length));
      const bad = errors.filter((x) => mediaType(x) !== 'application/problem+json' || notUtf8(x));
      violations(
        t,
        bad,
        errors.length,
        'error responses were not problem+json (or declared a charset other than UTF-8)',
        (x) => `${x.method} ${x.url} answered ${x.status} as "${x.responseHeaders?.['content-type'] || '(no content type)'}"`,
      );
    },
  );

  check(
    {
      id: 'feed-every-error-has-request-id',
      title: "every 4xx and 5xx of the run (HEAD too: its headers are the GET one's) carried X-Request-Id, one identifier",
      requirements: ['feed-problem-request-id'],
    },
    async (t) => {
      const errors = feedExchanges().filter((x) => x.status! >= 400 && !edgeRefusal(x));
      if (errors.length === 0) return t.notApplicable('the run saw no error response');
      t.observe('error responses seen', String(errors.length));
      // "the header X-Request-Id (support correlation identifier)": one value, not a list of two (a header given twice).
      const bad = errors.filter((x) => !x.responseHeaders?.['x-request-id'] || x.responseHeaders['x-request-id'].includes(','));
      violations(
        t,
        bad,
        errors.length,
        'error responses lacked X-Request-Id or gave it as a list',
        (x) => `${x.method} ${x.url} (${x.status}): ${JSON.stringify(x.responseHeaders?.['x-request-id'] ?? '(none)')}`,
      );
    },
  );
});

describe.sequential('every 405 the run saw', () => {
  check(
    {
      id: 'feed-every-405-allows-get',
      title:
        'every 405 of the run carried Allow, naming GET and no method that sends a body (RFC 9110 15.5.6: the methods the resource supports; every operation is a GET, with no request body)',
      requirements: ['feed-get-only'],
    },
    async (t) => {
      const seen = feedExchanges().filter((x) => x.status === 405);
      if (seen.length === 0) return t.notApplicable('the run saw no 405');
      t.observe('405 responses seen', String(seen.length));
      // HEAD and OPTIONS go with a GET resource (a stack answers them by itself); POST, PUT, PATCH and DELETE do not.
      const bad = seen.filter((x) => {
        const allowed = (x.responseHeaders?.['allow'] ?? '').split(',').map((m) => m.trim().toUpperCase());
        return !allowed.includes('GET') || allowed.some((m) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(m));
      });
      violations(
        t,
        bad,
        seen.length,
        '405 responses did not name GET in Allow, or named a method the feed has no operation for',
        (x) => `${x.method} ${x.url}: Allow ${JSON.stringify(x.responseHeaders?.['allow'] ?? '(none)')}`,
      );
    },
  );
});

// The per-operation checks read one 200 each; this reads every 200 of the run (continuation pages, every parameter
// value, every story and date the run asked for).
describe.sequential('every 200 the run saw', () => {
  check(
    {
      id: 'feed-every-200-etag-cache-control',
      title: 'every 200 of the run, continuation pages and every parameter value included, carried ETag and Cache-Control',
      requirements: ['feed-200-etag-cache-control'],
    },
    async (t) => {
      // The documented operations: /api/v1/... under the base URL, whatever path prefix the feed is served under.
      const ok = feedExchanges().filter((x) => x.status === 200 && x.method === 'GET' && operationPath('feed', x.url)?.startsWith('/api/v1/'));
      if (ok.length === 0) return t.notApplicable('the run saw no 200 from an operation');
      t.observe('200 responses seen', String(ok.length));
      const bad = ok.filter((x) => !x.responseHeaders?.['etag'] || !x.responseHeaders?.['cache-control']);
      const has = (x: Exchange, h: string) => (x.responseHeaders?.[h] ? 'present' : 'absent');
      violations(
        t,
        bad,
        ok.length,
        '200 responses lacked ETag or Cache-Control',
        (x) => `${x.method} ${x.url} (ETag ${has(x, 'etag')}, Cache-Control ${has(x, 'cache-control')})`,
      );
    },
  );
});

/** The rel values of a Link header (RFC 8288): each link's rel parameter, split into its space-separated types. */
const linkRels = (link: string | undefined): string[] =>
  [...(link ?? '').matchAll(/;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/gi)].flatMap((m) => (m[1] ?? m[2] ?? '').toLowerCase().split(/\s+/));

/** The type values of a Link header (RFC 8288): each link's media type hint, lower-cased, its parameters cut. */
const linkTypes = (link: string | undefined): string[] =>
  [...(link ?? '').matchAll(/;\s*type\s*=\s*(?:"([^"]*)"|([^;,\s]+))/gi)].map((m) => (m[1] ?? m[2] ?? '').toLowerCase().split(';')[0]!.trim());

describe.sequential('no push channel, on any response of the run', () => {
  check(
    {
      id: 'feed-run-no-hub-link',
      title:
        'no response of the run advertises a push channel in its Link header: a hub (rel="hub", WebSub: webhooks) or an event stream (type="text/event-stream": SSE)',
      requirements: ['feed-no-push-channel'],
    },
    async (t) => {
      const all = feedExchanges().filter((x) => x.status !== undefined);
      if (all.length === 0) return t.notApplicable('the run saw no response from the feed');
      t.observe('responses seen', String(all.length));
      // WebSub (W3C) delivers updates by webhook to subscribers of the hub a resource names with rel="hub".
      // A link whose target is declared an event stream (RFC 8288's type parameter) is an SSE channel offered.
      const bad = all.filter(
        (x) => linkRels(x.responseHeaders?.['link']).includes('hub') || linkTypes(x.responseHeaders?.['link']).includes('text/event-stream'),
      );
      violations(
        t,
        bad,
        all.length,
        'responses named a push hub or an event stream',
        (x) => `${x.method} ${x.url} (${x.status}): Link ${x.responseHeaders?.['link']}`,
      );
    },
  );
});

// RFC 9457, which application/problem+json names: the members the document leaves out ("Problem body fields … not
// shown") still have the types the media type gives them, wherever a deployment sends them.
describe.sequential('every problem body the run saw', () => {
  check(
    {
      id: 'feed-every-problem-members-typed',
      title: 'every problem body is a JSON object whose status, when present, is the response status, and whose type, title and detail are strings',
      requirements: ['feed-problem-json'],
    },
    async (t) => {
      const problems = errorExchanges().filter(
        // A body read whole: not cut by the recorder, not broken off by the connection (the exchange's error).
        (x) => !x.truncated && !x.error && x.responseBody !== undefined && mediaType(x) === 'application/problem+json',
      );
      // An error that is not problem+json at all is feed-every-error-is-problem's finding.
      if (problems.length === 0) return t.notApplicable('the run saw no problem+json response');
      t.observe('problem bodies read', String(problems.length));
      const wrong: string[] = [];
      for (const x of problems) {
        let body: unknown;
        try {
          body = JSON.parse(x.responseBody ?? '');
        } catch {
          body = undefined;
        }
        const where = `${x.method} ${x.url} (${x.status})`;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          // A body recorded as it came off the wire (the raw-socket probes: chunked or compressed bytes) is not read here.
          const framed = x.responseHeaders?.['transfer-encoding'] !== undefined || x.responseHeaders?.['content-encoding'] !== undefined;
          if (!framed) wrong.push(`${where}: the body is not a JSON object`);
          continue;
        }
        const p = body as Record<string, unknown>;
        if ('status' in p && p.status !== x.status) wrong.push(`${where}: status member ${JSON.stringify(p.status)}`);
        for (const m of ['type', 'title', 'detail', 'instance'])
          if (m in p && typeof p[m] !== 'string') wrong.push(`${where}: ${m} member ${JSON.stringify(p[m])}, not a string`);
          // type and instance are URI references (RFC 9457 3.1.1, 3.1.5): no character RFC 3986 leaves out of one.
          else if ((m === 'type' || m === 'instance') && m in p && !uriReference(p[m] as string))
            wrong.push(`${where}: ${m} member ${JSON.stringify(p[m])}, not a URI reference`);
      }
      violations(t, wrong, problems.length, "problem bodies break RFC 9457's member types", (w) => w);
    },
  );
});

// ---------------------------------------------------------------- every place the run reached
// The rules of every response, read on every exchange of the run: continuation pages, search (q) pages, each
// parameter value, HEAD, each 304, not only the one request per operation the per-operation checks make.

/** The run's answers from a documented operation (/api/v1/...), GET or HEAD. */
const operationExchanges = () =>
  feedExchanges().filter((x) => (x.method === 'GET' || x.method === 'HEAD') && operationPath('feed', x.url)?.startsWith('/api/v1/') && !x.error);
const where = (x: Exchange) => `${x.method} ${operationPath('feed', x.url) ?? x.url}${new URL(x.url).search} (${x.status})`;
/**
 * A body recorded as it came off the wire (the raw-socket reads, on a connection of their own: `Connection: close`),
 * chunked or compressed: not the representation, so not judged here.
 */
const framedOnWire = (x: Exchange) =>
  x.requestHeaders['connection'] === 'close' &&
  (x.responseHeaders?.['transfer-encoding'] !== undefined || x.responseHeaders?.['content-encoding'] !== undefined);
const parsed = (x: Exchange): unknown => {
  try {
    return JSON.parse(x.responseBody ?? '');
  } catch {
    return undefined;
  }
};

describe.sequential('every 200 and 304 the run saw', () => {
  check(
    {
      id: 'feed-every-response-s-maxage',
      title: 'every 200 and 304 of the run (continuation and search pages, each parameter value, HEAD) gave s-maxage in its Cache-Control',
      requirements: ['feed-cache-control-s-maxage'],
    },
    async (t) => {
      // A missing Cache-Control is the ETag and Cache-Control checks' finding; here, the s-maxage of those present.
      const seen = operationExchanges().filter((x) => (x.status === 200 || x.status === 304) && x.responseHeaders?.['cache-control']);
      if (seen.length === 0) return t.notApplicable('the run saw no 200 or 304 with Cache-Control from an operation');
      t.observe('200 and 304 responses seen', String(seen.length));
      const bad = seen.filter((x) => sMaxAge(x.responseHeaders!['cache-control']) === undefined);
      violations(t, bad, seen.length, 'responses gave no s-maxage in seconds', (x) => `${where(x)}: Cache-Control "${x.responseHeaders!['cache-control']}"`);
    },
  );

  check(
    {
      id: 'feed-every-304-etag-cache-control',
      title: 'every 304 of the run (GET and HEAD, every page and parameter value) carried ETag (one entity-tag) and Cache-Control',
      requirements: ['feed-304-headers-empty-body'],
    },
    async (t) => {
      const seen = operationExchanges().filter((x) => x.status === 304);
      if (seen.length === 0) return t.notApplicable('the run saw no 304');
      t.observe('304 responses seen', String(seen.length));
      // The ETag a 304 carries is the validator a 200 would have sent (RFC 9110 15.4.5): one entity-tag, not an echo of a list.
      const tagged = (x: Exchange) => ENTITY_TAG.test(x.responseHeaders?.['etag'] ?? '');
      const bad = seen.filter((x) => !tagged(x) || !x.responseHeaders?.['cache-control']);
      const has = (x: Exchange, h: string) =>
        x.responseHeaders?.[h] ? (h === 'etag' && !tagged(x) ? `${JSON.stringify(x.responseHeaders[h])}, not one entity-tag` : 'present') : 'absent';
      violations(
        t,
        bad,
        seen.length,
        '304 responses lacked ETag or Cache-Control',
        (x) => `${where(x)} (ETag ${has(x, 'etag')}, Cache-Control ${has(x, 'cache-control')})`,
      );
    },
  );

  check(
    {
      id: 'feed-every-head-etag-cache-control',
      title: 'every HEAD answered 200 carried ETag and Cache-Control',
      requirements: ['feed-200-etag-cache-control'],
    },
    async (t) => {
      const seen = operationExchanges().filter((x) => x.method === 'HEAD' && x.status === 200);
      if (seen.length === 0) return t.notApplicable('the run saw no HEAD answered 200');
      t.observe('HEAD 200 responses seen', String(seen.length));
      const bad = seen.filter((x) => !x.responseHeaders?.['etag'] || !x.responseHeaders?.['cache-control']);
      violations(t, bad, seen.length, 'HEAD 200 responses lacked ETag or Cache-Control', where);
    },
  );

  check(
    {
      id: 'feed-every-200-json',
      title: 'every 200 body of the run (continuation and search pages, each parameter value, every id and date) was JSON (UTF-8, if a charset is named)',
      requirements: ['feed-success-json'],
    },
    async (t) => {
      // The media type of every 200 (a page past the recorder's bound too), the body parsed where it was read whole.
      const seen = operationExchanges().filter((x) => x.method === 'GET' && x.status === 200 && x.responseBody !== undefined);
      if (seen.length === 0) return t.notApplicable('the run saw no 200 body from an operation');
      t.observe('200 bodies read', String(seen.length));
      const whole = (x: Exchange) => !x.truncated && !framedOnWire(x);
      const bad = seen.filter((x) => !/^application\/([\w.-]+\+)?json$/.test(mediaType(x)) || notUtf8(x) || (whole(x) && parsed(x) === undefined));
      violations(
        t,
        bad,
        seen.length,
        '200 bodies were not JSON (or declared a charset other than UTF-8)',
        (x) => `${where(x)} as "${x.responseHeaders?.['content-type'] ?? ''}": ${JSON.stringify((x.responseBody ?? '').slice(0, 40))}`,
      );
    },
  );
});

/**
 * The item records of every 200 the run read: items pages, snapshot pages (an item with its summary is one of the
 * default fields: under `minimal` both summary and the link go), and a story's coverage timeline.
 */
function runItems(): { items: { x: Exchange; item: Record<string, unknown>; full: boolean }[]; pages: number } {
  const p = profile();
  const lists: [string, (x: Exchange, body: unknown) => unknown][] = [
    ['/api/v1/items', (_x, b) => field(b, p.items.list!)],
    ['/api/v1/selected/snapshot', (_x, b) => field(b, p.snapshot.list!)],
    ['/api/v1/stories/', (_x, b) => field(field(b, p.story.root!), p.story.timeline!)],
  ];
  const out: { x: Exchange; item: Record<string, unknown>; full: boolean }[] = [];
  let pages = 0;
  for (const x of operationExchanges().filter((e) => e.method === 'GET' && e.status === 200 && !e.truncated && !framedOnWire(e))) {
    const path = operationPath('feed', x.url)!;
    const at = lists.find(([prefix]) => (prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix));
    const list = at ? at[1](x, parsed(x)) : undefined;
    if (!at || !Array.isArray(list)) continue;
    pages++;
    const snapshot = at[0] === '/api/v1/selected/snapshot';
    for (const item of list)
      if (typeof item === 'object' && item !== null) out.push({ x, item: item as Record<string, unknown>, full: !snapshot || 'summary' in item });
  }
  return { items: out, pages };
}

/** A timeline entry's own id (a string or a number, not blank), or undefined. */
const reportId = (entry: unknown): string | number | undefined => {
  const id = field(entry, 'id');
  return (typeof id === 'string' && id.trim() !== '') || typeof id === 'number' ? id : undefined;
};

/** Every story 200 of the run read whole (a GET, not framed on the wire). */
const storyAnswers = () =>
  operationExchanges().filter(
    (x) => x.method === 'GET' && x.status === 200 && !x.truncated && !framedOnWire(x) && operationPath('feed', x.url)!.startsWith('/api/v1/stories/'),
  );

/**
 * Every story 200 of the run with two timeline entries or more, judged by `judge` (a break, described, or undefined):
 * not applicable when the run read none.
 */
function everyTimeline(t: CheckTools, judge: (timeline: unknown[], x: Exchange) => string | undefined, broken: string): void {
  const p = profile().story;
  let judged = 0;
  const bad: string[] = [];
  for (const x of storyAnswers()) {
    const timeline = field(field(parsed(x), p.root!), p.timeline!);
    if (!Array.isArray(timeline) || timeline.length < 2) continue;
    judged++;
    const b = judge(timeline, x);
    if (b) bad.push(`${where(x)}: ${b}`);
  }
  if (judged === 0) return t.notApplicable('the run read no story with two timeline entries or more');
  t.observe('stories read', String(judged));
  violations(t, bad, judged, broken, (b) => b);
}

describe.sequential('every story the run read', () => {
  check(
    {
      id: 'feed-every-story-timeline-reverse-chronological',
      title: 'every story 200 the run read (the one a 308 led to, a referenced one, one read again late) lists its coverage timeline newest first',
      requirements: ['feed-story-timeline-order'],
    },
    async (t) =>
      everyTimeline(
        t,
        (timeline) => {
          // Undated entries are feed-story-timeline-order's own check's finding; the order is judged between dated ones.
          const times = timeline.map((e) => Date.parse(String(field(e, profile().story.timelineTime!)))).filter((n) => !Number.isNaN(n));
          const at = times.findIndex((n, i) => i > 0 && n > times[i - 1]!);
          return at > 0 ? `an entry of ${new Date(times[at]!).toISOString()} after one of ${new Date(times[at - 1]!).toISOString()}` : undefined;
        },
        'story timelines were not newest first',
      ),
  );

  check(
    {
      id: 'feed-every-story-timeline-entry-once',
      title: 'every story 200 the run read lists each report of its coverage timeline once: no entry with an id repeated whole (the same report shown twice)',
      requirements: ['feed-story-timeline-each-report-once'],
    },
    async (t) =>
      everyTimeline(
        t,
        (timeline) => {
          // An entry that names its report (an id: the entries' fields are not shown, the engine's carry one) and
          // repeats another whole, id and every field, is one report listed twice; entries without an id are not
          // judged (two reports of one source may look alike where entries are coarse).
          const whole = timeline.map((e) => (reportId(e) === undefined ? undefined : JSON.stringify(e)));
          const twice = whole.findIndex((e, i) => e !== undefined && whole.indexOf(e) !== i);
          return twice >= 0 ? `entry ${twice} repeats entry ${whole.indexOf(whole[twice])} whole (${whole[twice]!.slice(0, 120)})` : undefined;
        },
        'story timelines listed a report twice',
      ),
  );
});

/**
 * Every story 200 of the run names the story it was asked for, not a merged one: an answer whose publicId is an id the
 * run saw answered 308 (merged into another), to a request for an id the service itself gave (found verbatim in an
 * answer of the run: a link, a reference, a Location) that was not itself redirected.
 */
function storiesNamedOtherwise(): { judged: number; bad: string[] } {
  const p = profile().story;
  const given = operationExchanges()
    .map((x) => `${x.responseBody ?? ''} ${x.responseHeaders?.location ?? ''}`)
    .join('\n');
  const idOf = (x: Exchange) => {
    try {
      return decodeURIComponent(operationPath('feed', x.url)!.slice('/api/v1/stories/'.length));
    } catch {
      return undefined;
    }
  };
  const stories = operationExchanges().filter((x) => x.method === 'GET' && operationPath('feed', x.url)!.startsWith('/api/v1/stories/'));
  const answers = stories
    .filter((x) => x.status === 200 && !x.truncated && !framedOnWire(x))
    .map((x) => ({ x, id: idOf(x), named: field(field(parsed(x), p.root!), p.publicId!) }));
  // A story served under another id is read as a merged id answered with its survivor inline: the 308 rule's finding
  // (mergedStory). What is judged here is an answer naming a story the run saw answered 308 (merged, so no longer
  // served under its own id) while the id asked was not: the answer names a story that is not the one served.
  const redirected = new Set(stories.filter((x) => x.status === 308).map(idOf));
  const bad: string[] = [];
  let judged = 0;
  for (const { x, id, named } of answers) {
    if (!id || typeof named !== 'string' || !(given.includes(JSON.stringify(id)) || given.includes(`/${encodeURIComponent(id)}`))) continue;
    if (redirected.has(id)) continue;
    judged++;
    if (named !== id && redirected.has(named)) bad.push(`${where(x)}: publicId ${JSON.stringify(named)}, a story the run saw answered 308`);
  }
  return { judged, bad };
}

describe.sequential('every story the run read, by its id', () => {
  check(
    {
      id: 'feed-every-story-names-itself',
      title:
        'every story 200 the run read (the one a 308 led to, a referenced one, one read again late) is identified by the publicId it was asked for, not by that of a story merged into it',
      requirements: ['feed-story-body'],
    },
    async (t) => {
      const { judged, bad } = storiesNamedOtherwise();
      if (judged === 0) return t.notApplicable('the run read no story by an id the service gave');
      t.observe('stories read', String(judged));
      violations(t, bad, judged, 'story answers named another story than the one asked for', (b) => b);
    },
  );
});

/**
 * No item reads null as its summary in an items page between two answers giving it one same string (each answer
 * received before the next was asked): the row had that summary before and after, so the null was not the row's
 * (null is what a deployment sends for an item that has none). The null is read on items pages only, as they are
 * served now (a page the recorder cut keeps its rows' short fields, a null among them); the strings on any answer read
 * whole that carries the row with its summary (items, default snapshot and changes pages). An answer from a cache, or
 * dated well before it was read, is an older copy: not read.
 */
async function summaryKept(t: CheckTools): Promise<void> {
  const ip = profile().items;
  const reads = new Map<string, { from: number; to: number; summary: unknown; x: Exchange }[]>();
  const note = (id: unknown, r: Seen, summary: unknown) => {
    if (typeof id === 'string') reads.set(id, [...(reads.get(id) ?? []), { from: r.sent, to: r.received, summary, x: r.x }]);
  };
  for (const r of runSeen()) {
    if (r.status !== 200 || r.cached || !ITEM_PATHS.has(r.path)) continue;
    if (datedWellBefore(r.x.responseHeaders?.['date'], r.sent)) continue;
    if (r.body !== undefined) {
      for (const item of itemsOf(r, itemPaths()))
        if (typeof item === 'object' && item !== null && 'summary' in item) {
          const summary = field(item, 'summary');
          // A null counts on an items page only; a string anywhere.
          if (typeof summary === 'string' || (summary === null && r.path === '/api/v1/items')) note(field(item, ip.id!), r, summary);
        }
    } else if (r.path === '/api/v1/items')
      for (const row of r.rows?.[ip.list!] ?? []) if ('summary' in row && row.summary === null) note(field(row, ip.id!), r, null);
  }
  if (reads.size === 0) return t.notApplicable('the run read no item with a summary field');
  const bad: string[] = [];
  for (const [id, rs] of reads) {
    for (const r of rs) {
      if (r.summary !== null) continue;
      const before = rs.filter((b) => typeof b.summary === 'string' && b.to < r.from);
      const after = rs.filter((a) => typeof a.summary === 'string' && a.from > r.to);
      const same = before.find((b) => after.some((a) => a.summary === b.summary));
      if (same) {
        bad.push(`${id}: null in ${where(r.x)}, read between two answers giving it ${JSON.stringify(String(same.summary).slice(0, 40))}`);
        break;
      }
    }
  }
  t.observe('items read', String(reads.size));
  violations(t, bad, reads.size, 'items read null as their summary on an items page between two answers giving one same summary', (b) => b);
}

describe.sequential('every item the run saw', () => {
  check(
    {
      id: 'feed-every-item-original-link',
      title:
        "every item of every page the run read (continuation, search, each parameter value, a story timeline) links its original article, not the service's own page",
      requirements: ['feed-item-original-link'],
    },
    async (t) => {
      const { items, pages } = runItems();
      const full = items.filter((i) => i.full);
      if (full.length === 0) return t.notApplicable('the run read no item outside a fields=minimal snapshot page');
      t.observe('items read', `${full.length} on ${pages} pages`);
      // The service's own page about the item (links.aihot) is not the original article.
      const bad = full.filter(({ item }) => {
        const link = field(item, 'links.original');
        return typeof link !== 'string' || !URL.canParse(link) || link === field(item, 'links.aihot');
      });
      violations(
        t,
        bad,
        full.length,
        "items had no original-article URL in links.original (or the service's own page, links.aihot, in its place)",
        ({ x, item }) => `${where(x)}: item ${String(item[profile().items.id!] ?? '?')}`,
      );
    },
  );

  check(
    {
      id: 'feed-run-item-summary-kept',
      title:
        "no item's summary reads null on an items page between two answers that show it as one same string (items, snapshot and changes pages): a row that has a summary keeps it",
      requirements: ['feed-item-summary-string'],
    },
    summaryKept,
  );

  check(
    {
      id: 'feed-every-item-timestamps',
      title: 'every item of every items page the run read (continuation, search, each parameter value) carried publishedAt and discoveredAt',
      requirements: ['feed-item-timestamps'],
    },
    async (t) => {
      const items = runItems().items.filter(({ x }) => operationPath('feed', x.url) === '/api/v1/items');
      if (items.length === 0) return t.notApplicable('the run read no item from /api/v1/items');
      t.observe('items read', String(items.length));
      const bad = items.filter(({ item }) => !('publishedAt' in item) || !('discoveredAt' in item) || instant(item.discoveredAt) === undefined);
      violations(
        t,
        bad,
        items.length,
        'items lacked publishedAt or discoveredAt',
        ({ x, item }) => `${where(x)}: item ${String(item[profile().items.id!] ?? '?')}`,
      );
    },
  );
});

/**
 * Every first items page of the run under by=timeline or by=published (a search or category page, any mode, window or
 * limit): its items in the order of their time under that rule, one direction on every page (ties and items without
 * the rule's time are not placed). The order checks read each window's pages, continuation pages included; these read
 * every other first page the run's checks asked for.
 */
function everyPageOrdered(t: CheckTools, by: 'timeline' | 'published'): void {
  const pages = runItems().items.reduce((m, { x, item }) => {
    const u = new URL(x.url);
    // The rule the request names, or for a page asked without `by` the rule its query echo (the engine's
    // query.by, real-deployments.md) says was applied: which rule a default is, is feed-items-defaults' to judge. A
    // continuation page follows its cursor's query (feed-items-cursor-bound judges the binding): not read here.
    if (operationPath('feed', x.url) !== '/api/v1/items' || u.searchParams.has('cursor')) return m;
    if ((u.searchParams.get('by') ?? field(parsed(x), 'query.by')) !== by) return m;
    return m.set(x, [...(m.get(x) ?? []), item]);
  }, new Map<Exchange, Record<string, unknown>[]>());
  if (pages.size === 0) return t.notApplicable(`the run read no items page under by=${by}`);
  const exchanges = [...pages.keys()];
  const { pairs, direction, broken } = pagesOrder([...pages.values()], by);
  if (broken) {
    const { a, b } = broken;
    return t.violation(
      `${where(exchanges[broken.page]!)}: ${a.id} (${new Date(a.at).toISOString()}) then ${b.id} (${new Date(b.at).toISOString()}): ${broken.direction}, where ${where(exchanges[broken.firstPage]!)} listed its items ${direction}: not ordered by the ${by} time`,
    );
  }
  t.observe('items pages read', `${pages.size} (${pairs} neighbours with different ${by} times)`);
  if (direction) t.reading(`the order under by=${by}`, direction);
}

describe.sequential('every items page the run saw is in its order', () => {
  for (const by of ['timeline', 'published'] as const)
    check(
      {
        id: `feed-every-items-page-ordered-${by}`,
        title: `every first items page the run read under by=${by} (asked so, or so echoed; search, category, each mode and window) lists its items in the order of their ${by === 'timeline' ? 'timeline time' : 'publication time'}, in one direction`,
        requirements: [by === 'timeline' ? 'feed-items-by-timeline' : 'feed-items-by-published'],
      },
      async (t) => everyPageOrdered(t, by),
    );
});

describe.sequential('X-Request-Id identifies each response', () => {
  check(
    {
      id: 'feed-request-ids-distinct',
      title: 'the error responses of the run do not all carry one X-Request-Id: it correlates each response, so it differs between them',
      requirements: ['feed-problem-request-id'],
    },
    async (t) => {
      // The feed's answers only: a 429 or 503 is the retry rules' transient refusal, and a run that meets nothing
      // else met an outage (target unavailable), never a finding; a storm of them under one id says nothing here.
      const ids = errorExchanges()
        .filter((x) => x.status !== 429 && x.status !== 503)
        .map((x) => x.responseHeaders?.['x-request-id'])
        .filter((v): v is string => !!v);
      // A cache in front may replay one stored error with its id; three or more distinct requests all under one id is no correlation.
      if (ids.length < 3) return t.notApplicable(`the run saw ${ids.length} error response(s) other than 429/503 with X-Request-Id, fewer than 3`);
      const distinct = new Set(ids).size;
      t.observe('X-Request-Id values', `${distinct} distinct of ${ids.length}`);
      if (distinct === 1)
        t.violation(`all ${ids.length} error responses of the run carried the same X-Request-Id ${JSON.stringify(ids[0])}: it identifies no one request`);
    },
  );
});

// ---------------------------------------------------------------- between two exchanges of the run
// What the document promises between requests, read on every pair of the run's answers: the run made them while the
// feed changed (a live deployment, or the living reference), so a promise broken only for a while after a change
// shows here. A pair counts only in order: the later request sent after the earlier answer was in.

/** The run's answers from the feed's operations, oldest first. */
/** The documented path of a feed URL: one function, so that seenOf reads each exchange once for every check. */
const feedPathOf = (u: string) => operationPath('feed', u);
const runSeen = () => seenOf(runExchanges('feed'), feedPathOf);

/** One rule's outcome as a check's verdict: not applicable when nothing was compared. */
function judge(t: CheckTools, r: Judged, none: string, what: string): void {
  if (r.judged === 0) return t.notApplicable(none);
  t.observe('compared', String(r.judged));
  violations(t, r.bad, r.judged, what, (b) => b);
}

/** A URL revalidated late: its 200 now, and the answer to If-None-Match with the ETag the run first saw long before. */
interface LateRevalidation {
  ok: HttpResponse;
  notModified: HttpResponse;
  firstSeen: number;
}

/**
 * A merged id asked again late: its answer (and its answer to the ETag of its last 200), then the story its Location leads to, followed while that answers 308
 * (three hops at most); when a hop answered 308 (the story it pointed at has merged since), the id once more, so its
 * Location is seen after that merge. An id that no longer answers 308 is followed through the Location it had: a
 * story answering 200 after it shows the story endpoint still serves stories.
 */
async function askMergedAgain(
  path: string,
  lastLocation: string | undefined,
  lastEtag: string | undefined,
  extra: { star: boolean; survivor: boolean },
): Promise<HttpResponse[]> {
  const id = decodeURIComponent(path.slice('/api/v1/stories/'.length));
  // With the ETag of its last 200 too, as a client that held the story asks: 308 is the answer to that as well.
  const res = [await feedGet(storyPath(id)), ...(lastEtag ? [await feedGet(storyPath(id), { headers: { 'if-none-match': lastEtag } })] : [])];
  // With If-None-Match: * (any current representation), as a client that only wants to know the story exists asks
  // (the run's first merged id only: the request budget).
  if (extra.star) res.push(await feedGet(storyPath(id), { headers: { 'if-none-match': '*' } }));
  let loc = res[0]!.status === 308 ? res[0]!.header('location') : lastLocation;
  let from = res[0]!.url;
  let chained = false;
  for (let hop = 0; loc && hop < 3; hop++) {
    const next = await feedGet(new URL(loc, from));
    res.push(next);
    if (next.status !== 308) break;
    chained = true;
    [loc, from] = [next.header('location'), next.url];
  }
  if (chained && res[0]!.status === 308) res.push(await feedGet(new URL(res[0]!.url)));
  // With the ETag of the story it leads to, as a client that cached the answer it was led to asks: still 308.
  const led = res.at(-1)!;
  const ledEtag = led.status === 200 && led.url !== res[0]!.url ? led.header('etag') : undefined;
  if (ledEtag && ledEtag !== lastEtag) res.push(await feedGet(storyPath(id), { headers: { 'if-none-match': ledEtag } }));
  // The story it leads to, asked with the merged story's last ETag, as a client that follows the 308 with the
  // conditional headers it sent does: not that story's current ETag, so 200 (feed-run-no-304-to-replaced-etag).
  if (extra.survivor && ledEtag && lastEtag && !weakMatch(ledEtag, lastEtag)) {
    const survivor = await feedGet(new URL(led.url), { headers: { 'if-none-match': lastEtag } });
    res.push(survivor);
    // A 304 there, asked once more plainly: a survivor that has come to carry that very ETag answered it rightly.
    if (survivor.status === 304) res.push(await feedGet(new URL(led.url)));
  }
  return res;
}

/**
 * The URLs whose content moved, revalidated with ETags they had left behind (200 is due to each): the two that moved
 * last with the ETag they carried before their current one (a validator kept for a while after it was replaced),
 * and the one the run first saw longest ago with the first ETag it had (a validator kept for good).
 */
async function revalidateMoved(seen: Seen[]): Promise<HttpResponse[]> {
  const res: HttpResponse[] = [];
  const moved = movedUrls(seen);
  const oldest = [...moved].sort((a, b) => a.first - b.first)[0];
  let asked = 0;
  for (const u of [...moved.slice(0, 4), ...(oldest ? [oldest] : [])]) {
    const isOldest = u === oldest;
    if (!isOldest && asked === 2) continue;
    const now = await feedGet(new URL(u.url));
    res.push(now);
    const current = now.header('etag');
    if (now.status !== 200 || !current) continue;
    const previous = isOldest ? undefined : u.etags.filter((e) => !weakMatch(e, current)).pop();
    const first = isOldest && !weakMatch(u.etags[0]!, current) ? u.etags[0] : undefined;
    for (const tag of [previous, first]) if (tag) res.push(await feedGet(new URL(u.url), { headers: { 'if-none-match': tag } }));
    if (previous) asked++;
  }
  return res;
}

/** The User-Agent of the second client the late look plays: the suite's own, marked. */
const SECOND_CLIENT = `${USER_AGENT} (second client)`;

/**
 * The stories the run read first (three at most) whose every answer was a 200, asked again as another client would (a
 * User-Agent of its own), as far as the remote budget leaves room: a story merged since answers 308 to anyone. When it
 * does, the story is asked once more as the run's own client, which the 308 binds as well
 * (feed-run-merged-story-stays-merged): a deployment that keeps serving a merged story to the clients that read it
 * before the merge shows it there.
 */
async function askAsAnotherClient(seen: Seen[]): Promise<{ res: HttpResponse[]; left?: string }> {
  const stories = seen.filter((s) => s.path.startsWith('/api/v1/stories/') && s.x.method === 'GET');
  const ids = [...new Set(stories.map((s) => s.path))].filter((p) => stories.filter((s) => s.path === p).every((s) => s.status === 200)).slice(0, 3);
  const res: HttpResponse[] = [];
  for (const [i, path] of ids.entries()) {
    if (!roomFor(2))
      return {
        res,
        left: leftForBudget(`${ids.length - i} of ${ids.length} stories were not asked as a second client`),
      };
    const other = await feedGet(path, { headers: { 'user-agent': SECOND_CLIENT } });
    res.push(other);
    if (other.status === 308) res.push(await feedGet(path));
  }
  return { res };
}

/**
 * One late look, the run's last requests, shared by the checks below: the latest daily report and then the archive's
 * first entry (?limit=1, as the document tells a client to), the hot topics, the run's first 24h listing under each
 * timestamp rule read again (rows that left the window since must be gone), the URLs whose content moved revalidated with ETags they
 * had left (revalidateMoved), the URL whose content stayed the same longest in the run, fetched and then revalidated
 * with its ETag (two more tries when that content moved), and last each story id the run saw merged asked again
 * (three at most, the first merged first; askMergedAgain). Later than every other feed check, so a promise kept for a
 * while only after a change (a redirect that expires, a validator honoured for a while after it was replaced, an
 * archive that lags its latest report, a window that stops moving) or one that wears off with an ETag's age (a 304's
 * freshness counting down) is seen broken.
 */
const lateLook = () =>
  once('run-wide-late-look', async () => {
    const seen = runSeen();
    const res: HttpResponse[] = [];
    res.push(await feedGet('/api/v1/dailies/latest'));
    res.push(await feedGet('/api/v1/dailies', { query: { limit: 1 } }));
    const hot = await feedGet('/api/v1/hot-topics');
    res.push(hot);
    // The run's first 24h listing under each timestamp rule (no cursor), read again: rows leave that window soonest.
    for (const by of ['timeline', 'published']) {
      const first = seen.find(
        (s) => s.path === '/api/v1/items' && s.status === 200 && paramOf(s, 'window') === '24h' && paramOf(s, 'by') === by && !paramOf(s, 'cursor'),
      );
      if (first) res.push(await feedGet(new URL(first.x.url)));
    }
    res.push(...(await revalidateMoved(seen)));
    let revalidated: LateRevalidation | undefined;
    for (const u of longestUnchanged(seen).slice(0, 3)) {
      const ok = await feedGet(new URL(u.url));
      res.push(ok);
      const etag = ok.header('etag');
      if (ok.status !== 200 || !etag || !weakMatch(etag, u.etag)) continue;
      const notModified = await feedGet(new URL(u.url), { headers: { 'if-none-match': etag } });
      res.push(notModified);
      if (notModified.status === 304) revalidated = { ok, notModified, firstSeen: u.first };
      break;
    }
    // Last, so each merged id is asked as long after its first 308 as the run allows.
    const merged = seen.filter((s) => s.status === 308 && s.path.startsWith('/api/v1/stories/'));
    // The extra questions (If-None-Match: *; the survivor asked with the merged story's ETag) go to one merged id
    // each, the first (the first with an ETag of its own): the request budget.
    const paths = [...new Set(merged.map((s) => s.path))].slice(0, 3);
    const lastEtagOf = (path: string) => seen.filter((s) => s.path === path && s.status === 200 && s.etag).at(-1)?.etag;
    const withEtag = paths.find((p) => lastEtagOf(p) !== undefined);
    for (const [i, path] of paths.entries()) {
      const location = merged.filter((s) => s.path === path).at(-1)?.x.responseHeaders?.['location'];
      res.push(...(await askMergedAgain(path, location, lastEtagOf(path), { star: i === 0, survivor: path === withEtag })));
    }
    // Last too: the run's first report by date, read again as late as the run allows (a report rendered anew on a
    // timer differs only from a read seconds later; feed-run-daily-report-unchanged compares them).
    const byDate = seen.find((s) => s.status === 200 && isReportByDate(s.path));
    if (byDate) res.push(await feedGet(new URL(byDate.x.url)));
    // The questions a deployment answers rightly most of the time come after everything else, when the run's requests
    // leave room for them under the remote budget: the hot topics read twice more when their ranking moved since the
    // run's last read (an instance still serving the previous ranking beside one serving the new gives it back to one
    // of the three reads: feed-run-hot-topics-never-back), and stories asked as a second client (askAsAnotherClient).
    const lastHot = seen.filter((s) => s.path === '/api/v1/hot-topics' && s.status === 200 && s.etag).at(-1)?.etag;
    const hotEtag = hot.header('etag');
    const left: Partial<Record<'hot' | 'stories', string>> = {};
    if (hot.status === 200 && lastHot && hotEtag && !weakMatch(hotEtag, lastHot)) {
      if (roomFor(2)) for (let i = 0; i < 2; i++) res.push(await feedGet('/api/v1/hot-topics'));
      else left.hot = leftForBudget("the hot topics' moved ranking was not read twice more");
    }
    const asked = await askAsAnotherClient(seen);
    res.push(...asked.res);
    if (asked.left) left.stories = asked.left;
    return { res, revalidated, left };
  });

/**
 * The run's answers, with the whole body of each of `responses` where the record holds only its start (a listing of
 * a hundred rows is longer than an exchange records): the late look's re-reads are judged whole.
 */
function withWholeBodies(seen: Seen[], responses: HttpResponse[]): Seen[] {
  const out = [...seen];
  for (const r of responses) {
    const x = r.attempts.at(-1);
    const i = x ? out.findIndex((e) => e.x.startedAt === x.startedAt && e.x.url === x.url && e.x.method === x.method) : -1;
    const s = out[i];
    if (!s || s.body !== undefined || s.status !== 200 || s.x.method !== 'GET') continue;
    try {
      // A copy: the run's answers are shared by every check that reads them (seenOf), and read only.
      out[i] = { ...s, body: JSON.parse(r.body) as unknown };
    } catch {
      // not JSON: feed-every-200-json's finding
    }
  }
  return out;
}

/** A query parameter of an answer's request, with the document's default for window and by. */
const paramOf = (s: Seen, name: string) => new URL(s.x.url).searchParams.get(name) ?? { window: '7d', by: 'timeline' }[name];

describe.sequential('between a conditional GET of the run and its answer', () => {
  check(
    {
      id: 'feed-run-matching-etag-not-answered-200',
      title: 'no conditional GET of the run is answered 200 carrying an ETag its If-None-Match listed: the version the client has is answered 304',
      requirements: ['feed-conditional-304'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        matchingEtagAnsweredFull(runSeen()),
        'the run sent no conditional GET with an entity tag',
        'conditional GETs were answered 200 with the ETag they had sent',
      );
    },
  );
});

describe.sequential('between two exchanges of the run: validators', () => {
  check(
    {
      id: 'feed-run-same-etag-same-content',
      title: 'two 200s of one URL with matching ETags carry the same content (a per-request asOf aside): a changed resource gets a new ETag',
      requirements: ['feed-changed-resource-200'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(t, sameEtagSameContent(runSeen()), 'no URL answered 200 twice with matching ETags', 'pairs of 200s with matching ETags differ in content');
    },
  );

  check(
    {
      id: 'feed-run-same-content-same-etag',
      title: 'two 200s of one URL in a row with the same content carry matching ETags: the ETag stays while the content does',
      requirements: ['feed-etag-stable'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        sameContentSameEtag(runSeen()),
        'no URL answered 200 twice in a row with the same content',
        'pairs of 200s with the same content carry other ETags',
      );
    },
  );

  check(
    {
      id: 'feed-run-no-304-to-replaced-etag',
      title:
        "no 304 answers an ETag its URL no longer carries: after a 200 with another ETag, an older one (or a merged story's, sent to the story its 308 led to) gets 200",
      requirements: ['feed-changed-resource-200'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(t, noStaleNotModified(runSeen()), 'no 304 of the run followed a 200 of its URL', '304s answered an ETag their URL had already replaced');
    },
  );

  check(
    {
      id: 'feed-run-current-etag-not-answered-with-replaced',
      title:
        'no conditional GET naming the version its URL showed before and after it is answered 200 with a version that one had replaced (a replica or cache behind)',
      requirements: ['feed-conditional-304'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        replacedVersionForCurrent(runSeen()),
        'no conditional request of the run named the version its URL last showed, with an answer of that URL after it',
        'conditional requests naming the current version were answered 200 with a version it had replaced',
      );
    },
  );

  check(
    {
      id: 'feed-run-head-etag-current',
      title: 'no HEAD 200 carries an ETag its URL no longer carries: after a GET 200 with another ETag, a HEAD carries that newer one',
      requirements: ['feed-changed-resource-200'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        noStaleHead(runSeen()),
        'the target did not change during the run around a HEAD: no HEAD 200 came between two GET 200s of its URL with other ETags',
        'HEAD 200s carried an ETag their URL had already replaced',
      );
    },
  );
});

describe.sequential('between two exchanges of the run: item images', () => {
  check(
    {
      id: 'feed-run-item-title-not-older',
      title: "no items or snapshot page goes back to an item's earlier title once the run read its newer one, while listings after it give the newer",
      requirements: ['feed-changed-resource-200'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      const lists = { '/api/v1/items': profile().items.list!, '/api/v1/selected/snapshot': profile().snapshot.list! };
      judge(
        t,
        itemTitlesGoBack(runSeen(), { lists, id: profile().items.id!, title: 'title' }),
        'no item of the run was read with two titles (no edit seen)',
        'items listed again with a title they had left, while later listings gave the newer one',
      );
    },
  );
});

describe.sequential('between two exchanges of the run: a 304 and the 200s around it', () => {
  check(
    {
      id: 'feed-run-304-cache-control-as-200',
      title: 'every 304 of the run carries the Cache-Control the 200s of its URL with its ETag carried before and after it',
      requirements: ['feed-304-headers-empty-body'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        notModifiedCachedAsOk(runSeen()),
        'no 304 of the run came between two 200s of its URL with its ETag and the same Cache-Control',
        '304s carried another Cache-Control than the 200s of their URL with the same ETag',
      );
    },
  );
});

describe.sequential('between two exchanges of the run: freshness and the hot-topics ranking', () => {
  check(
    {
      id: 'feed-run-304-cache-control-late',
      title: 'a 304 to an ETag first served early in the run carries the Cache-Control of the 200 served with that ETag just before',
      requirements: ['feed-304-headers-empty-body'],
    },
    async (t) => {
      const { res, revalidated: r } = await lateLook();
      t.cite(...res);
      if (!r) return t.notApplicable('no URL of the run kept its content until the end and answered 304 to its ETag');
      const ok = r.ok.header('cache-control');
      const nm = r.notModified.header('cache-control');
      // A missing Cache-Control is feed-every-200-etag-cache-control's and feed-every-304-etag-cache-control's finding.
      if (!ok || !nm) return t.notApplicable('the late 200 or 304 carried no Cache-Control');
      t.observe('ETag age at the late revalidation', `${((Date.now() - r.firstSeen) / 1000).toFixed(1)} s since the run first saw it`);
      if (!sameDirectives(ok, nm))
        t.violation(
          `${r.ok.url}: a 304 to an ETag the run first saw ${((Date.now() - r.firstSeen) / 1000).toFixed(1)} s before carries Cache-Control "${nm}", the 200 just before "${ok}"`,
        );
    },
  );

  check(
    {
      id: 'feed-run-hot-topics-s-maxage-60',
      title:
        'every hot-topics 200 and 304 of the run gives s-maxage=60, however old its ranking, and no CDN-Cache-Control or Vary: * that gives shared caches another window',
      requirements: ['feed-hot-topics-shared-cache-60s'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        hotTopicsSMaxAge(runSeen()),
        'no hot-topics answer of the run gave s-maxage',
        'hot-topics answers gave shared caches another freshness window than 60 s',
      );
    },
  );

  check(
    {
      id: 'feed-run-hot-topics-ten',
      title: 'every hot-topics 200 of the run, before and after a refresh, has ten entries, ten topics',
      requirements: ['feed-hot-topics-ten'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        hotTopicsTen(runSeen(), profile().hotTopics.list!),
        'no hot-topics 200 of the run had a list',
        'hot-topics answers had another number of entries than ten, or one topic twice',
      );
    },
  );

  check(
    {
      id: 'feed-run-hot-topics-never-back',
      title: 'no hot-topics answer of the run goes back to a ranking an earlier answer had replaced',
      requirements: ['feed-hot-topics-latest'],
    },
    async (t) => {
      const late = await lateLook();
      t.cite(...late.res);
      if (late.left.hot) t.observe('left out', late.left.hot);
      judge(
        t,
        versionsNeverReturn(runSeen(), '/api/v1/hot-topics'),
        'no hot-topics answer of the run followed another',
        'hot-topics answers went back to a replaced ranking',
      );
    },
  );
});

describe.sequential('every hot-topics answer of the run ranks its entries', () => {
  check(
    {
      id: 'feed-run-hot-topic-ranks-one-to-n',
      title: 'every hot-topics 200 of the run, before and after a refresh, ranks its entries 1 to n, each rank once',
      requirements: ['feed-hot-topics-rank'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        hotTopicRanks(runSeen(), profile().hotTopics.list!),
        'no hot-topics 200 of the run had a list of integer ranks',
        'hot-topics answers gave two entries one rank, or skipped a rank',
      );
    },
  );
});

describe.sequential('every items page the run saw holds its limit and its filter', () => {
  for (const [id, path, list, max, requirement] of [
    ['feed-run-items-pages-within-limit', '/api/v1/items', () => profile().items.list!, 100, 'feed-items-limit-range'],
    ['feed-run-snapshot-pages-within-limit', '/api/v1/selected/snapshot', () => profile().snapshot.list!, 1000, 'feed-snapshot-limit-range'],
  ] as const)
    check(
      {
        id,
        title: `every ${path} first page of the run asked with limit (every query) held at most that many rows`,
        requirements: [requirement],
      },
      async (t) => {
        judge(
          t,
          pagesWithinLimit(runSeen(), { path, list: list(), max }),
          `no ${path} page of the run was asked with a limit`,
          'pages held more rows than their limit',
        );
      },
    );
  // Asked without limit, every first page holds at most the default, whatever another request asked just before (a
  // limit that sticks from one caller's request to the next's). Fewer is not judged: a short page is no finding.
  check(
    {
      id: 'feed-run-items-default-pages-within-50',
      title: 'every /api/v1/items first page of the run asked without limit (every query) held at most 50 rows, the default',
      requirements: ['feed-items-defaults'],
    },
    async (t) => {
      judge(
        t,
        pagesWithinLimit(runSeen(), { path: '/api/v1/items', list: profile().items.list!, max: 100, byDefault: 50 }),
        'no /api/v1/items first page of the run was asked without a limit',
        'pages asked without limit held more rows than the default',
      );
    },
  );

  check(
    {
      id: 'feed-run-items-mode-selected-rows',
      title: 'every row of an items page the run asked with mode=selected was of the selected set: none said it was not selected',
      requirements: ['feed-items-mode-selects'],
    },
    async (t) => {
      const p = profile().items;
      const r = filteredRowsHold(runSeen(), { list: p.list!, id: p.id!, next: p.nextCursor!, selected: p.selected });
      judge(t, r, 'no mode=selected items page of the run carried a selected field', 'rows of mode=selected lists were not selected');
    },
  );

  check(
    {
      id: 'feed-run-items-category-rows',
      title: "every row of a category=X items page of the run had category X, not another of the document's current values",
      requirements: ['feed-items-category-selects'],
    },
    async (t) => {
      const p = profile().items;
      const categories = (parameter(await loadOpenApi('feed'), 'listItems', 'category').schema as { examples?: string[] } | undefined)?.examples ?? [];
      const r = filteredRowsHold(runSeen(), { list: p.list!, id: p.id!, next: p.nextCursor!, category: p.category, categories });
      judge(t, r, 'no category items page of the run had rows with a category field', 'rows of category lists had another category');
    },
  );
});

describe.sequential('every items page the run saw holds what the listings around it show', () => {
  check(
    {
      id: 'feed-run-items-window-pages-complete',
      title:
        'every window=24h items page of the run held each row well inside the last 24 hours that listings of its query showed just before and just after it, within its reach',
      requirements: ['feed-items-window-selects'],
    },
    async (t) => {
      const p = profile().items;
      const seen = runSeen();
      const changed = changedIds(seen, { list: profile().changes.list!, itemId: profile().changes.itemId!, removedId: profile().changes.removedId! });
      const r = filteredPagesComplete(seen, { kind: 'window', list: p.list!, id: p.id!, hasMore: p.hasMore!, changed });
      judge(
        t,
        r,
        'no window=24h page of the run had listings of its query to compare with just before and after it',
        'window=24h pages lacked rows of the last 24 hours',
      );
    },
  );

  check(
    {
      id: 'feed-run-items-all-mode-pages-complete',
      title:
        'every mode=all items page of the run held each row that mode=selected listings of its query (or listings without mode) showed just before and just after it, inside its window and within its reach',
      requirements: ['feed-items-mode-selects'],
    },
    async (t) => {
      const p = profile().items;
      const seen = runSeen();
      // A row removed from the selection stays in mode=all: only a row the change feed lists as removed may have left
      // every listing (withdrawn) and come back in between.
      const c = profile().changes;
      const changed = changedIds(seen, { list: c.list!, itemId: c.itemId!, removedId: c.removedId!, removedOnly: true });
      const r = filteredPagesComplete(seen, { kind: 'mode', list: p.list!, id: p.id!, hasMore: p.hasMore!, changed });
      judge(
        t,
        r,
        'no mode=all items page of the run had mode=selected listings of its query to compare with just before and after it',
        'mode=all pages lacked selected rows',
      );
    },
  );
});

describe.sequential('between two exchanges of the run: the items window', () => {
  for (const by of ['timeline', 'published'] as const)
    check(
      {
        id: `feed-run-items-rows-in-window-${by}`,
        title: `every items listing of the run under by=${by} holds only rows of its window, judged by the target's own clock as its earlier answers dated it`,
        // Two rules meet here: the window's (which rows a 24h or 7d listing may hold) and the timestamp `by` names (a row's
        // time under it); a listing that holds a row outside breaks one of them, and which is not known from outside.
        requirements: ['feed-items-window-7d', 'feed-items-window-enum', by === 'timeline' ? 'feed-items-by-timeline' : 'feed-items-by-published'],
      },
      async (t) => {
        const late = (await lateLook()).res;
        t.cite(...late);
        const p = profile().items;
        judge(
          t,
          rowsInWindow(withWholeBodies(runSeen(), late), by, { list: p.list!, id: p.id! }),
          `no items listing under by=${by} followed an answer with a Date header`,
          'items listings held rows older than their window (the Date of an earlier answer minus the window)',
        );
      },
    );
});

describe.sequential('between two exchanges of the run: the archive and latest stay revalidated', () => {
  check(
    {
      id: 'feed-run-dailies-archive-latest-revalidated',
      title: 'every archive (any limit, ?limit=1 included) and latest answer of the run, 200 or 304, is neither immutable nor fresh for more than a day',
      requirements: ['feed-dailies-archive-latest-revalidated'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      const answers = feedExchanges().filter((x) => {
        const p = operationPath('feed', x.url)!.split('?')[0];
        return (p === '/api/v1/dailies' || p === '/api/v1/dailies/latest') && (x.status === 200 || x.status === 304) && x.responseHeaders?.['cache-control'];
      });
      if (answers.length === 0) return t.notApplicable('the run read no archive or latest answer with a Cache-Control');
      t.observe('answers read', String(answers.length));
      const bad = answers.flatMap((x) => staleForADay(x.responseHeaders!['cache-control']!).map((why) => `${where(x)}: ${why}`));
      if (bad.length)
        t.violation(`${bad.slice(0, 5).join('; ')}: the archive and latest change with each day's report, so a cache must ask again within a day`);
    },
  );
});

describe.sequential('between two answers of the change feed', () => {
  check(
    {
      id: 'feed-run-changes-cursor-moves',
      title:
        'every changes answer of the run that listed changes of more than one instant, or said more follow, handed out a cursor other than the one it was asked with (the next call starts after those changes)',
      requirements: ['feed-changes-mirror'],
    },
    async (t) => {
      const p = profile().changes;
      judge(
        t,
        changesCursorMoves(runSeen(), { list: p.list!, cursorParam: p.cursorParam!, nextCursor: p.nextCursor!, hasMore: p.hasMore! }),
        'no changes answer of the run listed a change',
        'changes answers listed changes and led the next call back to them',
      );
    },
  );
});

describe.sequential('between two exchanges of the run: stories and daily reports', () => {
  check(
    {
      id: 'feed-run-discovered-at-fixed',
      title: "an item's discoveredAt is the same instant wherever and whenever the run saw the item (items, snapshot and changes pages)",
      requirements: ['feed-item-discovered-at-fixed'],
    },
    async (t) => {
      const p = profile();
      const paths = { items: p.items.list!, snapshot: p.snapshot.list!, changes: p.changes.list!, changeItem: 'item' };
      judge(t, discoveredAtFixed(runSeen(), paths, p.items.id!), 'the run saw no item twice', 'items changed their discoveredAt');
    },
  );

  check(
    {
      id: 'feed-run-merged-story-stays-merged',
      title: 'a story id that answered 308 never answers 200 or 404 later in the run: a merge has no way back',
      requirements: ['feed-story-merged-308'],
    },
    async (t) => {
      const late = await lateLook();
      t.cite(...late.res);
      if (late.left.stories) t.observe('left out', late.left.stories);
      judge(t, mergedStaysMerged(runSeen()), 'no story id of the run answered 308 and was asked again', 'merged story ids answered other than 308 later');
    },
  );

  check(
    {
      id: 'feed-run-308-location-survives',
      title: "a 308's Location never points at a story the run had already seen merged: it points at the surviving story",
      requirements: ['feed-story-merged-308'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      // The document's surviving story is the one that still stands: once the story an id had merged into is merged in
      // turn, the id's Location names the new survivor (a Location at the merged story, which 308s on, is not it).
      const moved = movedLocations(runSeen());
      t.observe(
        'Location after the survivor merged in turn',
        moved.length ? moved.slice(0, 3).join('; ') : 'not seen (no survivor of a merged id merged in turn while the run asked)',
      );
      judge(t, locationSurvives(runSeen()), 'no story of the run answered 308 with a Location', '308s pointed at a story already merged');
    },
  );

  const dailyPaths = () => {
    const p = profile();
    return { root: p.daily.root!, date: p.daily.date!, list: p.dailies.list!, entryDate: p.dailies.date! };
  };
  check(
    {
      id: 'feed-run-daily-report-unchanged',
      title: 'every 200 of the run that held the report of one date held the same report (content, ETag, generatedAt)',
      requirements: ['feed-dailies-immutable'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(t, dailySame(runSeen(), dailyPaths()), 'the run read no daily report twice', 'daily reports changed between two answers');
    },
  );

  check(
    {
      id: 'feed-run-daily-head-never-older',
      title: 'once a daily report was seen published, no later archive (?limit=1 included) or latest report has an older newest date',
      requirements: ['feed-dailies-latest'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(
        t,
        dailyHeadNeverOlder(runSeen(), dailyPaths()),
        'no archive or latest report of the run followed another daily answer',
        'archive or latest answers went back to an older report',
      );
    },
  );
});

// ---------------------------------------------------------------- the changes backlog, paged
/** Pages the backlog walk asks for at most, beyond the number its page size needs. */
const BACKLOG_SPARE_PAGES = 2;

/** A changes page from `cursor`, with `limit`; undefined when the endpoint refused the limit (400). */
async function changesPage(cursor: string, limit: number, t: CheckTools, returned = false): Promise<{ res: HttpResponse; body: unknown } | undefined> {
  const p = profile().changes;
  const ask = (q: Record<string, string | number>) => feedGet('/api/v1/selected/changes', { query: { [p.cursorParam!]: cursor, ...q } });
  const res = await ask({ limit });
  t.cite(res);
  if (res.status === 400) return undefined;
  // Another refusal (409 snapshot_required, 404, 422): the same cursor asked without limit.
  if (res.status >= 401 && res.status < 500 && res.status !== 429) {
    const plain = await ask({});
    t.cite(plain);
    // The document shows no parameter of the changes endpoint: a deployment may refuse limit in any form. Served
    // without it, the cursor is valid and the backlog is not paged by limit here.
    if (plain.status === 200 && !fromCache(plain)) {
      t.observe('limit on the changes endpoint', `refused (${res.status}); the same cursor without limit answered 200`);
      return undefined;
    }
    // A cursor the endpoint's own page had returned seconds before, refused with and without limit: the procedure
    // ("incremental change feed") goes on with the cursor each page returns, and this one cannot.
    if (returned && plain.status >= 401 && plain.status < 500 && plain.status !== 429)
      throw new AssertionViolation(
        `GET /api/v1/selected/changes refused the cursor its page before had just returned (${res.status} with limit=${limit}, ${plain.status} without): a mirror cannot go on from it`,
      );
  }
  precondition(res.status === 200, `GET /api/v1/selected/changes with a sync cursor of the run answered ${res.status}`);
  return { res, body: inputJson(res, 'GET /api/v1/selected/changes with a sync cursor of the run') };
}

// ---------------------------------------------------------------- every 200 body against its schema
// The per-operation checks validate the one body they fetch; these validate every 200 the run recorded (continuation
// and search pages, each parameter value, every story it asked for) against the same OpenAPI schemas
// (specs/feed/openapi.json), one check per field rule. The fields are reached through the deployment profile; a
// schema is only as strict as the document (nulls the engine sends are allowed there, fields the document leaves
// open stay open). A HEAD has no body; a body the recorder cut at its size bound is not judged, and is counted.

/** The values of a list in a body, each with its place. */
const entriesOf = (body: unknown, list: string, name: string): BodyValue[] => {
  const v = field(body, list);
  return Array.isArray(v) ? v.map((value, i) => ({ where: `${name} ${i}`, value })) : [];
};
const itemPaths = () => ({ items: profile().items.list!, snapshot: profile().snapshot.list!, changes: profile().changes.list!, changeItem: 'item' });
const ITEM_PATHS = new Set(['/api/v1/items', '/api/v1/selected/snapshot', '/api/v1/selected/changes']);
const itemValues = (path: string, body: unknown): BodyValue[] =>
  itemsOf({ path, body } as Seen, itemPaths()).map((value, i) => ({ where: `item ${i}`, value }));
const itemSchema = async (names: string[]) => {
  const item = (await componentSchema('feed', 'Item')) as { properties: Record<string, object>; required: string[] };
  return {
    type: 'object',
    required: item.required.filter((r) => names.includes(r)),
    properties: Object.fromEntries(names.map((n) => [n, item.properties[n]!])),
  };
};
const storyRoot = (body: unknown) => field(body, profile().story.root!);

interface SchemaRule {
  id: string;
  title: string;
  requirement: string;
  /** The operations whose 200s hold the values. */
  of: (path: string) => boolean;
  select: (body: unknown, path: string) => BodyValue[];
  schema: () => Promise<object>;
  none: string;
}

const SCHEMA_RULES: SchemaRule[] = [
  {
    id: 'feed-run-item-timestamps-typed',
    title: 'every item of every items, snapshot and changes 200 of the run carries publishedAt and discoveredAt as timestamps',
    requirement: 'feed-item-timestamps',
    of: (p) => ITEM_PATHS.has(p),
    select: (body, path) => itemValues(path, body),
    schema: () => itemSchema(['publishedAt', 'discoveredAt']),
    none: 'the run saw no item in a 200 read whole',
  },
  {
    id: 'feed-run-item-summary-string',
    title: "every item's summary in every items, snapshot and changes 200 of the run is a string",
    requirement: 'feed-item-summary-string',
    of: (p) => ITEM_PATHS.has(p),
    select: (body, path) => itemValues(path, body),
    schema: () => itemSchema(['summary']),
    none: 'the run saw no item in a 200 read whole',
  },
  {
    id: 'feed-run-item-summary-present',
    title: 'every item of every items 200 of the run (first, continuation and search pages) carries summary: only minimal snapshot pages leave it out',
    requirement: 'feed-item-summary-present',
    of: (p) => p === '/api/v1/items',
    select: (body, path) => itemValues(path, body),
    // Present, as a string (or the null real deployments send for an item without one): the rule above judges its type.
    schema: async () => ({ type: 'object', required: ['summary'] }),
    none: 'the run saw no items page read whole',
  },
  {
    id: 'feed-run-hot-topic-ranks-typed',
    title: "every hot-topics 200 of the run gives each entry's rank as a one-based integer",
    requirement: 'feed-hot-topics-rank',
    of: (p) => p === '/api/v1/hot-topics',
    select: (body) => entriesOf(body, profile().hotTopics.list!, 'entry'),
    schema: async () => {
      const h = (await componentSchema('feed', 'HotTopic')) as { properties: Record<string, object> };
      return { type: 'object', required: ['rank'], properties: { rank: h.properties.rank! } };
    },
    none: 'the run saw no hot-topics entry in a 200 read whole',
  },
  {
    id: 'feed-run-hot-topics-no-heat',
    title: 'no entry of any hot-topics 200 of the run, before and after each refresh (newcomers too), carries a field named like a heat value',
    requirement: 'feed-hot-topics-no-heat',
    of: (p) => p === '/api/v1/hot-topics',
    // The names, at any depth, of each entry's fields named like a heat value: none (feed-hot-topics-no-heat also
    // reads undeclared numbers that order the first answer's entries).
    select: (body) =>
      entriesOf(body, profile().hotTopics.list!, 'entry').map((e) => ({ where: `${e.where}: fields named like a heat value`, value: heatNamedKeys(e.value) })),
    schema: async () => ({ type: 'array', maxItems: 0 }),
    none: 'the run saw no hot-topics entry in a 200 read whole',
  },
  {
    id: 'feed-run-hot-topic-story-links',
    title:
      "every links.story of every hot-topics 200 of the run, before and after each refresh, is an absolute http(s) URL whose final path segment is not empty (the story's publicId)",
    requirement: 'feed-hot-topics-story-link',
    of: (p) => p === '/api/v1/hot-topics',
    select: (body) =>
      entriesOf(body, profile().hotTopics.list!, 'entry')
        .map((e) => ({ where: `${e.where} ${profile().hotTopics.storyLink}`, value: field(e.value, profile().hotTopics.storyLink!) }))
        .filter((v) => v.value !== undefined && v.value !== null),
    // Which story it names is feed-hot-topics-story-links' (it asks the story endpoint, for the first answer's links).
    schema: async () => ({ type: 'string', pattern: '^[hH][tT][tT][pP][sS]?://[^/?#]+/([^?#]*/)?[^/?#]+([?#].*)?$' }),
    none: 'the run saw no links.story in a hot-topics 200 read whole',
  },
  {
    id: 'feed-run-story-lists',
    title: 'every story 200 of the run, a survivor a 308 led to too, carries its storyline and related reference lists',
    requirement: 'feed-story-references',
    of: (p) => p.startsWith('/api/v1/stories/'),
    select: (body) => {
      const p = profile().story;
      return [p.storyline!, p.related!].map((path) => ({ where: path, value: field(storyRoot(body), path) }));
    },
    schema: async () => ({ type: 'array' }),
    none: 'the run saw no story 200 read whole',
  },
  {
    id: 'feed-run-story-ids-at-most-128',
    title:
      "every publicId of every story 200 of the run, the story's own and each storyline and related reference's, is a string of at most 128 characters (code points)",
    requirement: 'feed-story-body',
    of: (p) => p.startsWith('/api/v1/stories/'),
    select: (body) => {
      const p = profile().story;
      const root = storyRoot(body);
      const refs = [p.storyline!, p.related!].flatMap((list) =>
        entriesOf(root, list, list).map((e) => ({ where: `${e.where} ${p.referenceId}`, value: field(e.value, p.referenceId!) })),
      );
      // Counted in code points, as the path parameter's bound is (a JSON schema's maxLength counts them too).
      // A reference without an id is feed-run-story-lists' and the reference checks' business, not this bound's.
      return [{ where: p.publicId!, value: field(root, p.publicId!) }, ...refs].filter((v) => v.value !== undefined && v.value !== null);
    },
    schema: async () => ({ type: 'string', minLength: 1, maxLength: 128 }),
    none: 'the run saw no story 200 read whole',
  },
  {
    id: 'feed-run-story-digest',
    title: 'every story 200 of the run, a story reached by its references or a 308 too, carries its AI digest (null while none is written)',
    requirement: 'feed-story-body',
    of: (p) => p.startsWith('/api/v1/stories/'),
    select: (body) => [{ where: profile().story.digest!, value: field(storyRoot(body), profile().story.digest!) }],
    // As feed-story-fields reads it: text, null (not yet written), or an object holding the text (read two ways there).
    schema: async () => ({ type: ['string', 'object', 'null'] }),
    none: 'the run saw no story 200 read whole',
  },
  {
    id: 'feed-run-archive-dates',
    title: 'every archive 200 of the run, whatever its limit (limit=1 too, the date a client caches a stable URL from), keys its entries by YYYY-MM-DD dates',
    requirement: 'feed-dailies-date-format',
    of: (p) => p === '/api/v1/dailies',
    select: (body) =>
      entriesOf(body, profile().dailies.list!, 'archive entry').map((e) => ({
        where: `${e.where} ${profile().dailies.date}`,
        value: field(e.value, profile().dailies.date!),
      })),
    schema: async () => ({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
    none: 'the run saw no archive entry in a 200 read whole',
  },
  {
    id: 'feed-run-story-timeline-timestamps',
    title: 'every coverage-timeline entry of every story 200 of the run is dated with a timestamp (an instant, so the order can be read)',
    requirement: 'feed-story-timeline-order',
    of: (p) => p.startsWith('/api/v1/stories/'),
    select: (body) =>
      entriesOf(storyRoot(body), profile().story.timeline!, 'timeline entry').map((e) => ({
        where: `${e.where} ${profile().story.timelineTime}`,
        value: field(e.value, profile().story.timelineTime!),
      })),
    schema: () => componentSchema('feed', 'Timestamp'),
    none: 'the run saw no coverage-timeline entry in a story 200 read whole',
  },
];

describe.sequential('between two exchanges of the run: snapshot pages', () => {
  check(
    {
      id: 'feed-run-snapshot-next-page-moves',
      title: 'no snapshot continuation page of the run gives as nextPage the cursor it was asked with: nextPage leads to the next page',
      requirements: ['feed-snapshot-paging'],
    },
    async (t) => {
      judge(t, snapshotNextPageMoves(runSeen()), 'the run asked for no snapshot continuation page read whole', 'continuation pages pointed back at themselves');
    },
  );

  check(
    {
      id: 'feed-run-items-next-cursor-moves',
      title: 'no items continuation page of the run that says there is more gives as its next cursor the cursor it was asked with',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      const p = profile().items;
      judge(
        t,
        nextPageMoves(runSeen(), { path: '/api/v1/items', param: 'cursor', next: p.nextCursor!, hasMore: p.hasMore!, what: p.nextCursor! }),
        'the run asked for no items continuation page read whole',
        'continuation pages pointed back at themselves',
      );
    },
  );

  check(
    {
      id: 'feed-run-snapshot-fields-per-walk',
      title:
        'every snapshot continuation page of the run keeps the fields value its walk began with (a retried page too), and every first page asked with fields=minimal shows it, its last rows included',
      requirements: ['feed-snapshot-fields-locked', 'feed-snapshot-fields-minimal'],
    },
    async (t) => {
      judge(
        t,
        snapshotWalkFields(runSeen(), { list: (b) => listOf(b, profile().snapshot.list!), dropped: minimalDropped, all: 2 }),
        'the run followed no snapshot nextPage it had read whole',
        'snapshot pages gave items of another fields value than their walk asked for',
      );
    },
  );

  check(
    {
      id: 'feed-run-snapshot-next-pages-accepted',
      title: "every snapshot nextPage of a page saying there was more, sent back by the run as page with its page's limit, was accepted, not refused with 400",
      requirements: ['feed-snapshot-paging'],
    },
    async (t) => {
      judge(t, nextPagesAccepted(runSeen()), 'the run sent back no snapshot nextPage as page', 'snapshot nextPage tokens were refused');
    },
  );

  check(
    {
      id: 'feed-run-snapshot-cursor-per-walk',
      title: 'every snapshot continuation page of the run (fields=minimal walks too) carries the cursor its walk began with',
      requirements: ['feed-snapshot-cursor-stable'],
    },
    async (t) => {
      judge(t, snapshotWalkCursors(runSeen()), 'the run followed no snapshot nextPage it had read whole', 'continuation pages gave another cursor');
    },
  );
});

describe.sequential('every items page says whether there is more', () => {
  // (A snapshot page's hasMore is named by the document: its schema holds every page to it.)
  check(
    {
      id: 'feed-run-items-pages-say-more',
      title: 'every items page of the run says whether there is more, its last page too (where its other pages carry that field)',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      judge(
        t,
        pagesSayMore(runSeen(), { path: '/api/v1/items', hasMore: profile().items.hasMore! }),
        'the run read no items page saying whether there was more',
        'pages gave no paging data',
      );
    },
  );
});

describe.sequential('every paged answer and every link the run saw', () => {
  for (const [path, requirement, what] of [
    ['/api/v1/items', 'feed-items-paging', 'items'],
    ['/api/v1/selected/snapshot', 'feed-snapshot-paging', 'snapshot'],
  ] as const)
    check(
      {
        id: `feed-run-${what}-more-has-next`,
        title: `every ${what} page of the run that says there is more gives the cursor of its next page`,
        requirements: [requirement],
      },
      async (t) => {
        const p = what === 'items' ? profile().items : { hasMore: 'hasMore', nextCursor: 'nextPage' };
        judge(
          t,
          moreHasNext(runSeen(), [{ path, hasMore: p.hasMore!, next: p.nextCursor! }]),
          `the run read no ${what} page that said there was more`,
          'pages said there was more and gave no cursor to it',
        );
      },
    );

  check(
    {
      id: 'feed-run-small-snapshot-pages-have-more',
      title: 'every first snapshot page of the run of 5 items or fewer says hasMore true when the run saw more items in the set',
      requirements: ['feed-snapshot-paging'],
    },
    async (t) => {
      const sp = profile().snapshot;
      judge(
        t,
        smallSnapshotPagesHaveMore(runSeen(), { list: (b) => listOf(b, sp.list!), id: (i) => String(field(i, sp.id!)) }),
        'the run read no first snapshot page of 5 items or fewer from a set that showed more',
        'small first pages said there was no more',
      );
    },
  );

  check(
    {
      id: 'feed-run-story-reference-links',
      title: 'every storyline and related reference of the run whose link leads to the story endpoint names its own id there',
      requirements: ['feed-story-references'],
    },
    async (t) => {
      const sp = profile().story;
      const refs = (b: unknown) =>
        [sp.storyline!, sp.related!].flatMap((k) => {
          const v = field(field(b, sp.root!), k);
          return Array.isArray(v) ? v : [];
        });
      judge(
        t,
        referenceLinksNameTheirIds(runSeen(), { refs, id: (r) => field(r, sp.referenceId!), pathOf: (u) => operationPath('feed', u) }),
        'the run read no story reference with a link to the story endpoint',
        'references linked to another story than their own id',
      );
    },
  );

  check(
    {
      id: 'feed-run-api-links-v1',
      title: "every link of the run's bodies that leads into the service's API leads under /api/v1",
      requirements: ['feed-paths-v1-prefix'],
    },
    async (t) => {
      judge(
        t,
        apiLinksUnderV1(runSeen(), (u) => operationPath('feed', u)),
        "the run's bodies held no link into the API",
        'links led outside /api/v1',
      );
    },
  );
});

describe.sequential('between two exchanges of the run: items cursors', () => {
  check(
    {
      id: 'feed-run-refused-cursor-stays-refused',
      title: 'no items cursor the run saw refused as invalid_cursor, its anchor well inside the window, was served afterwards to the same request',
      requirements: ['feed-items-cursor-no-timer'],
    },
    async (t) => {
      const code = (s: { x: Exchange }) => {
        try {
          return problemCode(JSON.parse(s.x.responseBody ?? '') as Record<string, unknown>);
        } catch {
          return undefined;
        }
      };
      const p = profile().items;
      judge(
        t,
        refusedCursorsStayRefused(runSeen(), { code, list: (b) => listOf(b, p.list!), next: p.nextCursor! }),
        'the run saw no items cursor it had seen issued refused as invalid_cursor with its anchor well inside the window',
        'cursors were refused, then served',
      );
    },
  );

  check(
    {
      id: 'feed-run-items-cursor-leads-on',
      title: 'no items page the run followed a cursor to (by the timeline) holds a row of the page that gave the cursor, however late it was followed',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      const p = profile().items;
      judge(
        t,
        cursorPagesLeadOn(runSeen(), { list: p.list!, id: (i) => String(field(i, p.id!)), next: p.nextCursor! }),
        'the run followed no items cursor it had read the page of',
        'continuation pages repeated rows of the page before them',
      );
    },
  );
});

describe.sequential('every 200 body the run saw, against its schema', () => {
  for (const rule of SCHEMA_RULES)
    check({ id: rule.id, title: rule.title, requirements: [rule.requirement] }, async (t) => {
      const valid = validator(await rule.schema());
      const r = bodiesMatch(runSeen(), rule.of, rule.select, (v) => (valid(v) ? undefined : formatAjvErrors(valid.errors)));
      if (r.cut) t.observe("200 bodies not judged (cut at the recorder's size bound, or not read whole)", String(r.cut));
      judge(t, r, rule.none, 'values broke the schema');
    });
});

describe.sequential('every 308 and every archive answer of the run', () => {
  check(
    {
      id: 'feed-run-308-has-location',
      title: 'every 308 of a story in the run, to a conditional request too, carries Location',
      requirements: ['feed-story-merged-308'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      judge(t, redirectsLocated(runSeen()), 'no story of the run answered 308', '308s had no Location');
    },
  );

  check(
    {
      id: 'feed-run-archive-holds-its-limit',
      title: 'every archive answer of the run lists at most its limit of dates, and no fewer than an earlier answer listed, up to it',
      requirements: ['feed-dailies-limit-range'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      const byDefault = (parameter(await loadOpenApi('feed'), 'listDailies', 'limit').schema as { default?: number } | undefined)?.default;
      precondition(typeof byDefault === 'number', 'specs/feed/openapi.json gives listDailies no default limit');
      judge(t, archiveSizes(runSeen(), profile().dailies.list!, byDefault), 'the run read no archive', 'archive answers held another number of dates');
    },
  );

  check(
    {
      id: 'feed-run-archive-newest-first',
      title: 'every archive answer of the run that lists two dates or more, whatever its limit, lists them newest first',
      requirements: ['feed-dailies-archive-order'],
    },
    async (t) => {
      t.cite(...(await lateLook()).res);
      const d = profile().dailies;
      judge(t, archiveOrder(runSeen(), d.list!, d.date!), 'the run read no archive answer of two dates or more', 'archive answers were not newest first');
    },
  );
});
