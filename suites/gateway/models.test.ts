/**
 * model-gateway-service.md — Resources and their fields > Model listing; Endpoints: GET /v1/models is the
 * authentication check.
 */
import { randomBytes } from 'node:crypto';
import { check, expect, jsonBody, checkGroup } from '../../src/harness.js';
import { gatewayGet, requireValidKey } from '../../src/gateway.js';
import { componentSchema, formatAjvErrors, validator } from '../../src/spec.js';

checkGroup('GET /v1/models, the authentication check', () => {
  check({ id: 'gw-models-valid-key', title: 'a valid key gets 200 with a data array', requirements: ['gw-models-auth-check'] }, async (t) => {
    const key = await requireValidKey(t);
    const res = await gatewayGet('/v1/models', { headers: { authorization: `Bearer ${key}` } });
    expect(res.status, 'GET /v1/models with a valid key').toBe(200);
    const validate = validator(await componentSchema('gateway', 'ModelList'));
    const body = jsonBody(res);
    if (!validate(body)) t.violation(`the body is not a model listing with a data array: ${formatAjvErrors(validate.errors)}`);
  });

  check({ id: 'gw-models-bad-key', title: 'a bad credential gets 401', requirements: ['gw-models-bad-credential-401', 'gw-status-401-key'] }, async () => {
    // A well-formed key that no deployment issued.
    const bogus = `sk-conformance-invalid-${randomBytes(12).toString('hex')}`;
    const res = await gatewayGet('/v1/models', { headers: { authorization: `Bearer ${bogus}` } });
    expect(res.status, 'GET /v1/models with an invalid key').toBe(401);
  });
});
