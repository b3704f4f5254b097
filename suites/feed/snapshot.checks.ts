/**
 * content-feed-service.md — Resources > Selected-set snapshot page; Endpoints > /api/v1/selected/snapshot and
 * /api/v1/selected/changes: the document's client procedure, end to end.
 */
import { describe } from 'vitest';
import { check, expect, fail, precondition, type CheckTools } from '../../src/harness.js';
import {
  changeOf,
  CLOCK_TOLERANCE_MS,
  effectiveTime,
  feedGet,
  fromCache,
  instant,
  idOf,
  inputJson,
  listOf,
  needsAccess,
  once,
  profile,
  readChanges,
  targetNow,
  walkItems,
  WINDOW_MS,
  minimalDropped,
} from '../../src/feed.js';
import { componentSchema, field, formatAjvErrors, validator } from '../../src/spec.js';
import { canonical } from '../../src/canonical.js';
import type { HttpResponse } from '../../src/http.js';

const SNAPSHOT = '/api/v1/selected/snapshot';
const CHANGES = '/api/v1/selected/changes';
/** Bounds the procedure on a large selected set (several thousand items at the default 500 a page). */
const MAX_PAGES = 20;
/** Bounds the walk of the 7d listing of the selected items (pages of 100). */
const WEEK_PAGES = 10;

interface Snapshot {
  pages: { res: HttpResponse; body: Record<string, unknown> }[];
  items: Map<string, unknown>;
  ids: string[];
  cursor: string;
  complete: boolean;
  /** A continuation page that was not served (the paging checks fail on it; others are left undecided). */
  failure?: string;
}

/** The client procedure: request pages while hasMore, keep the first page's cursor. */
async function takeSnapshot(query: Record<string, string | number> = {}, pagesAtMost = MAX_PAGES): Promise<Snapshot> {
  const pages: Snapshot['pages'] = [];
  let next: string | undefined;
  let failure: string | undefined;
  for (let i = 0; i < pagesAtMost; i++) {
    const res = await feedGet(SNAPSHOT, { query: next ? { ...query, page: next } : query, continuation: next !== undefined });
    if (res.status !== 200 && i === 0) {
      needsAccess(res, 'the snapshot');
      precondition(false, `the snapshot's first page answered ${res.status} (this check needs it; its parameters are judged by the checks citing them)`);
    }
    if (res.status !== 200) {
      failure = `continuation page ${i + 1} (nextPage of page ${i}) answered ${res.status}`;
      break;
    }
    const body = inputJson<Record<string, unknown>>(res, 'the snapshot');
    const page = validator(await componentSchema('feed', 'SnapshotPage'));
    if (!page(body)) fail(`snapshot page ${i + 1} is not a snapshot page: ${formatAjvErrors(page.errors)}`);
    pages.push({ res, body });
    if (body.hasMore !== true) {
      // "hasMore: true while further pages exist": a last page that still hands out a nextPage is asked whether
      // that page exists (one request, only then); a page of items there means the walk was told to stop too early.
      const after =
        typeof body.nextPage === 'string' && body.nextPage !== ''
          ? await feedGet(SNAPSHOT, { query: { ...query, page: body.nextPage }, continuation: true })
          : undefined;
      const more = after?.status === 200 ? listOf(inputJson(after, 'the snapshot'), profile().snapshot.list!).length : 0;
      if (more > 0) failure = `page ${i + 1} said hasMore ${JSON.stringify(body.hasMore)}, but its nextPage led to a page of ${more} item(s)`;
      break;
    }
    next = body.nextPage as string;
  }
  const list = pages.flatMap((p) => listOf(p.body, profile().snapshot.list!));
  const ids = list.map((i) => idOf(i, profile().snapshot.id!));
  return {
    pages,
    items: new Map(ids.map((id, k) => [id, list[k]])),
    ids,
    cursor: pages[0]!.body.cursor as string,
    complete: !failure && pages[pages.length - 1]!.body.hasMore !== true,
    failure,
  };
}

// fields=default explicitly (the document's default): the change feed's upserts carry full items.
const snapshotA = () => once('snapshot-a', () => takeSnapshot({ fields: 'default' }));
/** The first changes call with snapshot A's cursor (the procedure's reconciling call), asked once and shared. */
const firstChangesA = () => once('changes-a-first', async () => feedGet(CHANGES, { query: { [profile().changes.cursorParam!]: (await snapshotA()).cursor } }));

/**
 * A second walk with another page size, chosen from what the first walk saw: about four pages over a set that fit
 * one or two (so that one walk has continuation pages that are not the last, the third one too: a deployment whose
 * paging breaks from some page on shows it there), else pages twice the default size (or smaller when the default
 * was already the maximum, 1000).
 */
function otherSizeSnapshot(a: Snapshot): Promise<Snapshot & { limit: number }> {
  return once('snapshot-other-size', async () => {
    const firstCount = listOf(a.pages[0]!.body, profile().snapshot.list!).length;
    const fewPages = a.pages.length <= 2 ? 4 : 0;
    const limit = fewPages ? Math.max(1, Math.ceil(a.ids.length / fewPages)) : firstCount >= 1000 ? 700 : Math.min(1000, firstCount * 2);
    return { ...(await takeSnapshot({ limit })), limit };
  });
}

interface Change {
  op: string;
  id: string;
  item?: unknown;
}
/** The changes after a cursor: all pages (bounded), the last cursor, and each change read through the profile. */
async function changesAfter(
  cursor: string,
  maxPages = 10,
  firstRes?: HttpResponse,
  /** Stop as soon as every one of these ids is named (a lookup, not a read to the end). */
  wanted: readonly string[] = [],
): Promise<{ res: HttpResponse[]; changes: Change[]; cursor: string; complete: boolean }> {
  const p = profile().changes;
  const named = new Set<string>();
  const read = await readChanges(
    cursor,
    maxPages,
    (r) => {
      needsAccess(r, 'the changes endpoint');
      expect(r.status, `GET ${CHANGES} with the cursor`).toBe(200);
      return true;
    },
    (r) => {
      const body = inputJson(r, `GET ${r.url}`);
      for (const ch of listOf(body, p.list!)) named.add(String(changeOf(ch).id));
      return body;
    },
    () => wanted.length > 0 && wanted.every((id) => named.has(id)),
    firstRes,
  );
  const changes: Change[] = [];
  for (const ch of read.bodies.flatMap((body) => listOf(body, p.list!))) {
    const { op, id, item } = changeOf(ch);
    if (typeof id !== 'string') fail(`a change carries no id (${op === 'remove' ? p.removedId : p.itemId}): ${JSON.stringify(ch).slice(0, 200)}`);
    changes.push({ op: String(op), id, item });
  }
  return { res: read.res, changes, cursor: read.cursor, complete: read.complete };
}

// One check at a time, after the checks before them: walking a snapshot moves a live feed (a continuation page may
// come with an edit), and the listings other checks compare between two identical requests must not move under them.
describe.sequential('the snapshot procedure', () => {
  check(
    {
      id: 'feed-snapshot-pages-no-duplicates',
      title: 'pages continue with nextPage while hasMore is true, and their union has no duplicates',
      requirements: ['feed-snapshot-paging'],
    },
    async (t) => {
      const s = await snapshotA();
      t.cite(...s.pages.map((p) => p.res));
      if (s.failure) t.violation(`following nextPage while hasMore was true: ${s.failure}`);
      t.observe('snapshot', `${s.ids.length} items in ${s.pages.length} page(s)${s.complete || s.failure ? '' : ` (stopped after ${MAX_PAGES} pages)`}`);
      precondition(s.ids.length > 0, 'the selected set is empty');
      const repeated = (ids: string[]) => [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))].slice(0, 10).join(', ');
      if (repeated(s.ids)) t.violation(`the pages repeat items: ${repeated(s.ids)}`);
      // The walk with another page size (the one feed-snapshot-walk-complete compares): over a set that fits one
      // default page it is the walk that has continuation pages.
      if (!s.complete || s.ids.length < 2) return;
      const b = await otherSizeSnapshot(s);
      t.cite(...b.pages.map((p) => p.res));
      t.observe('walk with another page size', `${b.ids.length} items in ${b.pages.length} page(s) of ${b.limit}`);
      if (b.failure) t.violation(`following nextPage while hasMore was true (limit=${b.limit}): ${b.failure}`);
      if (repeated(b.ids)) t.violation(`the pages of the walk with limit=${b.limit} repeat items: ${repeated(b.ids)}`);
    },
  );

  check(
    {
      id: 'feed-snapshot-walk-complete',
      title:
        'the pages of a snapshot deliver every item of the selected set: a walk with another page size, and one with fields=minimal in pages of 1000, give the same set',
      requirements: ['feed-snapshot-paging'],
    },
    async (t) => {
      const a = await snapshotA();
      t.cite(...a.pages.map((p) => p.res));
      if (a.failure) fail(`following nextPage while hasMore was true: ${a.failure}`);
      precondition(a.complete, `the selected set has more than ${MAX_PAGES} pages of the default size; no walk reached its end`);
      precondition(a.ids.length > 1, 'needs at least 2 selected items');
      const b = await otherSizeSnapshot(a);
      t.cite(...b.pages.map((p) => p.res));
      if (b.failure) fail(`following nextPage while hasMore was true (limit=${b.limit}): ${b.failure}`);
      // The minimal projection is the same set in other clothes ("cuts the payload", not the items), walked in pages
      // of 1000. A refused fields=minimal is feed-snapshot-fields-enum's finding, not this one's. (Not read when the
      // walk with another page size did not end: this check ends there.)
      const m = b.complete ? await minimalSnapshot() : undefined;
      if (m) t.cite(...m.pages.map((p) => p.res));
      if (m?.failure) fail(`following nextPage while hasMore was true (fields=minimal): ${m.failure}`);
      t.observe(
        'walks',
        `${a.pages.length} page(s) at the default size, ${b.pages.length} page(s) of ${b.limit}${m ? `, ${m.pages.length} page(s) of fields=minimal` : ''}: ${a.ids.length}, ${b.ids.length}${m ? ` and ${m.ids.length}` : ''} items`,
      );
      // The set may change between the walks: items the change feed names since the first walk's cursor are
      // excepted (read as far as it can be read: the change feed's own rules are other checks' business). A walk that
      // did not end within MAX_PAGES still shows what the complete one left out (items it delivered that the walk which
      // said hasMore false never did); what it did not deliver is not judged.
      const inA = new Set(a.ids);
      const bLabel = b.complete ? `limit=${b.limit}` : `limit=${b.limit} (its first ${MAX_PAGES} pages: it did not end)`;
      const others = [[b, bLabel], ...(m?.complete ? [[m, 'fields=minimal'] as const] : [])] as const;
      const apart = others.map(([other, label]) => {
        const inOther = new Set(other.ids);
        return { label, onlyA: other.complete ? a.ids.filter((id) => !inOther.has(id)) : [], onlyOther: other.ids.filter((id) => !inA.has(id)) };
      });
      let moved: Set<string> | undefined;
      const changedSince = async () => {
        if (moved) return moved;
        moved = new Set<string>();
        try {
          // Up to thirty pages, stopping once every item in question is named: a live feed (the living reference's bulk
          // edits) fills many pages while a loaded machine walks the set three times.
          const since = await changesAfter(
            a.cursor,
            30,
            undefined,
            apart.flatMap((d) => [...d.onlyA, ...d.onlyOther]),
          );
          t.cite(...since.res);
          for (const c of since.changes) moved.add(c.id);
        } catch {
          t.observe('change feed', 'unreadable here: no item excepted as changed between the walks');
        }
        return moved;
      };
      for (const { label, ...d } of apart) {
        let { onlyA, onlyOther } = d;
        if (onlyA.length || onlyOther.length) {
          const changed = await changedSince();
          onlyA = onlyA.filter((id) => !changed.has(id));
          onlyOther = onlyOther.filter((id) => !changed.has(id));
        }
        if (onlyA.length) t.violation(`the walk with ${label} never delivered ${onlyA.length} selected item(s): ${onlyA.slice(0, 10).join(', ')}`);
        if (onlyOther.length)
          t.violation(
            `the walk at the default size never delivered ${onlyOther.length} selected item(s) the walk with ${label} did: ${onlyOther.slice(0, 10).join(', ')}`,
          );
      }
      precondition(b.complete, `the walk with limit=${b.limit} did not end within ${MAX_PAGES} pages`);
    },
  );

  check(
    {
      id: 'feed-snapshot-small-page-has-more',
      title:
        'a first page of 2 (fields=default and minimal), and the minimal page after it, say hasMore true when a walk of the selected set delivered more items',
      requirements: ['feed-snapshot-paging'],
    },
    async (t) => {
      const a = await snapshotA();
      t.cite(...a.pages.map((p) => p.res));
      // A margin for a live set that loses a few items between the walk and the page (it "only grows", but may be edited).
      precondition(a.ids.length >= 10, `needs a selected set of 10 items or more (a walk delivered ${a.ids.length})`);
      const seen: string[] = [];
      for (const fields of ['default', 'minimal'] as const) {
        const first = await smallFirstPage(fields);
        t.cite(first);
        if (first.status !== 200) {
          seen.push(`fields=${fields}&limit=2 answered ${first.status}`);
          continue;
        }
        const body = inputJson<Record<string, unknown>>(first, `GET ${first.url}`);
        seen.push(`fields=${fields}: ${JSON.stringify(body.hasMore)}`);
        if (body.hasMore !== true) {
          t.violation(
            `fields=${fields}&limit=2 said hasMore ${JSON.stringify(body.hasMore)} while a walk of the set delivered ${a.ids.length} items: a client stops after 2`,
          );
          continue;
        }
        // The page after it, as feed-snapshot-fields-locked asks it (its page token, with the other fields value, or
        // alone with limit=2): hasMore true again while the walk delivered more than the two pages and a margin hold.
        // For fields=minimal only (the walks of the default fields read continuation pages of their own).
        if (fields !== 'minimal' || typeof body.nextPage !== 'string' || body.nextPage === '') continue;
        const c = await continuedWithOther('minimal', body.nextPage);
        const next = c.cont.status === 200 ? c.cont : c.plain;
        if (!next || next.status !== 200) continue;
        t.cite(next);
        const nextBody = inputJson<Record<string, unknown>>(next, `GET ${next.url}`);
        // What the two pages held (a first page may hold more than 2 where limit is not honoured: its own rule's finding).
        const held = listOf(body, profile().snapshot.list!).length + listOf(nextBody, profile().snapshot.list!).length;
        seen.push(`its next page: ${JSON.stringify(nextBody.hasMore)} after ${held} items`);
        if (nextBody.hasMore !== true && a.ids.length >= held + 8)
          t.violation(
            `the page after fields=minimal&limit=2 said hasMore ${JSON.stringify(nextBody.hasMore)} after ${held} items, while a walk of the set delivered ${a.ids.length}: a client stops there`,
          );
      }
      t.observe('hasMore on pages of 2', seen.join('; '));
      precondition(
        !seen.every((x) => / answered \d+$/.test(x)),
        `the snapshot answered neither first page of 2 (${seen.join('; ')}): the checks citing its parameters judge that`,
      );
    },
  );

  check(
    { id: 'feed-snapshot-cursor-same-every-page', title: 'the sync cursor is identical on every page', requirements: ['feed-snapshot-cursor-stable'] },
    async (t) => {
      const a = await snapshotA();
      t.cite(...a.pages.map((p) => p.res));
      // A small selected set fits one page of the default size: walk it in small pages instead.
      const s = a.pages.length > 1 ? a : await otherSizeSnapshot(a);
      if (s !== a) t.cite(...s.pages.map((p) => p.res));
      precondition(!s.failure, `${s.failure ?? ''} (feed-snapshot-paging judges that)`);
      precondition(s.pages.length > 1, 'needs at least 2 selected items (to page through the snapshot)');
      t.observe('pages compared', `${s.pages.length}${s === a ? ' at the default size' : ` of limit=${(s as Snapshot & { limit: number }).limit}`}`);
      const cursors = [...new Set(s.pages.map((p) => p.body.cursor))];
      expect(cursors, 'cursor values across pages').toHaveLength(1);
    },
  );
});

/**
 * "Recent public items; covers the last 7 days only": the window reaches back seven days. The selected set's snapshot
 * is the measure: where it holds items whose timeline time lies in the last six hours of the seven days (well inside,
 * the clock tolerance and ten minutes from the edge), the window=7d listing of the selected items shows at least one
 * of them. A window configured shorter (six days, six and a half) shows none. At least one, not each: which items
 * paging or the selection's own changes leave out are other checks' findings.
 */
describe.sequential('the 7d window against the selected set', () => {
  check(
    {
      id: 'feed-items-window-7d-holds-selected',
      title: 'window=7d&mode=selected reaches back seven days: it lists some selected item whose timeline time lies in the last six hours of the seven days',
      requirements: ['feed-items-window-7d'],
    },
    windowReachesSevenDays,
  );
});

async function windowReachesSevenDays(t: CheckTools): Promise<void> {
  const a = await snapshotA();
  t.cite(...a.pages.map((p) => p.res));
  precondition(a.pages.length > 0, 'the snapshot walk gave no page');
  const { now: then } = targetNow(a.pages[0]!.res);
  const timeOf = (item: unknown) => effectiveTime(item as Record<string, unknown>, 'timeline');
  const week = [...a.items.entries()].filter(([, item]) => (timeOf(item) ?? 0) >= then - WINDOW_MS['7d']!);
  // The band the window must reach: well inside the seven days (the clock tolerance and ten minutes from the edge), in
  // their last six hours. Judged by the snapshot's time; the listing's own Date is checked below.
  const inBand = (item: unknown, now: number) => {
    const at = timeOf(item);
    const edge = now - WINDOW_MS['7d']!;
    return at !== undefined && at > edge + CLOCK_TOLERANCE_MS + 10 * 60_000 && at < edge + 6 * 3_600_000;
  };
  const early = week.filter(([, item]) => inBand(item, then));
  if (early.length === 0) return t.notApplicable('the selected set holds no item whose timeline time lies in the last six hours of the seven days');
  // A long listing (more than three pages of 100) is reached at its tail through one category: among those short enough
  // to walk, the one with the most items in the band (three at least: a live feed may take one of them out meanwhile).
  const cat = profile().items.category;
  const categoryOf = (item: unknown) => (cat ? field(item, cat) : undefined);
  const counts = new Map<string, number>();
  for (const [, item] of week)
    if (typeof categoryOf(item) === 'string') counts.set(categoryOf(item) as string, (counts.get(categoryOf(item) as string) ?? 0) + 1);
  const inBandOf = (c: string) => early.filter(([, i]) => categoryOf(i) === c).length;
  const narrowed =
    week.length > 300
      ? [...counts.keys()].filter((c) => counts.get(c)! <= WEEK_PAGES * 100 - 50 && inBandOf(c) >= 3).sort((x, y) => inBandOf(y) - inBandOf(x))[0]
      : undefined;
  if (week.length > WEEK_PAGES * 100 - 50 && !narrowed)
    return t.notApplicable(
      `the selected set holds ${week.length} items in the last seven days, and no category with three of them in the band and few enough rows to walk`,
    );
  const query = { mode: 'selected', window: '7d', by: 'timeline', limit: 100, ...(narrowed ? { category: narrowed } : {}) };
  const pages = await walkItems(query, WEEK_PAGES);
  t.cite(...pages.map((p) => p.res));
  const under = narrowed ? `&category=${narrowed}` : '';
  if (pages[pages.length - 1]!.hasMore)
    t.notApplicable(`the 7d listing of the selected items${under} has more than ${WEEK_PAGES * 100} items: not walked to its end`);
  const rows = pages.flatMap((p) => p.items);
  // A category listing that holds other categories' rows, or none of its own, is the category rules' finding.
  if (narrowed && (!rows.some((i) => categoryOf(i) === narrowed) || rows.some((i) => categoryOf(i) !== undefined && categoryOf(i) !== narrowed)))
    return t.notApplicable(`window=7d&mode=selected&category=${narrowed} did not list that category's items alone (the category checks judge that)`);
  const listed = new Set(rows.map((i) => idOf(i)));
  const { now } = targetNow(pages[0]!.res);
  const band = early.filter(([, item]) => inBand(item, now) && (!narrowed || categoryOf(item) === narrowed));
  t.observe(`selected items${under} in the last six hours of the seven days`, String(band.length));
  if (band.length === 0)
    t.notApplicable(`the selected set holds no item${under ? ' of that category' : ''} whose timeline time lies in the last six hours of the seven days`);
  const shown = band.filter(([id]) => listed.has(id));
  t.observe('of them listed by window=7d', String(shown.length));
  if (shown.length === 0)
    t.violation(
      `window=7d&mode=selected${under} (${listed.size} items, walked to its end) lists none of the ${band.length} selected items whose timeline time lies between 6 d 18 h and 7 d back: its window ends before seven days, e.g. ${band
        .slice(0, 3)
        .map(
          ([id, i]) =>
            `${id} (publishedAt ${String((i as Record<string, unknown>).publishedAt)}, discoveredAt ${String((i as Record<string, unknown>).discoveredAt)})`,
        )
        .join('; ')}`,
    );
}

describe.sequential('the snapshot procedure: page size and fields=minimal', () => {
  check(
    {
      id: 'feed-snapshot-pages-within-limit',
      title: 'every page of a walk, continuation pages included, holds at most the limit it was asked for (default 500)',
      requirements: ['feed-snapshot-limit-range'],
    },
    async (t) => {
      const a = await snapshotA();
      t.cite(...a.pages.map((p) => p.res));
      const b = await otherSizeSnapshot(a);
      t.cite(...b.pages.map((p) => p.res));
      // The walks above may fit one page at their sizes: three pages of a small size show continuation pages too.
      const SMALL = 3;
      const small = await takeSnapshot({ limit: SMALL }, 3);
      t.cite(...small.pages.map((p) => p.res));
      for (const [walk, limit] of [
        [a, 500],
        [b, b.limit],
        [small, SMALL],
      ] as const) {
        const sizes = walk.pages.map((p) => listOf(p.body, profile().snapshot.list!).length);
        const over = sizes.findIndex((n) => n > limit);
        if (over >= 0) t.violation(`page ${over + 1} of a walk at limit=${limit} held ${sizes[over]} items`);
      }
      if (a.pages.length + b.pages.length + small.pages.length === 3 && small.complete)
        t.notApplicable(`the selected set fits one page of ${SMALL}: no walk has a continuation page`);
      precondition(a.pages.length + b.pages.length + small.pages.length > 3, 'needs a walk of more than one page (a continuation page to judge)');
    },
  );

  check(
    {
      id: 'feed-snapshot-minimal-same-values',
      title:
        'a fields=minimal first page carries, for each item, the values of the fields=default pages around it in every field it keeps (it drops, it does not rewrite)',
      requirements: ['feed-snapshot-fields-minimal'],
    },
    minimalSameValues,
  );

  check(
    {
      id: 'feed-snapshot-fields-minimal',
      title: 'fields=minimal drops summary and links.original; fields=default keeps them',
      requirements: ['feed-snapshot-fields-minimal', 'feed-item-original-link'],
    },
    async (t) => {
      const min = await feedGet(SNAPSHOT, { query: { fields: 'minimal', limit: 20 } });
      const def = await feedGet(SNAPSHOT, { query: { fields: 'default', limit: 20 } });
      t.cite(min, def);
      needsAccess(min, 'the snapshot');
      // A refused fields value is feed-snapshot-fields-enum's finding: here there is nothing to compare.
      precondition(min.status === 200 && def.status === 200, `the snapshot answered ${min.status} to fields=minimal and ${def.status} to fields=default`);
      const minimal = validator(await componentSchema('feed', 'MinimalItem'));
      const full = validator(await componentSchema('feed', 'Item'));
      const minItems = listOf(inputJson(min, `GET ${min.url}`), profile().snapshot.list!);
      const defItems = listOf(inputJson(def, `GET ${def.url}`), profile().snapshot.list!);
      precondition(minItems.length > 0 && defItems.length > 0, 'the selected set is empty');
      for (const i of minItems) if (!minimal(i)) t.violation(`fields=minimal item ${idOf(i, profile().snapshot.id!)} still carries summary or links.original`);
      for (const i of defItems) {
        if (!full(i)) t.violation(`fields=default item ${idOf(i, profile().snapshot.id!)}: ${formatAjvErrors(full.errors)}`);
        expect(i, 'fields=default items carry summary').toHaveProperty('summary');
      }
    },
  );
});

/**
 * A fields=minimal first page between two fields=default first pages taken just before and just after it: every
 * value a minimal item keeps is the same item's value on one of them (an edit that lands between two of the three
 * requests shows on one side). A projection that keeps stale values differs from both.
 */
async function minimalSameValues(t: CheckTools): Promise<void> {
  // Pages of 100: enough items to meet an edited one, a fifth of the default page's bytes.
  const before = await feedGet(SNAPSHOT, { query: { fields: 'default', limit: 100 } });
  const min = await feedGet(SNAPSHOT, { query: { fields: 'minimal', limit: 100 } });
  const after = await feedGet(SNAPSHOT, { query: { fields: 'default', limit: 100 } });
  t.cite(before, min, after);
  needsAccess(min, 'the snapshot');
  if (min.status !== 200) return t.notApplicable(`the snapshot answered ${min.status} to fields=minimal (feed-snapshot-fields-enum judges that)`);
  precondition(before.status === 200 && after.status === 200, `the snapshot answered ${before.status} and ${after.status} to fields=default`);
  // From a cache (Age above 0) a page may be older than the others by up to its freshness: not compared.
  const aged = [before, min, after].filter(fromCache);
  if (aged.length) return t.notApplicable(`${aged.length} of the three pages came from a cache (Age above 0): they are not of one moment`);
  const byId = (res: HttpResponse) =>
    new Map(listOf(inputJson(res, `GET ${res.url}`), profile().snapshot.list!).map((i) => [idOf(i, profile().snapshot.id!), i] as const));
  const [b, a] = [byId(before), byId(after)];
  const differ: string[] = [];
  let compared = 0;
  const carrying: string[] = [];
  for (const [id, item] of byId(min)) {
    const kept = minimalDropped(item);
    if (kept.length) carrying.push(`${id} (${kept.join(' and ')})`);
    const sides = [b.get(id), a.get(id)].filter((x) => x !== undefined);
    if (!sides.length) continue;
    compared++;
    // Leaf by leaf (minimal drops links.original from inside links): each value it keeps, a default page's.
    for (const [k, v] of leaves(item)) {
      const known = sides.map((x) => field(x, k)).filter((w) => w !== undefined);
      if (known.length && !known.some((w) => sameValue(w, v))) differ.push(`${id} ${k}`);
    }
  }
  t.observe('items compared', String(compared));
  if (carrying.length)
    t.violation(
      `${carrying.length} fields=minimal item(s), asked right after a fields=default page, carry what minimal drops: ${carrying.slice(0, 5).join(', ')}`,
    );
  precondition(compared > 0, 'the minimal first page shared no item with the default first pages around it');
  if (differ.length)
    t.violation(
      `${differ.length} value(s) of fields=minimal items are neither of the same items' fields=default values just before and after: ${differ.slice(0, 8).join(', ')}`,
    );
}

/** Two JSON values alike: timestamps as instants (another precision or offset is the same time), the rest as values. */
function sameValue(a: unknown, b: unknown): boolean {
  const [x, y] = [instant(a), instant(b)];
  return x !== undefined && y !== undefined ? x === y : canonical(a) === canonical(b);
}

/** The leaves of a JSON object as dotted paths (arrays are leaves). */
function leaves(v: unknown, at = ''): [string, unknown][] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return at ? [[at, v]] : [];
  return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) => leaves(x, at ? `${at}.${k}` : k));
}

/** A walk with fields=minimal in pages of 1000, once per run; undefined when it could not be taken. */
const minimalSnapshot = () =>
  once('snapshot-minimal', async () => {
    try {
      // The largest page (minimal cuts the payload): fewest requests, and pages larger than any projection's own cap.
      return await takeSnapshot({ fields: 'minimal', limit: 1000 });
    } catch {
      // Refused, or a page that is not a snapshot page: the checks citing fields and the page's shape report that.
      return undefined;
    }
  });

/** A first snapshot page of 2 (any set of three items or more has a continuation page), once per fields value. */
const smallFirstPage = (fields: 'minimal' | 'default') => once(`snapshot-limit-2:${fields}`, () => feedGet(SNAPSHOT, { query: { fields, limit: 2 } }));

/**
 * The continuation page of a first page of 2 (fields=`locked`), asked with the other fields value after another walk
 * begun with that value (another client's: the lock is this walk's page cursor's); when that is refused (400), the
 * page token itself, sent with its page's limit as a client does (feed-run-snapshot-next-pages-accepted judges it).
 * Once per fields value: feed-snapshot-small-page-has-more reads the minimal one's hasMore.
 */
const continuedWithOther = (locked: 'minimal' | 'default', nextPage: string) =>
  once(`snapshot-limit-2-next:${locked}`, async () => {
    const other = locked === 'minimal' ? 'default' : 'minimal';
    const between = await feedGet(SNAPSHOT, { query: { fields: other, limit: 1 } });
    const cont = await feedGet(SNAPSHOT, { query: { fields: other, page: nextPage } });
    const plain = cont.status === 400 ? await feedGet(SNAPSHOT, { query: { page: nextPage, limit: 2 } }) : undefined;
    return { between, cont, plain };
  });

/**
 * A walk begun with fields=`locked` continued with the other value: the continuation page keeps the locked value
 * (or refuses the conflicting one with 400). Seen by what minimal drops: absent on every item of a minimal walk,
 * present on every item of a default walk. A first page of the other value is requested in between.
 */
async function fieldsLocked(t: CheckTools, locked: 'minimal' | 'default'): Promise<void> {
  const other = locked === 'minimal' ? 'default' : 'minimal';
  const keeps = (i: unknown) => (locked === 'minimal' ? minimalDropped(i).length === 0 : minimalDropped(i).length === 2);
  // Pages of 2: any selected set of three items or more has a continuation page.
  const first = await smallFirstPage(locked);
  needsAccess(first, 'the snapshot');
  precondition(first.status === 200, `the snapshot answered ${first.status} to fields=${locked}&limit=2 (the checks citing its parameters judge that)`);
  const body = inputJson<Record<string, unknown>>(first, `GET ${first.url}`);
  // The lock is the page cursor's: a nextPage to follow is what it needs (whether hasMore agrees is feed-snapshot-paging's).
  precondition(typeof body.nextPage === 'string' && body.nextPage !== '', 'needs at least 3 selected items (a continuation page of limit=2)');
  precondition(
    listOf(body, profile().snapshot.list!).every(keeps),
    `the fields=${locked} first page does not show the value in its items (feed-snapshot-fields-minimal reports it), so a lock cannot be seen`,
  );
  const { between, cont, plain } = await continuedWithOther(locked, body.nextPage as string);
  t.cite(first, between, cont, ...(plain ? [plain] : []));
  if (cont.status === 400) {
    // Rejecting the conflicting value is a way to keep the lock (the problem format is other checks' business).
    t.observe('another fields value on a continuation page', 'rejected (400)');
    return;
  }
  expect(cont.status, 'continuation with another fields value: 400, or the locked value').toBe(200);
  t.observe('another fields value on a continuation page', 'ignored: the cursor locks it');
  for (const i of listOf(inputJson(cont, `GET ${cont.url}`), profile().snapshot.list!))
    if (!keeps(i))
      t.violation(
        `the continuation page of a fields=${locked} snapshot returned ${minimalDropped(i).join(' and ') || 'neither summary nor links.original'} (fields=${other} in the request won over the cursor): item ${idOf(i, profile().snapshot.id!)}`,
      );
}

describe.sequential('the snapshot procedure: fields locked on continuation pages', () => {
  for (const locked of ['minimal', 'default'] as const)
    check(
      {
        id: locked === 'minimal' ? 'feed-snapshot-fields-locked' : 'feed-snapshot-fields-locked-default',
        title: `on a continuation page the fields value is the one the page cursor was taken with (fields=${locked} first)`,
        requirements: ['feed-snapshot-fields-locked'],
      },
      (t) => fieldsLocked(t, locked),
    );
});

describe.sequential('the change feed', () => {
  check(
    {
      id: 'feed-changes-accepts-snapshot-cursor',
      title: 'the changes endpoint accepts the cursor a snapshot gave',
      requirements: ['feed-changes-accepts-snapshot-cursor'],
    },
    async (t) => {
      const s = await snapshotA();
      t.cite(s.pages[0]!.res);
      const res = await firstChangesA();
      t.cite(res);
      needsAccess(res, 'the changes endpoint');
      expect(res.status, `GET ${CHANGES} with the snapshot cursor`).toBe(200);
    },
  );

  check(
    {
      id: 'feed-changes-accepts-minimal-snapshot-cursor',
      title: 'the changes endpoint accepts the cursor a fields=minimal snapshot gave',
      requirements: ['feed-changes-accepts-snapshot-cursor'],
    },
    async (t) => {
      // The cursor is identical on every page (feed-snapshot-cursor-stable), so the first page's is the one a client
      // holds after the last page; the procedure names no fields value it is for.
      const first = await feedGet(SNAPSHOT, { query: { fields: 'minimal', limit: 1 } });
      t.cite(first);
      needsAccess(first, 'the snapshot');
      precondition(first.status === 200, `the snapshot answered ${first.status} to fields=minimal&limit=1 (the checks citing its parameters judge that)`);
      const cursor = inputJson<Record<string, unknown>>(first, `GET ${first.url}`).cursor;
      precondition(typeof cursor === 'string' && cursor !== '', 'the fields=minimal page gave no cursor (feed-snapshot-paging reports it)');
      const res = await feedGet(CHANGES, { query: { [profile().changes.cursorParam!]: cursor } });
      t.cite(res);
      needsAccess(res, 'the changes endpoint');
      expect(res.status, `GET ${CHANGES} with the cursor of a fields=minimal snapshot`).toBe(200);
    },
  );

  check(
    {
      id: 'feed-changes-reconcile',
      title: 'the snapshot plus the first changes call equals a fresh snapshot (items changed meanwhile excepted)',
      requirements: ['feed-changes-reconcile', 'feed-changes-accepts-snapshot-cursor'],
    },
    async (t) => {
      const a = await snapshotA();
      precondition(!a.failure, `${a.failure ?? ''} (feed-snapshot-paging judges that)`);
      precondition(a.complete, `the selected set has more than ${MAX_PAGES} pages; the procedure was not run to its end`);
      const first = await changesAfter(a.cursor, 10, await firstChangesA());
      t.cite(...a.pages.map((p) => p.res), ...first.res);
      const mirror = new Map(a.items);
      for (const c of first.changes) {
        if (c.op === 'remove') mirror.delete(c.id);
        else if (c.item && typeof c.item === 'object') mirror.set(c.id, c.item);
        else t.violation(`an ${c.op} change for ${c.id} carries no item to apply`);
      }
      t.observe('changes in the first call', String(first.changes.length));
      const b = await takeSnapshot({ fields: 'default' });
      const since = await changesAfter(first.cursor);
      t.cite(...b.pages.map((p) => p.res), ...since.res);
      // The changes not read (the first call's backlog, or those since it, past the pages read) would show as differences.
      if (!first.complete || !since.complete)
        return t.notApplicable('the change feed had more pages than the check reads (a busy feed): the comparison would miss changes');
      const movedOn = new Set(since.changes.map((c) => c.id));
      const differs: string[] = [];
      for (const id of new Set([...mirror.keys(), ...b.items.keys()])) {
        if (movedOn.has(id)) continue;
        if (JSON.stringify(mirror.get(id)) !== JSON.stringify(b.items.get(id))) differs.push(id);
      }
      if (differs.length) {
        t.violation(`after applying the first changes call, ${differs.length} item(s) differ from a fresh snapshot: ${differs.slice(0, 5).join(', ')}`);
      }
    },
  );
});
