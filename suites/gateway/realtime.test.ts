/**
 * model-gateway-service.md — Authentication rule 4: the realtime WebSocket takes the key as the second of three
 * subprotocols. The path is GATEWAY_REALTIME_PATH (default from the profile).
 */
import { describe } from 'vitest';
import { randomBytes } from 'node:crypto';
import { check, expect } from '../../src/harness.js';
import { chosenModel, gw, openRealtime, requireKey } from '../../src/gateway.js';

const protocols = (key: string) => [gw().realtimeProtocol, `${gw().realtimeKeyProtocolPrefix}${key}`, gw().realtimeBetaProtocol];

describe('the realtime WebSocket', () => {
  check(
    {
      id: 'gw-realtime-subprotocol-key',
      title: 'the key in Sec-WebSocket-Protocol, as three subprotocols, opens a session; the server selects one of them',
      requirements: ['gw-auth-websocket-subprotocol'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_API_KEY');
      const offered = protocols(key);
      const r = await openRealtime({ protocols: offered, model: await chosenModel() });
      expect(r.opened, `handshake: ${r.status ?? r.error ?? ''}`).toBe(true);
      t.observe('selected subprotocol', r.protocol ? (r.protocol.startsWith(gw().realtimeKeyProtocolPrefix) ? '(the key subprotocol)' : r.protocol) : '(none)');
      expect(offered, 'the subprotocol the server selected').toContain(r.protocol);
    },
  );

  check(
    { id: 'gw-realtime-bad-key-refused', title: 'a bad key in the subprotocols is refused', requirements: ['gw-auth-websocket-subprotocol'] },
    async (t) => {
      requireKey(t, 'GATEWAY_API_KEY');
      const r = await openRealtime({ protocols: protocols(`sk-conformance-invalid-${randomBytes(6).toString('hex')}`), model: await chosenModel() });
      t.observe('refusal', r.status ? `HTTP ${r.status}` : (r.error ?? 'closed'));
      expect(r.opened, 'a session opened with an invalid key').toBe(false);
    },
  );

  check(
    { id: 'gw-realtime-bearer', title: 'Authorization: Bearer (valid on all paths) opens a realtime session', requirements: ['gw-auth-bearer'] },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_API_KEY');
      const r = await openRealtime({ protocols: [gw().realtimeProtocol], headers: { authorization: `Bearer ${key}` }, model: await chosenModel() });
      expect(r.opened, `handshake: ${r.status ?? r.error ?? ''}`).toBe(true);
    },
  );

  check(
    {
      id: 'gw-realtime-query-key-refused',
      title: 'a key given as ?key= does not open a realtime session (a vendor A interface)',
      requirements: ['gw-auth-query-key-not-vendor-a'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_API_KEY');
      const r = await openRealtime({ protocols: [gw().realtimeProtocol], query: { key }, model: await chosenModel() });
      expect(r.opened, 'a session opened with ?key=').toBe(false);
    },
  );
});
