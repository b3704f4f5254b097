// BREAKS: "Use only ids returned by the API."
/* eslint-disable -- written blind from the two documents alone (see README.md here), kept as written */
// Content feed client: hot topics -> stories (308 followed), dailies via archive, items pages, snapshot once then changes, polling.
const BASE = process.env.FEED_BASE_URL;
const T0 = Date.now(),
  DEADLINE = T0 + 50_000,
  MAX_RETRIES = 3;
const ITEMS_PATH = '/api/v1/items?window=24h&limit=20',
  HOT_PATH = '/api/v1/hot-topics';
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const log = (...a) => console.log(`[${((Date.now() - T0) / 1000).toFixed(1)}s]`, ...a);
const cache = new Map(); // url -> { etag, body }
const lastSeen = new Map(); // poll key -> { at, smax }
const abs = (p) => new URL(p, BASE).href;

function sMaxAge(cc) {
  const m = /(?:^|,)\s*s-maxage=(\d+)/i.exec(cc || '') || /(?:^|,)\s*max-age=(\d+)/i.exec(cc || '');
  return m ? Number(m[1]) : 60;
}
function retryAfterMs(h) {
  if (h && /^\d+$/.test(h.trim())) return Math.max(1, Number(h)) * 1000;
  const d = Date.parse(h || '');
  return Number.isNaN(d) ? 1000 : Math.max(1000, d - Date.now());
}
const dueAt = (key) => lastSeen.get(key).at + lastSeen.get(key).smax * 1000 + 250;

async function get(pathOrUrl, key = null) {
  const url = abs(pathOrUrl);
  for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
    const cached = cache.get(url);
    const headers = { accept: 'application/json' };
    if (cached?.etag) headers['if-none-match'] = cached.etag;
    let res, text;
    try {
      res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
      text = await res.text();
    } catch (e) {
      log('network error', url, e.message);
      return { status: 0, url };
    }
    if (res.status === 429 || res.status === 503) {
      const wait = retryAfterMs(res.headers.get('retry-after')) + 100;
      log(res.status, url, `waiting ${wait} ms (Retry-After)`);
      if (Date.now() + wait > DEADLINE) return { status: res.status, url };
      await sleep(wait);
      continue;
    }
    lastSeen.set(key ?? url, { at: Date.now(), smax: sMaxAge(res.headers.get('cache-control')) });
    log(res.status, url);
    const etag = res.headers.get('etag');
    if (res.status === 304 && cached) {
      if (etag) cached.etag = etag;
      return { status: 304, body: cached.body, url };
    }
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {}
    if (res.status === 200 && etag) cache.set(url, { etag, body });
    return { status: res.status, body, url, location: res.headers.get('location') };
  }
  return { status: 0, url };
}
const ok = (r) => r.status === 200 || r.status === 304;

async function getStory(path) {
  // a merged story answers 308: follow Location
  for (let hop = 0; hop < 5; hop++) {
    const r = await get(path);
    if (r.status === 308 && r.location) {
      path = new URL(r.location, r.url).href;
      log('merged; following', path);
      continue;
    }
    return r;
  }
}

async function listItems() {
  // keyset pages; on invalid_cursor restart from the first page
  let cursor = null,
    pages = 0,
    restarts = 0;
  const seen = [];
  while (pages < 3) {
    const r = await get(cursor ? `${ITEMS_PATH}&cursor=${encodeURIComponent(cursor)}` : ITEMS_PATH);
    if (r.status === 400 && r.body?.code === 'invalid_cursor' && restarts < 2) {
      restarts++;
      cursor = null;
      pages = 0;
      seen.length = 0;
      log('invalid_cursor: restarting from the first page');
      continue;
    }
    if (!ok(r)) break;
    seen.push(...(r.body?.items ?? []));
    pages++;
    cursor = r.body?.page?.nextCursor;
    if (!r.body?.page?.hasMore || !cursor) break;
  }
  return seen;
}

const mirror = new Map();
let syncCursor = null;
async function snapshot() {
  // one-time bootstrap; keep the cursor of the first page
  let page = null;
  for (let i = 0; i < 200; i++) {
    const r = await get(page ? `/api/v1/selected/snapshot?limit=200&page=${encodeURIComponent(page)}` : '/api/v1/selected/snapshot?fields=minimal&limit=200');
    if (!ok(r)) return false;
    if (!page) syncCursor = r.body?.cursor;
    for (const it of r.body?.items ?? []) mirror.set(it.id, it);
    if (!r.body?.hasMore || !r.body?.nextPage) return Boolean(syncCursor);
    page = r.body.nextPage;
  }
  return false;
}
async function syncChanges() {
  // apply change pages, keep the returned cursor
  for (let i = 0; i < 20; i++) {
    const r = await get(`/api/v1/selected/changes?cursor=${encodeURIComponent(syncCursor)}&limit=100`, 'changes');
    if (r.status !== 200) return;
    for (const c of r.body?.changes ?? []) c.op === 'remove' ? mirror.delete(c.id) : c.item && mirror.set(c.item.id, c.item);
    if (r.body?.cursor) syncCursor = r.body.cursor;
    if (!r.body?.hasMore) return;
  }
}

const hot = await get(HOT_PATH);
const storyIds = [];
for (const t of hot.body?.items ?? []) {
  const link = t.links?.story;
  if (!link) continue; // no links.story: no story id may be constructed
  storyIds.push(
    String(t.title)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, ''),
  ); // FAULT: guesses a story id from the title
}
for (const id of storyIds.slice(0, 2)) {
  const s = await getStory(`/api/v1/stories/${encodeURIComponent(id)}`);
  const rel = s?.body?.story?.related?.[0]?.publicId ?? s?.body?.story?.storyline?.[0]?.publicId;
  if (rel && !storyIds.includes(rel)) {
    storyIds.push(rel);
    await getStory(`/api/v1/stories/${encodeURIComponent(rel)}`);
  }
}
const archive = await get('/api/v1/dailies?limit=1'); // never guess a date
const date = archive.body?.items?.[0]?.date;
if (date) await get(`/api/v1/dailies/${encodeURIComponent(date)}`);
const items = await listItems();
if (await snapshot()) await syncChanges();

const targets = [
  { key: abs(ITEMS_PATH), run: () => get(ITEMS_PATH) },
  { key: abs(HOT_PATH), run: () => get(HOT_PATH) },
  { key: 'changes', run: syncChanges },
];
for (const t of targets) t.polls = 0;
for (;;) {
  const next = targets
    .filter((t) => t.polls < 2 && lastSeen.has(t.key))
    .map((t) => ({ t, due: dueAt(t.key) }))
    .filter((x) => x.due <= DEADLINE)
    .sort((a, b) => a.due - b.due)[0];
  if (!next) break;
  await sleep(next.due - Date.now());
  next.t.polls++;
  await next.t.run();
}
log(`done: ${storyIds.length} story ids, daily ${date ?? '-'}, ${items.length} items, mirror ${mirror.size}`);
