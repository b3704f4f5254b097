/**
 * model-gateway-service.md — Authentication rules 5 to 8; States; Errors: the configured keys, each on the
 * authentication check (GET /v1/models), with the error exactly as the documents give it for that state: the
 * status, the error produced by the gateway itself (type gateway_error), and for the IP allow list its own code
 * (access_denied) and a message about the IP, read where the vendor A envelope of /v1/models carries them. The
 * control of each refusal is the valid key answered 200 with a data array on the same path. A key that is not
 * configured skips its check, naming the variable.
 */
import { check, expect, precondition, type CheckTools, checkGroup } from '../../src/harness.js';
import type { SecretVar } from '../../src/config.js';
import { gatewayGet, gatewayOperations, judge, requireKey, requireValidKey, typeNames, vendorAFields, verifyApiKey } from '../../src/gateway.js';
import type { HttpResponse } from '../../src/http.js';

const authCheck = (key: string) => gatewayGet('/v1/models', { headers: { authorization: `Bearer ${key}` } });
const listModels = (await gatewayOperations()).find((o) => o.operationId === 'listModels')!;

/** The valid key is answered 200 with a data array on the authentication check: a refusal is then about the key. */
async function control(t: CheckTools): Promise<void> {
  await requireValidKey(t);
  const first = (await verifyApiKey()).responses[0]!;
  t.cite(first);
  const j = judge(first, listModels);
  precondition(j.kind === 'accepted', `GET /v1/models with GATEWAY_API_KEY answered ${j.what}, not 200 with a data array: a refusal could not be told apart`);
}

/** A key refusal is an error of the gateway itself: type gateway_error (the deployment's name for it). */
function expectGatewayError(t: CheckTools, res: HttpResponse, what: string): void {
  const { type, code } = vendorAFields(res.body);
  t.observe('error', `type ${JSON.stringify(type)}, code ${JSON.stringify(code)}`);
  expect(type, `error.type of the refusal of ${what} (the gateway's own error)`).toBe(typeNames().gatewayError);
}

checkGroup('keys that must not pass the authentication check', () => {
  const cases: { v: SecretVar; id: string; title: string; reqs: string[]; statuses: number[] }[] = [
    {
      v: 'GATEWAY_EXPIRED_KEY',
      id: 'gw-expired-key-401',
      title: 'an expired key gets 401, a gateway_error',
      reqs: ['gw-key-invalid-401', 'gw-status-401-key', 'gw-error-type-values'],
      statuses: [401],
    },
    {
      v: 'GATEWAY_DISABLED_KEY',
      id: 'gw-disabled-key-401',
      title: 'a disabled key gets 401, a gateway_error',
      reqs: ['gw-key-invalid-401', 'gw-status-401-key', 'gw-error-type-values'],
      statuses: [401],
    },
    // The document says only "rejected" for a key beyond its quota ceiling: any 4xx.
    {
      v: 'GATEWAY_EXHAUSTED_KEY',
      id: 'gw-exhausted-key-rejected',
      title: 'a key beyond its quota ceiling is rejected, a gateway_error',
      reqs: ['gw-key-quota-validity', 'gw-error-type-values'],
      statuses: [400, 401, 402, 403, 429],
    },
    {
      v: 'GATEWAY_MANAGEMENT_TOKEN',
      id: 'gw-management-token-refused',
      title: 'the management-panel access token is refused on model interfaces, a gateway_error',
      reqs: ['gw-management-token-refused', 'gw-error-type-values'],
      statuses: [401, 403],
    },
  ];
  for (const c of cases) {
    check({ id: c.id, title: c.title, requirements: c.reqs }, async (t) => {
      const key = requireKey(t, c.v);
      await control(t);
      const res = await authCheck(key);
      t.observe('status', String(res.status));
      expect(c.statuses, `GET /v1/models with ${c.v}: ${res.status}`).toContain(res.status);
      expectGatewayError(t, res, c.v);
    });
  }

  check(
    {
      id: 'gw-ip-denied-403',
      title: 'a key whose IP allow list excludes the caller gets 403, code access_denied, with a message about the IP',
      requirements: ['gw-key-ip-allow-list', 'gw-error-type-values', 'gw-error-code-values'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_IP_DENIED_KEY');
      await control(t);
      const res = await authCheck(key);
      expect(res.status, 'GET /v1/models from outside the allow list').toBe(403);
      expectGatewayError(t, res, 'GATEWAY_IP_DENIED_KEY');
      const { code, message } = vendorAFields(res.body);
      expect(code, 'error.code of the IP allow-list refusal (the code table: "access denied, for example IP not in the allow list")').toBe('access_denied');
      expect(String(message), 'the message speaks of the IP').toMatch(/\bIP\b|\bip address|IP地址/i);
    },
  );
});
