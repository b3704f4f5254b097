/**
 * A careful gateway client: keeps the gateway document's retry rules and puts the key where each path accepts it.
 *   npm run client-conformance -- --service gateway -- node examples/clients/careful-gateway-client.mjs
 * Reads GATEWAY_URL and GATEWAY_API_KEY.
 */
import { runGatewayClient } from './gateway-client.mjs';

const base = process.env.GATEWAY_URL;
const key = process.env.GATEWAY_API_KEY;
if (!base || !key) {
  console.error('set GATEWAY_URL and GATEWAY_API_KEY');
  process.exit(2);
}
await runGatewayClient({ base, key });
