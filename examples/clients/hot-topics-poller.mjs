/**
 * A feed client that uses one endpoint: it polls the hot topics, as a dashboard widget would, and nothing else.
 * It keeps the rules that govern what it does (Retry-After on 429/503, If-None-Match with the last ETag, no poll
 * before the s-maxage of the previous answer); the rules about stories, dailies, item pages and the snapshot do
 * not apply to it, since it never uses them.
 *   npm run client-conformance -- --service feed -- node examples/clients/hot-topics-poller.mjs
 * Reads the service address from FEED_BASE_URL. An argument switches one fault on, to see it caught:
 * fast-poll (polls again at once) or no-if-none-match (never revalidates).
 */
import { setTimeout as sleep } from 'node:timers/promises';

const base = process.env.FEED_BASE_URL;
if (!base) {
  console.error('set FEED_BASE_URL');
  process.exit(2);
}
const fault = process.argv[2];
const url = new URL('/api/v1/hot-topics', base).href;
let etag;
let topics = [];

for (let poll = 0; poll < 3; poll++) {
  let fresh = 0;
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { headers: etag && fault !== 'no-if-none-match' ? { 'if-none-match': etag } : {} });
    if (res.status === 429 || res.status === 503) {
      await res.arrayBuffer();
      if (attempt >= 4) throw new Error(`${url}: still ${res.status} after ${attempt} retries`);
      const wait = Number(res.headers.get('retry-after')) || 1;
      console.log(`${res.status}: waiting ${wait} s (Retry-After)`);
      await sleep(wait * 1000 + 10);
      continue;
    }
    fresh = Number(/s-maxage=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1] ?? 0);
    if (res.status === 200) {
      etag = res.headers.get('etag') ?? undefined;
      topics = (await res.json()).items ?? topics;
    } else await res.arrayBuffer();
    console.log(`poll ${poll + 1}: ${res.status}, ${topics.length} hot topics`);
    break;
  }
  if (poll < 2 && fault !== 'fast-poll') await sleep(fresh * 1000 + 20);
}
