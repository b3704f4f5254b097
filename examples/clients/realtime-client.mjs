/**
 * A gateway client that opens one realtime session and nothing else: it lists the models with its key in
 * Authorization: Bearer, then opens the realtime WebSocket with the key as the three subprotocols of the
 * Authentication section's rule 4, and closes it.
 *   npm run client-conformance -- --service gateway -- node examples/clients/realtime-client.mjs
 * Reads GATEWAY_URL and GATEWAY_API_KEY. The argument key-in-url puts the key in the URL query instead (the fault
 * the realtime key-form rule catches).
 */
import WebSocket from 'ws';

const base = process.env.GATEWAY_URL;
const key = process.env.GATEWAY_API_KEY;
if (!base || !key) {
  console.error('set GATEWAY_URL and GATEWAY_API_KEY');
  process.exit(2);
}
const models = await (await fetch(new URL('/v1/models', base), { headers: { authorization: `Bearer ${key}` } })).json();
const url = new URL(process.env.GATEWAY_REALTIME_PATH ?? '/v1/realtime', base);
url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
url.searchParams.set('model', models.data?.[0]?.id ?? 'default');
const keyInUrl = process.argv[2] === 'key-in-url';
if (keyInUrl) url.searchParams.set('key', key);
const ws = keyInUrl ? new WebSocket(url) : new WebSocket(url, ['realtime', `vendora-insecure-api-key.${key}`, 'vendora-beta.realtime-v1']);
await new Promise((resolve) => {
  ws.on('open', () => {
    console.log(`realtime session opened (subprotocol ${ws.protocol})`);
    ws.close();
    resolve();
  });
  ws.on('unexpected-response', (_req, res) => {
    console.log(`realtime handshake refused: ${res.statusCode}`);
    resolve();
  });
  ws.on('error', (e) => {
    console.log(`realtime handshake failed: ${e.message}`);
    resolve();
  });
});
