/**
 * content-feed-service.md — Resources > Item; Endpoints > GET /api/v1/items: item fields, the window under each
 * `by` rule, keyset paging, and cursor rejection.
 */
import { randomBytes } from 'node:crypto';
import { AssertionViolation, check, expect, precondition, PreconditionFailed, checkGroup, type CheckTools } from '../../src/harness.js';
import { componentSchema, field, formatAjvErrors, validator } from '../../src/spec.js';
import {
  CLOCK_TOLERANCE_MS,
  compareLive,
  discoveryJson,
  inputJson,
  ListingNotServed,
  listOf,
  WINDOW_MS,
  effectiveTime,
  pagesOrder,
  expectProblem,
  feedGet,
  idOf,
  needsAccess,
  itemsPage as page,
  firstCursor,
  once,
  problemCode,
  profile,
  removedSince,
  sharedGet,
  takeSnapshotCursor,
  targetNow,
  titleWords,
  walkItems as walk,
  type FeedItem,
  type ItemsPage,
  type Query,
} from '../../src/feed.js';
import type { HttpResponse } from '../../src/http.js';

/** A broad listing (mode=all, 100 items), shared by the item-field checks. */
const broadListing = () => once('items-broad', () => page({ mode: 'all', limit: 100 }));

checkGroup('item fields', () => {
  check({ id: 'feed-items-timestamps', title: 'every item carries publishedAt and discoveredAt', requirements: ['feed-item-timestamps'] }, async (t) => {
    const { res, items } = await broadListing();
    t.cite(res);
    precondition(items.length > 0, 'needs at least one item in the 7d window (mode=all)');
    const schema = (await componentSchema('feed', 'Item')) as { properties: Record<string, object> };
    const timestamps = validator({
      type: 'object',
      required: ['publishedAt', 'discoveredAt'],
      properties: { publishedAt: schema.properties.publishedAt!, discoveredAt: schema.properties.discoveredAt! },
    });
    for (const item of items) if (!timestamps(item)) t.violation(`item ${idOf(item)}: ${formatAjvErrors(timestamps.errors)}`);
    const nulls = items.filter((i) => i.publishedAt === null).length;
    t.observe('items with publishedAt null', String(nulls));
  });

  check(
    { id: 'feed-items-original-link', title: 'every item links its original article in links.original', requirements: ['feed-item-original-link'] },
    async (t) => {
      const { res, items } = await broadListing();
      t.cite(res);
      precondition(items.length > 0, 'needs at least one item in the 7d window (mode=all)');
      const schema = (await componentSchema('feed', 'Item')) as { properties: Record<string, object> };
      const links = validator({ type: 'object', required: ['links'], properties: { links: schema.properties.links! } });
      for (const item of items)
        if (!links(item)) t.violation(`item ${idOf(item)} has no original-article URL in links.original: ${formatAjvErrors(links.errors)}`);
    },
  );
});

/**
 * The pages of a window to check, reaching its tail within a bounded number of requests: the listing itself while
 * it is short (up to BROAD_PAGES pages of 100), else a narrower query (one category the listing shows, rarest
 * first) walked to its end, so the oldest items of the window, where window defects show, are seen on a busy feed.
 */
const BROAD_PAGES = 4;
const WINDOW_REQUESTS = 10;
async function windowPages(query: Query): Promise<{ pages: ItemsPage[]; reach: string }> {
  const broad = await walk({ ...query, limit: 100 }, BROAD_PAGES);
  const seen = broad.flatMap((p) => p.items);
  if (!broad[broad.length - 1]!.hasMore) return { pages: broad, reach: `the whole window (${seen.length} items)` };
  const counts = new Map<string, number>();
  for (const item of seen) if (typeof item.category === 'string') counts.set(item.category, (counts.get(item.category) ?? 0) + 1);
  let left = WINDOW_REQUESTS - broad.length;
  for (const [category] of [...counts].sort((a, b) => a[1] - b[1])) {
    if (left <= 0) break;
    const narrow = await walk({ ...query, category, limit: 100 }, left);
    left -= narrow.length;
    const n = narrow.flatMap((p) => p.items).length;
    if (!narrow[narrow.length - 1]!.hasMore)
      return {
        pages: [...broad, ...narrow],
        reach: `the newest ${seen.length} items, then the window's tail through category=${category} (all ${n} of its items)`,
      };
  }
  return { pages: broad, reach: `the newest ${seen.length} items only: no narrower query reached the window's tail within ${WINDOW_REQUESTS} requests` };
}

/**
 * The pages of a window, once per window, rule and mode (the completeness checks read them again): mode=all, the
 * whole window, unless `mode` is 'default': the default listing asked with no mode, window or by.
 */
const windowOf = (window: string, by: string, mode = 'all') =>
  once(`window:${window}:${by}:${mode}`, () => windowPages(mode === 'default' ? {} : { mode, window, by }));

/**
 * "opaque keyset cursor bound to the query": the walks the window checks make (mode=all, limit=100, each window and
 * timestamp rule, a category too when the window is long) follow nextCursor with the query it came with. A cursor
 * the service had just handed out that is refused with a client error (once more after the restart invalid_cursor
 * allows) breaks paging under that query; the window checks themselves are left undecided by it.
 */
/** A continuation page a walk needed and did not get, as the paging rule's failure: following nextCursor is that rule. */
function followingCursor(e: PreconditionFailed): AssertionViolation {
  return new AssertionViolation(
    `following nextCursor: ${e instanceof ListingNotServed ? e.request : e.message.replace(/^setup error \(precondition\): /, '')}`,
  );
}

checkGroup('the cursor of each walked listing is followed', () => {
  check(
    {
      id: 'feed-items-cursor-followed',
      title: 'window=24h and 7d, by=timeline and published: the nextCursor of each page of the walks is served with the query it came with',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      let followed = 0;
      for (const window of ['24h', '7d'])
        for (const by of ['timeline', 'published']) {
          const walked = await windowOf(window, by).catch((e: unknown) => {
            const refused = e instanceof ListingNotServed && e.query.cursor !== undefined && e.status >= 400 && e.status < 500 && e.status !== 429;
            throw refused ? followingCursor(e) : e;
          });
          t.cite(...walked.pages.map((p) => p.res));
          followed += walked.pages.filter((p) => new URL(p.res.url).searchParams.has('cursor')).length;
        }
      if (followed === 0) return t.notApplicable('each window fits one page of 100: no cursor to follow');
      t.observe('pages reached by a cursor', String(followed));
    },
  );
});

checkGroup('the window under each timestamp rule', () => {
  const cases = [
    { window: '24h', by: 'timeline', reqs: ['feed-items-by-timeline'] },
    { window: '7d', by: 'timeline', reqs: ['feed-items-by-timeline', 'feed-items-window-7d'] },
    { window: '24h', by: 'published', reqs: ['feed-items-by-published'] },
    { window: '7d', by: 'published', reqs: ['feed-items-by-published', 'feed-items-window-7d'] },
    // The default listing, asked as a feed or a widget asks it (no mode, window or by: selected, 7d, timeline), walked
    // on its own: its tail is not the mode=all walk's.
    { window: '7d', by: 'timeline', mode: 'default', reqs: ['feed-items-by-timeline', 'feed-items-window-7d'] },
  ] as const;
  for (const c of cases) {
    const mode = 'mode' in c ? c.mode : undefined;
    check(
      {
        id: mode ? `feed-items-window-${mode}-listing` : `feed-items-window-${c.window}-${c.by}`,
        title: `${mode ? 'the default listing (no mode, window or by: selected, 7d, timeline)' : `window=${c.window}&by=${c.by}`}: every item's ${c.by === 'timeline' ? 'timeline time (publication time if back-filled > 72 h, else discovery)' : 'publication time'} lies in the window`,
        requirements: [...c.reqs],
      },
      async (t) => {
        const { pages, reach } = await windowOf(c.window, c.by, mode);
        t.cite(...pages.map((p) => p.res));
        const items = pages.flatMap((p) => p.items);
        precondition(
          items.length > 0,
          `the target listed no items for ${mode ? 'the default listing' : `window=${c.window}&by=${c.by}`} (needs an item in the last ${c.window})`,
        );
        t.observe('items checked', reach);
        t.observe('now', `${targetNow(pages[0]!.res).source}; an item counts as outside only beyond ${CLOCK_TOLERANCE_MS / 60_000} min past an edge`);
        const undated: string[] = [];
        const unplaced: string[] = [];
        for (const p of pages) {
          const { now } = targetNow(p.res);
          for (const item of p.items) {
            let at = effectiveTime(item, c.by);
            let reading = `counts at ${at === undefined ? '' : new Date(at).toISOString()} under by=${c.by}`;
            if (at === undefined && c.by === 'published' && item.publishedAt === null) {
              // The document does not say where an item without a publication time goes under by=published:
              // leaving it out and placing it by discoveredAt (the real engine) are both readings of it.
              undated.push(idOf(item));
              at = effectiveTime(item, 'timeline');
              reading = `has no publication time and is placed by its discoveredAt under by=published`;
            }
            if (at === undefined) {
              // Missing or unreadable timestamps are the timestamps check's finding; here such an item cannot be placed.
              unplaced.push(idOf(item));
              continue;
            }
            if (at < now - WINDOW_MS[c.window]! - CLOCK_TOLERANCE_MS || at > now + CLOCK_TOLERANCE_MS) {
              t.violation(
                `item ${idOf(item)} (publishedAt ${String(item.publishedAt)}, discoveredAt ${String(item.discoveredAt)}) ${reading}: outside window=${c.window} ending ${new Date(now).toISOString()}`,
              );
            }
          }
        }
        if (unplaced.length) t.observe('items without a readable time to place them by (left to feed-items-timestamps)', unplaced.slice(0, 10).join(', '));
        precondition(unplaced.length < items.length, `no listed item carries a readable time to place it by under by=${c.by}`);
        if (c.by === 'published') {
          // Placed by discoveredAt is one reading of a point the document leaves open; "none listed" decides nothing.
          const question = 'items without a publication time (publishedAt null) under by=published';
          if (undated.length) t.reading(question, `${undated.length} listed, each placed by its discoveredAt (held to the window by that time)`);
          else t.observe(question, 'none listed (left out, or the window holds none)');
        }
      },
    );
  }
});

/**
 * The rule's time is the one the list uses: each page (the first and every continuation page of the walk) lists
 * its items in the order of that time — newest first, or oldest first (the document names no direction: the one
 * seen is recorded), the same on every page. Items without a time under the rule (publishedAt null under
 * by=published, read two ways) are not placed.
 */
checkGroup('the order under each timestamp rule', () => {
  const cases = [
    { window: '24h', by: 'timeline', reqs: ['feed-items-by-timeline'] },
    { window: '7d', by: 'timeline', reqs: ['feed-items-by-timeline'] },
    { window: '24h', by: 'published', reqs: ['feed-items-by-published'] },
    { window: '7d', by: 'published', reqs: ['feed-items-by-published'] },
  ] as const;
  for (const c of cases)
    check(
      {
        id: `feed-items-order-${c.window}-${c.by}`,
        title: `window=${c.window}&by=${c.by}: each page lists its items in the order of their ${c.by === 'timeline' ? 'timeline time' : 'publication time'}`,
        requirements: [...c.reqs],
      },
      async (t) => {
        const { pages } = await windowOf(c.window, c.by);
        t.cite(...pages.map((p) => p.res));
        const order = pagesOrder(
          pages.map((p) => p.items),
          c.by,
        );
        const broken = order.broken;
        if (broken)
          return t.violation(
            `page ${broken.page + 1}: ${broken.a.id} (${new Date(broken.a.at).toISOString()}) then ${broken.b.id} (${new Date(broken.b.at).toISOString()}) goes against the order of the items before it: not ordered by the ${c.by} time`,
          );
        precondition(order.pairs > 0, `needs two listed items with different ${c.by} times in window=${c.window}`);
        t.reading(`the order under by=${c.by}`, order.direction!);
      },
    );
});

/**
 * The other side of the window rule: an item whose time under the rule lies inside the 24h window is listed there.
 * The items come from the 7d listing of the same rule (whatever of it was walked); the 24h listing must have been
 * walked to its end, so that "not listed" is known. Items within the clock tolerance of the edge, and items without
 * a publication time under by=published (their place is read two ways), are not judged.
 */
checkGroup('the window holds every item whose time lies in it', () => {
  for (const c of [
    { by: 'timeline', reqs: ['feed-items-by-timeline'] },
    { by: 'published', reqs: ['feed-items-by-published'] },
  ] as const) {
    check(
      {
        id: `feed-items-window-24h-${c.by}-complete`,
        title: `window=24h&by=${c.by} lists every item whose ${c.by === 'timeline' ? 'timeline time' : 'publication time'} lies in the last 24 hours`,
        requirements: [...c.reqs],
      },
      async (t) => {
        const day = await windowOf('24h', c.by);
        const week = await windowOf('7d', c.by);
        t.cite(...day.pages.map((p) => p.res), ...week.pages.map((p) => p.res));
        const last = day.pages[day.pages.length - 1]!;
        if (day.pages.length > BROAD_PAGES || last.hasMore)
          t.notApplicable(`the 24h listing has more than ${BROAD_PAGES * 100} items: it was not walked to its end, so an item missing from it cannot be told`);
        const listed = new Set(day.pages.flatMap((p) => p.items).map((i) => idOf(i)));
        const insideOf = (items: FeedItem[], now: number) =>
          items.filter((item) => {
            const at = effectiveTime(item, c.by);
            // Only an item the target held when the 24h listing was taken: the feed grows while the run reads it.
            const discovered = typeof item.discoveredAt === 'string' ? Date.parse(item.discoveredAt) : NaN;
            const held = Number.isFinite(discovered) && discovered < now - CLOCK_TOLERANCE_MS;
            return held && at !== undefined && at > now - WINDOW_MS['24h']! + CLOCK_TOLERANCE_MS && at < now - CLOCK_TOLERANCE_MS;
          });
        const inside = insideOf(
          week.pages.flatMap((p) => p.items),
          targetNow(day.pages[0]!.res).now,
        );
        t.observe('items of the 7d listing well inside the last 24h', String(inside.length));
        precondition(inside.length > 0, `the 7d listing (by=${c.by}) showed no item well inside the last 24 hours to look for`);
        let missing = inside.filter((i) => !listed.has(idOf(i)));
        if (missing.length) {
          // A live feed gains items with old times (back-filled) and loses items between two reads: the two listings
          // are read again, the 24h one first, and an item counts as missing only when the new 7d listing, read after
          // the new 24h one, still shows it well inside the window and neither 24h listing lists it.
          const day2 = await walk({ mode: 'all', window: '24h', by: c.by, limit: 100 }, BROAD_PAGES + 1);
          const week2 = await windowPages({ mode: 'all', window: '7d', by: c.by });
          t.cite(...day2.map((p) => p.res), ...week2.pages.map((p) => p.res));
          const listed2 = new Set(day2.flatMap((p) => p.items).map((i) => idOf(i)));
          const still = new Set(
            insideOf(
              week2.pages.flatMap((p) => p.items),
              targetNow(day2[0]!.res).now,
            ).map((i) => idOf(i)),
          );
          const complete2 = day2.length <= BROAD_PAGES && !day2[day2.length - 1]!.hasMore;
          const gone = missing.filter((i) => !still.has(idOf(i)) || listed2.has(idOf(i)));
          if (gone.length) t.observe('missing at first, then listed or no longer in the window (changed between reads)', gone.map((i) => idOf(i)).join(', '));
          if (!complete2)
            t.notApplicable(
              `the 24h listing read again had more than ${BROAD_PAGES * 100} items: whether the items missing at first are missing still cannot be told`,
            );
          missing = missing.filter((i) => !gone.includes(i));
        }
        if (missing.length)
          t.violation(
            `${missing.length} of ${inside.length} items whose time under by=${c.by} lies in the last 24 hours are missing from window=24h&by=${c.by} (${listed.size} items, walked to its end), e.g. ${missing
              .slice(0, 3)
              .map((i) => `${idOf(i)} (publishedAt ${String(i.publishedAt)}, discoveredAt ${String(i.discoveredAt)})`)
              .join('; ')}`,
          );
      },
    );
  }
});

// One large page (the documented maximum, 100) is the reference listing; a walk of small pages must give its items,
// in its order. The small page size comes from what the target holds: about five pages over a short listing, pages
// of 20 over the first 100 items of a long one. The feed is live: items arrive (at the top, or back-filled further
// down) and leave (deselected, or out of the window) while the walk goes on, so a listing taken after the walk tells
// which differences are the feed moving and which are the walk's.
/**
 * Of the items a walk missed that the listing shows before and after it, those the changes after `sync` (a sync
 * cursor from before the walk) do not list as removed: the others left the selection during the walk and came back.
 */
async function notReturned(
  t: CheckTools,
  sync: { cursor: string } | undefined,
  missed: string[],
  how = { what: 'the walk missed', seen: 'items that left the selection during the walk and came back (removed in the changes feed)' },
): Promise<string[]> {
  if (!missed.length || !sync) return missed;
  const removed = await removedSince(sync.cursor, missed);
  t.cite(...removed.res);
  const last = removed.res.at(-1)!;
  precondition(
    last.status === 200,
    `${how.what} ${missed.join(', ')}; whether they left the selection meanwhile is not known: the changes feed answered ${last.status}`,
  );
  precondition(
    removed.complete || missed.every((id) => removed.ids.has(id)),
    `${how.what} ${missed.join(', ')}; whether they left the selection meanwhile is not known: the changes since the walk began fill more than ${removed.res.length} pages`,
  );
  const back = missed.filter((id) => removed.ids.has(id));
  if (back.length) t.observe(how.seen, back.slice(0, 10).join(', '));
  return missed.filter((id) => !removed.ids.has(id));
}

/**
 * Pages of `size` from the first, following nextCursor until the walk has delivered every item of `reference` it
 * can, or a page past them: items that arrived at the top meanwhile take the places of the last ones.
 */
async function walkListing(
  t: CheckTools,
  reference: string[],
  size: number,
): Promise<{ walked: string[]; pages: number; ended: boolean; items: Map<string, FeedItem> }> {
  const inReference = new Set(reference);
  const walked: string[] = [];
  const items = new Map<string, FeedItem>();
  let cursor: string | null = null;
  let pages = 0;
  let ended = false;
  const covered = () => walked.filter((id) => inReference.has(id)).length;
  while (covered() < reference.length && walked.length < reference.length + size && pages < 100) {
    // Following nextCursor is this check's rule: a continuation page that is not served fails it.
    const p: ItemsPage = await page(cursor ? { limit: size, cursor } : { limit: size }).catch((e: unknown) => {
      throw cursor && e instanceof PreconditionFailed ? followingCursor(e) : e;
    });
    t.cite(p.res);
    pages++;
    walked.push(...p.items.map((i) => idOf(i)));
    for (const i of p.items) items.set(idOf(i), i);
    if (!p.hasMore || !p.next) {
      ended = true;
      break;
    }
    cursor = p.next;
  }
  return { walked, pages, ended, items };
}

/**
 * The page of 100 leads on from its own last item: where the walk showed an item right after it, the page its
 * nextCursor gives holds that item (unless it left the selection meanwhile: removed in the changes feed). A page that
 * drops its last row while its cursor anchors on it loses that row from every walk at its size.
 */
async function pageAfterTheLarge(
  t: CheckTools,
  large: ItemsPage,
  walk: { walked: string[]; items: Map<string, FeedItem> },
  size: number,
  sync: { cursor: string } | undefined,
): Promise<void> {
  const { walked, items: walkedItems } = walk;
  const last = large.items.length ? idOf(large.items.at(-1)!) : undefined;
  if (!large.hasMore || !large.next || last === undefined || !walked.includes(last)) return;
  const following = walked[walked.indexOf(last) + 1];
  // Without a sync cursor from before the walk, a row that left the selection meanwhile cannot be told from a skipped one.
  if (following === undefined || !sync) return;
  // The page after it, as a client asks it now. Not served (the anchor may have left the 7d window meanwhile, which
  // answers invalid_cursor; any other refusal is the cursor checks'): nothing to judge here.
  const cont = await page({ limit: 100, cursor: large.next }).catch((e: unknown) => {
    if (e instanceof PreconditionFailed) return undefined;
    throw e;
  });
  if (!cont) return t.observe('the page after the page of 100', 'not served when asked after the walk: not judged');
  t.cite(cont.res);
  if (cont.items.some((i) => idOf(i) === following)) return;
  // A row at the window's tail may have aged out of the 7d window since the walk showed it.
  const shown = walkedItems.get(following);
  const at = shown ? effectiveTime(shown, 'timeline') : undefined;
  if (at === undefined || at < targetNow(cont.res).now - WINDOW_MS['7d']! + CLOCK_TOLERANCE_MS)
    return t.observe('the page after the page of 100', `${following} is at the 7d window's tail (or undated): not judged`);
  const skipped = await notReturned(t, sync, [following], {
    what: 'the page after the page of 100 (its nextCursor) left out',
    seen: 'an item that left the selection between the page of 100 and the page after it (removed in the changes feed)',
  });
  if (skipped.length)
    t.violation(
      `the page its nextCursor gives after the page of 100 does not hold ${following}, which the walk of ${size} showed right after that page's last item ${last}: the cursor skips a row at the page boundary`,
    );
}

checkGroup('keyset paging', () => {
  check(
    {
      id: 'feed-items-paging-no-duplicates',
      title: 'following the cursor while hasMore yields every item of one listing exactly once, in its order',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      // A sync cursor taken just before the walk (notReturned): the changes after it are the walk's own.
      const sync = await takeSnapshotCursor({ fields: 'default', limit: 1 }).catch((e: unknown) => {
        if (e instanceof PreconditionFailed) return undefined; // no cursor: a missed item stays the paging's
        throw e;
      });
      const large = await page({ limit: 100 });
      t.cite(large.res);
      const reference = large.items.map((i) => idOf(i));
      precondition(reference.length > 1, 'needs at least 2 selected items in the 7d window (the default listing)');
      const inReference = new Set(reference);
      const size = large.hasMore ? 20 : Math.max(1, Math.ceil(reference.length / 5));
      const { walked, pages, ended, items: walkedItems } = await walkListing(t, reference, size);
      const after = await page({ limit: 100 });
      t.cite(after.res);
      const listedAfter = new Set(after.items.map((i) => idOf(i)));
      t.observe(
        'walk',
        `${pages} page(s) of ${size} against one page of 100 (${reference.length} items${large.hasMore ? ', the newest of more' : ', the whole listing'})`,
      );
      const dupes = walked.filter((id, i) => walked.indexOf(id) !== i);
      if (dupes.length) t.violation(`pages repeat items: ${[...new Set(dupes)].join(', ')}`);
      // The reference items the walk had to deliver: those before the last one it delivered, and, when the walk's
      // listing ended (hasMore false), all of them, whether the page of 100 held the whole listing or its newest rows.
      // One that is missing is the walk's fault unless it left the listing meanwhile.
      const walkedSet = new Set(walked);
      const lastCovered = Math.max(...reference.map((id, i) => (walkedSet.has(id) ? i : -1)));
      if (lastCovered < 0 && reference.some((id) => listedAfter.has(id)))
        t.violation(`the walk (${walked.length} items) delivered none of the ${reference.length} items of the listing`);
      const due = ended ? reference : reference.slice(0, lastCovered + 1);
      const missing = due.filter((id) => !walkedSet.has(id));
      const left = missing.filter((id) => !listedAfter.has(id));
      if (left.length) t.observe('items that left the listing during the walk', left.slice(0, 10).join(', '));
      const lost = await notReturned(
        t,
        sync,
        missing.filter((id) => listedAfter.has(id)),
      );
      if (lost.length) {
        const how = ended && walked.length < reference.length ? `hasMore turned false after ${walked.length} items: ` : '';
        t.violation(`${how}the walk never delivered ${lost.length} item(s) the listing still shows: ${lost.slice(0, 10).join(', ')}`);
      }
      // Items of the walk the reference did not have: new items (listed afterwards too), or the walk's own.
      const lastIndex = walked.lastIndexOf(reference[lastCovered]!);
      const extra = walked.slice(0, lastIndex + 1).filter((id) => !inReference.has(id));
      const arrived = extra.filter((id) => listedAfter.has(id));
      // The listing after the walk reaches no further than its last item: an item that arrived behind that (a row
      // back-filled far down, while new rows at the head pushed the page of 100 up) is not expected in it.
      const reach = after.hasMore ? walked.indexOf(idOf(after.items.at(-1)!)) : -1;
      const beyond = (id: string) => reach >= 0 && walked.indexOf(id) > reach;
      // An item that arrived during the walk and was taken out again before the listing after it (a live feed withdraws
      // new items too) is one the changes after the walk's sync cursor list as removed (notReturned excuses those).
      const unlisted = extra.filter((id) => !listedAfter.has(id) && !beyond(id));
      const foreign = unlisted.length
        ? await notReturned(t, sync, unlisted, {
            what: 'the walk delivered, and no listing before or after it shows,',
            seen: 'items that arrived during the walk and left the selection before its end (removed in the changes feed)',
          })
        : [];
      if (arrived.length) t.observe('items that arrived during the walk', `${arrived.length} (${arrived.slice(0, 5).join(', ')})`);
      if (foreign.length) t.violation(`the walk delivered ${foreign.length} item(s) no listing before or after it shows: ${foreign.slice(0, 10).join(', ')}`);
      await pageAfterTheLarge(t, large, { walked, items: walkedItems }, size, sync);
      // The listing's order: the reference items the walk delivered come in the reference's order.
      const order = walked.filter((id) => inReference.has(id));
      expect(order, `${pages} pages of ${size} give the items of one listing of ${reference.length} in its order`).toEqual(
        reference.filter((id) => walkedSet.has(id)),
      );
    },
  );
});

checkGroup('a search within a category', () => {
  check(
    {
      id: 'feed-items-q-within-category',
      title: 'a search (q) within a category is served (200), every row of that category',
      requirements: ['feed-items-category-selects'],
    },
    async (t) => {
      // Two documented parameters at once, as a search box on a category page sends them: a word of an item's title
      // (three letters or more) with that item's category. Each row the search finds is of the category; whether the
      // item itself is found is the search's own matching, which the document does not define.
      const { res, items } = await broadListing();
      t.cite(res);
      const cat = profile().items.category;
      precondition(cat, 'the deployment profile names no category field of an item');
      const pick = items
        .map((i) => ({
          category: field(i, cat),
          word: titleWords(i)[0],
        }))
        .find((x): x is { category: string; word: string } => typeof x.category === 'string' && x.category.trim() !== '' && x.word !== undefined);
      precondition(pick, 'needs an item with a category and a word of three letters or more in its title (mode=all, 7d)');
      const found = await feedGet('/api/v1/items', { query: { mode: 'all', q: pick.word, category: pick.category } });
      t.cite(found);
      t.observe('search', `q=${pick.word}&category=${pick.category}: ${found.status}`);
      needsAccess(found, 'the search within a category');
      if (found.status !== 200) {
        // The category alone refused too: a value the deployment does not list (the category rules judge that).
        const alone = await feedGet('/api/v1/items', { query: { mode: 'all', category: pick.category } });
        t.cite(alone);
        if (alone.status !== 200) return t.notApplicable(`category=${pick.category} alone answered ${alone.status} (the category checks judge that)`);
      }
      expect(found.status, `mode=all&q=${pick.word}&category=${pick.category}`).toBe(200);
      const rows = listOf(inputJson(found, `GET ${found.url}`), profile().items.list!);
      // Compared without case, as the category rule reads a value.
      const same = (v: unknown) => typeof v === 'string' && v.toLowerCase() === pick.category.toLowerCase();
      const other = rows.filter((r) => field(r, cat) !== undefined && !same(field(r, cat)));
      if (other.length) t.violation(`${other.length} of ${rows.length} rows are of another category, e.g. ${idOf(other[0])}: ${String(field(other[0], cat))}`);
    },
  );
});

/** A search word between whitespace of each kind a trim must remove: ASCII space and tab, U+3000, U+00A0. */
const PADDED = (word: string) => ` \u3000${word}\t\u00a0 `;

checkGroup('the query a listing is given', () => {
  check(
    {
      id: 'feed-items-q-trimmed-search',
      title: 'q is trimmed for the search itself: "word" between spaces, a tab, U+3000 and U+00A0 finds what "word" finds',
      requirements: ['feed-items-q-length'],
    },
    async (t) => {
      // A word the feed itself shows (the first one of three letters or more in a title), searched with and without
      // surrounding whitespace: the two listings must be one (compareLive tells a moving feed from a difference). The
      // whitespace is Unicode's (White_Space): the ideographic space and the no-break space as well as ASCII's.
      const { res, items } = await broadListing();
      t.cite(res);
      const word = items.flatMap((i) => titleWords(i))[0];
      precondition(word, 'needs an item whose title has a word of three letters or more (mode=all, 7d)');
      const ids = (r: HttpResponse) =>
        r.status === 200 ? JSON.stringify(listOf(inputJson(r, `GET ${r.url}`), profile().items.list!).map((i) => idOf(i))) : `status ${r.status}`;
      const cmp = await compareLive(
        (c) => feedGet('/api/v1/items', { query: { mode: 'all', q: word }, ...c }),
        (c) => feedGet('/api/v1/items', { query: { mode: 'all', q: PADDED(word) }, ...c }),
        ids,
      );
      t.cite(...cmp.responses);
      t.observe('word', word);
      precondition(cmp.first.status === 200, `q=${word} answered ${cmp.first.status} (the q range checks judge that)`);
      precondition(cmp.outcome !== 'moving', 'the listing changed between every two requests: the feed changes faster than the comparison can finish');
      expect(ids(cmp.second), `q=${JSON.stringify(PADDED(word))} lists what q=${word} lists`).toBe(ids(cmp.first));
    },
  );

  check(
    {
      id: 'feed-items-q-markup',
      title: 'a q with markup and quotes, as a search box passes them, is searched (200) or refused as a problem response',
      requirements: ['feed-problem-json'],
    },
    async (t) => {
      // In the q rule (2 to 200 code points), so no 400 is due; the conditions of 403 are not shown (an edge in
      // front may refuse it), but every failed response is a problem response.
      const q = `<em>"ai"</em> & 'ai'`;
      const res = await feedGet('/api/v1/items', { query: { q } });
      t.cite(res);
      const type = (res.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      t.observe(`q=${q}`, `${res.status} ${type}`);
      if (res.status >= 400) expect(type, `the content type of the ${res.status} to q=${q}`).toBe('application/problem+json');
    },
  );

  check(
    {
      id: 'feed-items-continuation-limit',
      title: 'a continuation page honours the limit of its query, as the first page does',
      requirements: ['feed-items-limit-range'],
    },
    async (t) => {
      const first = await page({ limit: 3 });
      t.cite(first.res);
      precondition(first.next, 'needs more than 3 selected items in the 7d window (a continuation page of limit=3)');
      const next = await page({ limit: 3, cursor: first.next });
      t.cite(next.res);
      t.observe('page sizes', `${first.items.length} then ${next.items.length}`);
      expect(first.items.length, 'the first page of limit=3').toBeLessThanOrEqual(3);
      expect(next.items.length, 'the continuation page of limit=3').toBeLessThanOrEqual(3);
    },
  );
});

checkGroup('the default limit on a continuation page', () => {
  check(
    {
      id: 'feed-items-continuation-default-limit',
      title: 'a continuation page of a first page without limit, asked without limit, is the one limit=50 gives',
      requirements: ['feed-items-defaults'],
    },
    async (t) => {
      // Without limit on both pages the default (50) holds on either reading: the default applies to each request,
      // or the cursor keeps its first page's limit, which was the default too.
      const first = await page({});
      t.cite(first.res);
      // A deployment whose 7d window holds one default page or less has no continuation page to ask.
      if (!first.next) return t.notApplicable('the default listing has one page (50 selected items or fewer in the 7d window): no continuation page');
      const cursor = first.next;
      const ids = (r: HttpResponse) =>
        r.status === 200 ? JSON.stringify(listOf(inputJson(r, `GET ${r.url}`), profile().items.list!).map((i) => idOf(i))) : `status ${r.status}`;
      const cmp = await compareLive(
        (c) => feedGet('/api/v1/items', { query: { cursor }, ...c }),
        (c) => feedGet('/api/v1/items', { query: { cursor, limit: 50 }, ...c }),
        ids,
      );
      t.cite(...cmp.responses);
      precondition(
        cmp.first.status === 200 && cmp.second.status === 200,
        `the continuation page answered ${cmp.first.status} and ${cmp.second.status} (the cursor checks judge that)`,
      );
      precondition(
        cmp.outcome !== 'moving',
        'the continuation page changed between every two requests: the feed changes faster than the comparison can finish',
      );
      const n = (r: HttpResponse) => listOf(inputJson(r, `GET ${r.url}`), profile().items.list!).length;
      t.observe('page sizes', `${n(cmp.first)} without limit, ${n(cmp.second)} with limit=50`);
      // A page of limit=50 holding more is no measure of the default: the limit's own checks judge it.
      precondition(n(cmp.second) <= 50, `the continuation page of limit=50 held ${n(cmp.second)} items (feed-items-limit-range judges that)`);
      expect(ids(cmp.first), 'the continuation page without limit lists what limit=50 lists').toBe(ids(cmp.second));
    },
  );
});

const expectInvalidCursor = (res: HttpResponse) => {
  needsAccess(res, 'the listing with a cursor');
  const body = expectProblem(res, 400);
  expect(problemCode(body), `problem code (profile field ${profile().problem.code})`).toBe('invalid_cursor');
};

checkGroup('cursor rejection', () => {
  check(
    { id: 'feed-items-cursor-garbage', title: 'a garbage cursor is rejected with 400 invalid_cursor', requirements: ['feed-items-cursor-bound'] },
    async (t) => {
      // With the validator the plain listing gave (a client always sends If-None-Match, and a poller of the listing holds
      // that one): a refused cursor has no representation a 304 could confirm (RFC 9110 13.2.1).
      const plain = await sharedGet('/api/v1/items');
      const etag = plain.header('etag');
      if (etag) t.observe('asked', `with If-None-Match: ${etag} (the plain listing's ETag)`);
      expectInvalidCursor(
        await feedGet('/api/v1/items', {
          query: { cursor: `conformance${randomBytes(18).toString('base64url')}` },
          ...(etag ? { headers: { 'if-none-match': etag } } : {}),
        }),
      );
    },
  );

  check(
    {
      id: 'feed-items-cursor-other-query',
      title: 'a cursor sent with another query is rejected with 400 invalid_cursor',
      requirements: ['feed-items-cursor-bound'],
    },
    async (t) => {
      // The run's first cursor is taken here, first, while the run is young (with concurrent checks a request made
      // later in a check waits behind the others' queue): feed-items-cursor-still-valid reuses it at the end.
      const early = await firstCursor().catch(() => undefined);
      // A cursor of an explicit by=timeline, window=7d, mode=selected query, sent with another by, window, category, mode
      // or q (a documented value): the queries differ whatever the defaults, and the cursor is bound to its whole query.
      const issued = { limit: 5, by: 'timeline', window: '7d', mode: 'selected' };
      const p = await page(issued);
      t.cite(p.res, ...(early ? [early.res] : []));
      precondition(p.next, 'needs more than 5 selected items in the 7d window (a cursor to send with another query)');
      for (const other of [{ by: 'published' }, { window: '24h' }, { category: 'review' }, { mode: 'all' }, { q: 'conformance' }] as Record<string, string>[]) {
        const res = await feedGet('/api/v1/items', { query: { ...issued, ...other, cursor: p.next } });
        // Refused as a cursor (400 invalid_cursor): so it is. Any other answer is judged once the other query is shown
        // served without a cursor (the control), so a refusal of that query itself is not read as the cursor's.
        if (res.status === 400 && field(discoveryJson(res), profile().problem.code!) === 'invalid_cursor') continue;
        await page({ ...issued, ...other });
        expectInvalidCursor(res);
      }
    },
  );
});

checkGroup('a cursor whose anchor left the window', () => {
  check(
    {
      id: 'feed-items-cursor-outside-window',
      title: 'a cursor whose anchor is older than 24 h, sent with window=24h, is rejected with 400 invalid_cursor; the first page then works',
      requirements: ['feed-items-cursor-window'],
    },
    async (t) => {
      // A cursor anchored on an item older than 24 h: the 7d listing's page that ends on such an item. The page
      // size is chosen from what the target holds: the first page of 100 shows where the first item older than
      // 24 h sits, and a page of exactly that many items ends on it (one more item behind it gives the cursor).
      const OLD = WINDOW_MS['24h']! + 2 * CLOCK_TOLERANCE_MS;
      // Control: window=24h is served without a cursor, so a refusal below is about the cursor.
      await page({ limit: 100, window: '24h' });
      const isOld = (item: FeedItem | undefined, res: HttpResponse) => {
        const at = item ? effectiveTime(item, 'timeline') : undefined;
        return at !== undefined && at < targetNow(res).now - OLD;
      };
      let anchored: string | null = null;
      const first = await page({ limit: 100 });
      t.cite(first.res);
      // Items may arrive at the top meanwhile and push the old ones down: a page a few items longer still ends on an
      // old one (every item after the first old one is older), and never the whole rest of the listing (one item at
      // least stays behind it, for the cursor). Where more arrived than that, the short page shows where the old ones
      // now start, and the walk goes on from there; where the page holds none, pages of 100 are read on.
      const SLACK = 3;
      let p = first;
      let start: string | undefined;
      let how = 'a page of 100 ending on an item older than 24 h';
      for (let i = 0; !anchored && i < 8; i++) {
        const k = p.items.findIndex((item) => isOld(item, p.res));
        if (k >= 0 && k < p.items.length - 1) {
          const limit = Math.min(k + 1 + SLACK, p.items.length - 1);
          p = await page({ limit, ...(start ? { cursor: start } : {}) });
          t.cite(p.res);
          how = `a page with limit=${limit}${start ? ' (a continuation)' : ''}, ending on an item older than 24 h`;
          if (isOld(p.items[p.items.length - 1], p.res) && p.next) anchored = p.next;
          continue;
        }
        if (isOld(p.items[p.items.length - 1], p.res) && p.next) anchored = p.next;
        else if (p.next) {
          start = p.next;
          p = await page({ limit: 100, cursor: start });
          t.cite(p.res);
          how = 'a later page of 100 ending on an item older than 24 h';
        } else break;
      }
      if (anchored) t.observe('anchor', how);
      // A busy feed whose pages read here end above the 24h line still: its anchor lies deeper than this walk goes.
      if (!anchored && p.next)
        return t.notApplicable('the pages read (eight at most) all ended on items of the last 24 h: the first item older than 24 h lies deeper');
      precondition(anchored, 'needs, in the default (selected, 7d) listing, an item older than 24 h with at least one more item after it');
      expectInvalidCursor(await feedGet('/api/v1/items', { query: { limit: 100, window: '24h', cursor: anchored } }));
      const restart = await feedGet('/api/v1/items', { query: { limit: 100, window: '24h' } });
      expect(restart.status, 'restarting from the first page').toBe(200);
    },
  );
});
