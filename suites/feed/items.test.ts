/**
 * content-feed-service.md — Resources > Item; Endpoints > GET /api/v1/items: item fields, the window under each
 * `by` rule, keyset paging, and cursor rejection.
 */
import { describe } from 'vitest';
import { randomBytes } from 'node:crypto';
import { check, expect, fail, precondition, PreconditionFailed } from '../../src/harness.js';
import { componentSchema, formatAjvErrors, validator } from '../../src/spec.js';
import {
  WINDOW_MS,
  effectiveTime,
  expectProblem,
  feedGet,
  firstCursor,
  idOf,
  itemsPage as page,
  once,
  problemCode,
  profile,
  serverNow,
  walkItems as walk,
} from '../../src/feed.js';
import type { HttpResponse } from '../../src/http.js';

/** A broad listing (mode=all, 100 items), shared by the item-field checks. */
const broadListing = () => once('items-broad', () => page({ mode: 'all', limit: 100 }));

describe('item fields', () => {
  check({ id: 'feed-items-timestamps', title: 'every item carries publishedAt and discoveredAt', requirements: ['feed-item-timestamps'] }, async (t) => {
    const { res, items } = await broadListing();
    t.cite(res);
    precondition(items.length > 0, 'the target listed no items');
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
      precondition(items.length > 0, 'the target listed no items');
      const schema = (await componentSchema('feed', 'Item')) as { properties: Record<string, object> };
      const links = validator({ type: 'object', required: ['links'], properties: { links: schema.properties.links! } });
      for (const item of items)
        if (!links(item)) t.violation(`item ${idOf(item)} has no original-article URL in links.original: ${formatAjvErrors(links.errors)}`);
    },
  );
});

describe('the window under each timestamp rule', () => {
  const cases = [
    { window: '24h', by: 'timeline', reqs: ['feed-items-by-timeline'] },
    { window: '7d', by: 'timeline', reqs: ['feed-items-by-timeline', 'feed-items-window-7d'] },
    { window: '24h', by: 'published', reqs: ['feed-items-by-published'] },
    { window: '7d', by: 'published', reqs: ['feed-items-by-published', 'feed-items-window-7d'] },
  ] as const;
  // A little slack for clocks and for the time a response takes.
  const SLACK = 2 * 60_000;
  for (const c of cases) {
    check(
      {
        id: `feed-items-window-${c.window}-${c.by}`,
        title: `window=${c.window}&by=${c.by}: every item's ${c.by === 'timeline' ? 'timeline time (publication time if back-filled > 72 h, else discovery)' : 'publication time'} lies in the window`,
        requirements: [...c.reqs],
      },
      async (t) => {
        // Up to 5 pages of 100: enough to reach the window's tail on a test deployment, bounded on a busy one.
        const pages = await walk({ mode: 'all', window: c.window, by: c.by, limit: 100 }, 5);
        const items = pages.flatMap((p) => p.items);
        precondition(items.length > 0, `the target listed no items for window=${c.window}&by=${c.by}`);
        t.observe('items checked', `${items.length}${pages[pages.length - 1]!.hasMore ? ' (newest only: more pages exist)' : ' (the whole window)'}`);
        for (const p of pages) {
          const now = serverNow(p.res);
          for (const item of p.items) {
            const at = effectiveTime(item, c.by);
            if (at === undefined) fail(`item ${idOf(item)} has no ${c.by === 'published' ? 'publication' : 'discovery'} time to place it by (by=${c.by})`);
            if (at < now - WINDOW_MS[c.window]! - SLACK || at > now + SLACK) {
              t.violation(
                `item ${idOf(item)} (publishedAt ${String(item.publishedAt)}, discoveredAt ${String(item.discoveredAt)}) counts at ${new Date(at).toISOString()} under by=${c.by}, outside window=${c.window} ending ${new Date(now).toISOString()}`,
              );
            }
          }
        }
      },
    );
  }
});

describe('keyset paging', () => {
  check(
    {
      id: 'feed-items-paging-no-duplicates',
      title: 'paging with the cursor gives no duplicates and keeps the order of one listing',
      requirements: ['feed-items-paging'],
    },
    async (t) => {
      const paged = await walk({ limit: 10 }, 5);
      const ids = paged.flatMap((p) => p.items.map((i) => idOf(i)));
      precondition(paged.length > 1, 'the target has no second page of items (needs more than 10 selected items in 7 days)');
      const single = await page({ limit: ids.length });
      const firstAgain = await page({ limit: 10 });
      if (JSON.stringify(firstAgain.items) !== JSON.stringify(paged[0]!.items))
        throw new PreconditionFailed('setup error (precondition): the listing changed while paging');
      const dupes = ids.filter((id, i) => ids.indexOf(id) !== i);
      if (dupes.length) t.violation(`pages repeat items: ${[...new Set(dupes)].join(', ')}`);
      expect(ids, `${paged.length} pages of 10 equal one listing of ${ids.length}`).toEqual(single.items.map((i) => idOf(i)));
    },
  );
});

describe('cursor rejection', () => {
  const expectInvalidCursor = (res: HttpResponse) => {
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
      const { cursor, res } = await firstCursor();
      t.cite(res);
      expectInvalidCursor(await feedGet('/api/v1/items', { query: { limit: 5, by: 'published', cursor } }));
    },
  );

  check(
    {
      id: 'feed-items-cursor-outside-window',
      title: 'a cursor whose anchor is older than 24 h, sent with window=24h, is rejected with 400 invalid_cursor; the first page then works',
      requirements: ['feed-items-cursor-window'],
    },
    async () => {
      // Walk the 7d listing until a page ends on an item older than 24 h: its cursor anchors outside window=24h.
      let cursor: string | null = null;
      let anchored: string | null = null;
      for (let i = 0; i < 5 && !anchored; i++) {
        const p = await page(cursor ? { limit: 100, cursor } : { limit: 100 });
        const last = p.items[p.items.length - 1];
        if (!p.next || !last) break;
        const at = effectiveTime(last, 'timeline');
        if (at !== undefined && at < serverNow(p.res) - WINDOW_MS['24h']!) anchored = p.next;
        cursor = p.next;
      }
      precondition(anchored, 'no page of the 7d listing ends on an item older than 24 h (needs older items and more pages)');
      expectInvalidCursor(await feedGet('/api/v1/items', { query: { limit: 100, window: '24h', cursor: anchored } }));
      const restart = await feedGet('/api/v1/items', { query: { limit: 100, window: '24h' } });
      expect(restart.status, 'restarting from the first page').toBe(200);
    },
  );
});
