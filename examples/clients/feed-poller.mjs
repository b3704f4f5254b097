/**
 * A feed client that keeps every client rule of the content feed document. careful-feed-poller.mjs runs it as
 * is; the project's self-test runs it with one fault switched on (fixtures/clients/faulty-feed-poller.mjs) to
 * show that the client-conformance run catches each rule broken alone.
 *
 * What it does, in the order a dashboard would: the hot topics and their stories (following a merged story's
 * 308), the latest daily through the archive, two pages of items (restarting from the first page when a cursor
 * is rejected), one poll of the items, the selected-set snapshot once and then the change feed, polled once.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** @typedef {'no-if-none-match'|'fast-poll'|'cursor-reuse'|'cursor-resent'|'story-id-constructed'|'merged-as-gone'|'guessed-date'|'snapshot-polled'|'no-retry-wait'|'items-mirror'} Fault */
export const FAULTS = [
  'no-if-none-match',
  'fast-poll',
  'cursor-reuse',
  'cursor-resent',
  'story-id-constructed',
  'merged-as-gone',
  'guessed-date',
  'snapshot-polled',
  'no-retry-wait',
  'items-mirror',
];

const sMaxAge = (res) => Number(/s-maxage=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1] ?? 0);

/**
 * @param {{ base: string, faults?: Set<Fault>, log?: (s: string) => void }} o
 */
export async function runFeedPoller({ base, faults = new Set(), log = (s) => console.log(s) }) {
  const has = (f) => faults.has(f);
  /** url -> { etag, body }: what a 304 stands for. */
  const cache = new Map();

  /** GET with If-None-Match, Retry-After honoured on 429/503 (at most 4 retries); 308 returned, not followed. */
  async function get(pathAndQuery) {
    const url = new URL(pathAndQuery, base).href;
    for (let attempt = 0; ; attempt++) {
      const cached = cache.get(url);
      const headers = cached && !has('no-if-none-match') ? { 'if-none-match': cached.etag } : {};
      const res = await fetch(url, { headers, redirect: 'manual' });
      if (res.status === 429 || res.status === 503) {
        await res.arrayBuffer();
        if (attempt >= 4) throw new Error(`${url}: still ${res.status} after ${attempt} retries`);
        const wait = Number(res.headers.get('retry-after')) || 1;
        log(`${res.status} on ${pathAndQuery}: waiting ${wait} s (Retry-After)`);
        if (!has('no-retry-wait')) await sleep(wait * 1000 + 10);
        continue;
      }
      if (res.status === 304 && cached) return { status: 200, body: cached.body, fresh: sMaxAge(res), notModified: true };
      if (res.status >= 300 && res.status < 400) {
        await res.arrayBuffer();
        return { status: res.status, location: res.headers.get('location') };
      }
      const text = await res.text();
      const body = text ? JSON.parse(text) : null;
      const etag = res.headers.get('etag');
      if (res.status === 200 && etag) cache.set(url, { etag, body });
      return { status: res.status, body, fresh: sMaxAge(res) };
    }
  }
  /** Wait out the freshness the last answer gave (s-maxage), as the document's polling rule asks. */
  const pollWait = async (last) => {
    if (!has('fast-poll')) await sleep(last.fresh * 1000 + 20);
  };

  // Hot topics; a story only through links.story (its last path segment), never built from anything else.
  const hot = await get('/api/v1/hot-topics');
  for (const t of hot.body.items) {
    let id = t.links?.story ? new URL(t.links.story).pathname.split('/').pop() : undefined;
    if (!id && has('story-id-constructed')) id = t.id;
    if (!id) continue;
    let story = await get(`/api/v1/stories/${encodeURIComponent(id)}`);
    if (story.status === 308 && has('merged-as-gone')) {
      log(`story ${id} merged: dropping it`);
      continue;
    }
    if (story.status === 308) {
      log(`story ${id} merged; following ${story.location}`);
      story = await get(new URL(story.location, base).pathname);
    }
    log(`story ${id}: ${story.status} ${story.body?.story?.title ?? ''}`);
  }

  // The latest daily at a stable URL: its date from the archive, never guessed.
  let date;
  if (has('guessed-date')) date = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Shanghai' }).format(new Date(Date.now() - 86_400_000));
  else date = (await get('/api/v1/dailies?limit=1')).body.items[0]?.date;
  if (date) log(`daily ${date}: ${(await get(`/api/v1/dailies/${date}`)).status}`);

  // Items: two pages; a rejected cursor sends the client back to the first page.
  const first = '/api/v1/items?limit=20';
  let page = await get(first);
  let cursor = page.body.page.nextCursor;
  for (let n = 2; n <= 2 && cursor; n++) {
    let next = await get(`/api/v1/items?limit=20&cursor=${encodeURIComponent(cursor)}`);
    if (next.status === 400 && next.body?.code === 'invalid_cursor') {
      if (has('cursor-reuse')) {
        log('invalid_cursor: trying the same cursor again');
        next = await get(`/api/v1/items?limit=20&cursor=${encodeURIComponent(cursor)}`);
      } else if (has('cursor-resent')) {
        // "The cursor carries its query": the refused cursor once more on its own, then a restart.
        log('invalid_cursor: the cursor alone, then the first page');
        await get(`/api/v1/items?cursor=${encodeURIComponent(cursor)}`);
        page = await get(first);
        next = await get(`/api/v1/items?limit=20&cursor=${encodeURIComponent(page.body.page.nextCursor)}`);
      } else {
        log('invalid_cursor: restarting from the first page');
        page = await get(first);
        next = await get(`/api/v1/items?limit=20&cursor=${encodeURIComponent(page.body.page.nextCursor)}`);
      }
    }
    log(`items page ${n}: ${next.status}, ${next.body?.items?.length ?? 0} items`);
    page = next;
    cursor = next.body?.page?.nextCursor;
  }
  // One poll of the first page, no sooner than the last answer's s-maxage.
  await pollWait(page);
  const polled = await get(first);
  log(`items polled: ${polled.notModified ? '304 not modified' : `${polled.status}, changed`}`);

  // The selected set: the snapshot once (keeping the cursor of its first page), then the change feed.
  async function takeSnapshot() {
    let p = await get('/api/v1/selected/snapshot?limit=300');
    const syncCursor = p.body.cursor;
    let count = p.body.count;
    while (p.body.hasMore) {
      p = await get(`/api/v1/selected/snapshot?page=${encodeURIComponent(p.body.nextPage)}`);
      count += p.body.count;
    }
    log(`snapshot: ${count} items`);
    return { syncCursor, last: p };
  }
  const snap = await takeSnapshot();
  if (has('snapshot-polled')) {
    await pollWait(snap.last);
    await takeSnapshot();
  }
  let changes = await get(`/api/v1/selected/changes?cursor=${encodeURIComponent(snap.syncCursor)}`);
  while (changes.body.hasMore) changes = await get(`/api/v1/selected/changes?cursor=${encodeURIComponent(changes.body.cursor)}`);
  log(`changes: ${changes.body.count} in the last page`);
  await pollWait(changes);
  changes = await get(`/api/v1/selected/changes?cursor=${encodeURIComponent(changes.body.cursor)}`);
  log(`changes polled: ${changes.body.count}`);

  if (has('items-mirror')) {
    // A local copy of "everything" kept from the items list: walked whole, then walked whole again to refresh it.
    let last = changes;
    for (let sync = 1; sync <= 2; sync++) {
      await pollWait(last);
      let p = await get('/api/v1/items?limit=100');
      let count = p.body.items.length;
      while (p.body.page.hasMore) {
        p = await get(`/api/v1/items?limit=100&cursor=${encodeURIComponent(p.body.page.nextCursor)}`);
        count += p.body.items.length;
      }
      log(`items mirror, sync ${sync}: ${count} items`);
      last = p;
    }
  }
}
