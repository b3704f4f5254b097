/**
 * model-gateway-service.md — Authentication rules 5 to 8; States: the configured keys, each on the authentication
 * check (GET /v1/models). A key that is not configured skips its check, naming the variable.
 */
import { describe } from 'vitest';
import { check, expect } from '../../src/harness.js';
import type { SecretVar } from '../../src/config.js';
import { expectErrorShape, gatewayGet, requireKey } from '../../src/gateway.js';

const authCheck = (key: string) => gatewayGet('/v1/models', { headers: { authorization: `Bearer ${key}` } });

describe('keys that must not pass the authentication check', () => {
  const cases: { v: SecretVar; id: string; title: string; reqs: string[]; statuses: number[] }[] = [
    {
      v: 'GATEWAY_EXPIRED_KEY',
      id: 'gw-expired-key-401',
      title: 'an expired key gets 401',
      reqs: ['gw-key-invalid-401', 'gw-status-401-key'],
      statuses: [401],
    },
    {
      v: 'GATEWAY_DISABLED_KEY',
      id: 'gw-disabled-key-401',
      title: 'a disabled key gets 401',
      reqs: ['gw-key-invalid-401', 'gw-status-401-key'],
      statuses: [401],
    },
    // The document says only "rejected" for a key beyond its quota ceiling: any 4xx.
    {
      v: 'GATEWAY_EXHAUSTED_KEY',
      id: 'gw-exhausted-key-rejected',
      title: 'a key beyond its quota ceiling is rejected',
      reqs: ['gw-key-quota-validity'],
      statuses: [400, 401, 402, 403, 429],
    },
    {
      v: 'GATEWAY_MANAGEMENT_TOKEN',
      id: 'gw-management-token-refused',
      title: 'the management-panel access token is refused on model interfaces',
      reqs: ['gw-management-token-refused'],
      statuses: [401, 403],
    },
  ];
  for (const c of cases) {
    check({ id: c.id, title: c.title, requirements: c.reqs }, async (t) => {
      const res = await authCheck(requireKey(t, c.v));
      t.observe('status', String(res.status));
      expect(c.statuses, `GET /v1/models with ${c.v}: ${res.status}`).toContain(res.status);
    });
  }

  check(
    {
      id: 'gw-ip-denied-403',
      title: 'a key whose IP allow list excludes the caller gets 403 with a message about the IP',
      requirements: ['gw-key-ip-allow-list'],
    },
    async (t) => {
      const res = await authCheck(requireKey(t, 'GATEWAY_IP_DENIED_KEY'));
      expect(res.status, 'GET /v1/models from outside the allow list').toBe(403);
      const { message } = await expectErrorShape(res, 'vendor-a');
      expect(String(message), 'the message speaks of the IP').toMatch(/\bIP\b|\bip address|IP地址/i);
    },
  );
});
