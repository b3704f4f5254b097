/**
 * A careful feed client: keeps every client rule of the content feed document.
 *   npm run client-conformance -- --service feed -- node examples/clients/careful-feed-poller.mjs
 * Reads the service address from FEED_BASE_URL.
 */
import { runFeedPoller } from './feed-poller.mjs';

const base = process.env.FEED_BASE_URL;
if (!base) {
  console.error('set FEED_BASE_URL');
  process.exit(2);
}
await runFeedPoller({ base });
