/**
 * A careless feed client, written the way a quick script often is: it polls on its own schedule, never sends
 * If-None-Match, retries failures at once, keeps re-reading the snapshot, builds story URLs from item ids and
 * asks for "yesterday's" daily by computing the date itself.
 *   npm run client-conformance -- --service feed -- node examples/clients/careless-feed-poller.mjs
 * The run fails and names the rules it breaks.
 */
import { setTimeout as sleep } from 'node:timers/promises';

const base = process.env.FEED_BASE_URL;
if (!base) {
  console.error('set FEED_BASE_URL');
  process.exit(2);
}

async function getJson(path) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const res = await fetch(new URL(path, base));
    if (res.ok) return res.json();
    await res.arrayBuffer();
    // "just try again"
  }
  return null;
}

for (let round = 0; round < 3; round++) {
  const items = await getJson('/api/v1/items?limit=20');
  if (items?.page?.nextCursor) {
    // Page on with the cursor; on an error, the same cursor again.
    await getJson(`/api/v1/items?limit=20&cursor=${encodeURIComponent(items.page.nextCursor)}`);
  }
  const hot = await getJson('/api/v1/hot-topics');
  for (const t of hot?.items ?? []) await getJson(`/api/v1/stories/${t.id}`);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await getJson(`/api/v1/dailies/${yesterday}`);
  // "Keep a local copy fresh": re-read the whole snapshot every round.
  let page = await getJson('/api/v1/selected/snapshot?limit=1000');
  while (page?.hasMore) page = await getJson(`/api/v1/selected/snapshot?page=${encodeURIComponent(page.nextPage)}`);
  console.log(`round ${round}: ${items?.items?.length ?? 0} items, ${hot?.items?.length ?? 0} hot topics`);
  await sleep(200);
}
