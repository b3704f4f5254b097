/**
 * content-feed-service.md — Resources > Item; Endpoints > GET /api/v1/items: item fields, the window under each
 * `by` rule, keyset paging, and cursor rejection.
 */
import { randomBytes } from 'node:crypto';
import { AssertionViolation, check, expect, precondition, PreconditionFailed, checkGroup } from '../../src/harness.js';
import { componentSchema, formatAjvErrors, validator } from '../../src/spec.js';
import {
  CLOCK_TOLERANCE_MS,
  WINDOW_MS,
  effectiveTime,
  expectProblem,
  feedGet,
  idOf,
  needsAccess,
  itemsPage as page,
  firstCursor,
  once,
  problemCode,
  profile,
  targetNow,
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

checkGroup('the window under each timestamp rule', () => {
  const cases = [
    { window: '24h', by: 'timeline', reqs: ['feed-items-by-timeline'] },
    { window: '7d', by: 'timeline', reqs: ['feed-items-by-timeline', 'feed-items-window-7d'] },
    { window: '24h', by: 'published', reqs: ['feed-items-by-published'] },
    { window: '7d', by: 'published', reqs: ['feed-items-by-published', 'feed-items-window-7d'] },
  ] as const;
  for (const c of cases) {
    check(
      {
        id: `feed-items-window-${c.window}-${c.by}`,
        title: `window=${c.window}&by=${c.by}: every item's ${c.by === 'timeline' ? 'timeline time (publication time if back-filled > 72 h, else discovery)' : 'publication time'} lies in the window`,
        requirements: [...c.reqs],
      },
      async (t) => {
        const { pages, reach } = await windowPages({ mode: 'all', window: c.window, by: c.by });
        t.cite(...pages.map((p) => p.res));
        const items = pages.flatMap((p) => p.items);
        precondition(items.length > 0, `the target listed no items for window=${c.window}&by=${c.by} (needs an item in the last ${c.window})`);
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
          t.observe(
            'items without a publication time (publishedAt null)',
            undated.length
              ? `${undated.length} listed, each placed by its discoveredAt (held to the window by that time)`
              : 'none listed (left out, or the window holds none)',
          );
        }
      },
    );
  }
});

checkGroup('keyset paging', () => {
  check(
    {
      id: 'feed-items-paging-no-duplicates',
      title: 'following the cursor while hasMore yields every item of one listing exactly once, in its order',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      // One large page (the documented maximum, 100) is the reference listing; a walk of small pages must give
      // exactly its items, in its order. The small page size comes from what the target holds: about five pages
      // over a short listing, pages of 20 over the first 100 items of a long one.
      const large = await page({ limit: 100 });
      t.cite(large.res);
      const reference = large.items.map((i) => idOf(i));
      precondition(reference.length > 1, 'needs at least 2 selected items in the 7d window (the default listing)');
      const size = large.hasMore ? 20 : Math.max(1, Math.ceil(reference.length / 5));
      const walked: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      let ended = false;
      while (walked.length < reference.length && pages < 100) {
        // Following nextCursor is this check's rule: a continuation page that is not served fails it.
        const p: ItemsPage = await page(cursor ? { limit: size, cursor } : { limit: size }).catch((e: unknown) => {
          if (cursor && e instanceof PreconditionFailed)
            throw new AssertionViolation(`following nextCursor: ${e.message.replace(/^setup error \(precondition\): /, '')}`);
          throw e;
        });
        t.cite(p.res);
        pages++;
        walked.push(...p.items.map((i) => idOf(i)));
        if (!p.hasMore || !p.next) {
          ended = true;
          break;
        }
        cursor = p.next;
      }
      const again = await page({ limit: 100 });
      t.cite(again.res);
      const stable = JSON.stringify(again.items.map((i) => idOf(i))) === JSON.stringify(reference);
      if (!stable) throw new PreconditionFailed('setup error (precondition): the listing changed while paging (try again when the feed is quiet)');
      t.observe(
        'walk',
        `${pages} page(s) of ${size} against one page of 100 (${reference.length} items${large.hasMore ? ', the newest of more' : ', the whole listing'})`,
      );
      const dupes = walked.filter((id, i) => walked.indexOf(id) !== i);
      if (dupes.length) t.violation(`pages repeat items: ${[...new Set(dupes)].join(', ')}`);
      const got = new Set(walked);
      const missing = reference.filter((id) => !got.has(id));
      if (missing.length) t.violation(`the walk never delivered ${missing.length} item(s) of the listing: ${missing.slice(0, 10).join(', ')}`);
      if (ended && !large.hasMore && walked.length < reference.length) t.violation(`hasMore turned false after ${walked.length} of ${reference.length} items`);
      expect(walked.slice(0, reference.length), `${pages} pages of ${size} equal one listing of ${reference.length}`).toEqual(reference);
    },
  );
});

checkGroup('cursor rejection', () => {
  const expectInvalidCursor = (res: HttpResponse) => {
    needsAccess(res, 'the listing with a cursor');
    const body = expectProblem(res, 400);
    expect(problemCode(body), `problem code (profile field ${profile().problem.code})`).toBe('invalid_cursor');
  };

  check(
    { id: 'feed-items-cursor-garbage', title: 'a garbage cursor is rejected with 400 invalid_cursor', requirements: ['feed-items-cursor-bound'] },
    async () => {
      expectInvalidCursor(await feedGet('/api/v1/items', { query: { cursor: `conformance${randomBytes(18).toString('base64url')}` } }));
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
      // A cursor of an explicit by=timeline query, sent with by=published: the queries differ whatever the defaults.
      const p = await page({ limit: 5, by: 'timeline' });
      // Control: the other query is served without a cursor, so a refusal below is about the cursor.
      await page({ limit: 5, by: 'published' });
      t.cite(p.res, ...(early ? [early.res] : []));
      precondition(p.next, 'needs more than 5 selected items in the 7d window (a cursor to send with another query)');
      expectInvalidCursor(await feedGet('/api/v1/items', { query: { limit: 5, by: 'published', cursor: p.next } }));
    },
  );

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
      const k = first.items.findIndex((item) => isOld(item, first.res));
      if (k >= 0 && k < first.items.length - 1) {
        // Few items in the last 24 h: a first page of exactly k + 1 items ends on the first older one.
        const exact = await page({ limit: k + 1 });
        t.cite(exact.res);
        if (exact.next && isOld(exact.items[exact.items.length - 1], exact.res)) anchored = exact.next;
        t.observe('anchor', `the first page with limit=${k + 1}, ending on an item older than 24 h`);
      } else {
        // Many: walk pages of 100 until one ends on an item older than 24 h with more behind it.
        let p = first;
        for (let i = 0; i < 5 && !anchored && p.next; i++) {
          if (isOld(p.items[p.items.length - 1], p.res)) anchored = p.next;
          else {
            p = await page({ limit: 100, cursor: p.next });
            t.cite(p.res);
          }
        }
        if (anchored) t.observe('anchor', 'a page of 100 ending on an item older than 24 h');
      }
      precondition(anchored, 'needs, in the default (selected, 7d) listing, an item older than 24 h with at least one more item after it');
      expectInvalidCursor(await feedGet('/api/v1/items', { query: { limit: 100, window: '24h', cursor: anchored } }));
      const restart = await feedGet('/api/v1/items', { query: { limit: 100, window: '24h' } });
      expect(restart.status, 'restarting from the first page').toBe(200);
    },
  );
});
