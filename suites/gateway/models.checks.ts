/**
 * model-gateway-service.md — Resources and their fields > Model listing; Endpoints: GET /v1/models is the
 * authentication check.
 */
import { check, expect, jsonBody, checkGroup } from '../../src/harness.js';
import { gatewayGet, invalidKeyListing, madeUpCredential, requireValidKey, verifyApiKey } from '../../src/gateway.js';
import { componentSchema, formatAjvErrors, validator } from '../../src/spec.js';

checkGroup('GET /v1/models, the authentication check', () => {
  check({ id: 'gw-models-valid-key', title: 'a valid key gets 200 with a data array', requirements: ['gw-models-auth-check'] }, async (t) => {
    await requireValidKey(t);
    // The run's first request with the key (Authorization: Bearer on GET /v1/models), read again: one request, not two.
    const res = (await verifyApiKey()).responses[0]!;
    t.cite(res);
    expect(res.status, 'GET /v1/models with a valid key').toBe(200);
    const validate = validator(await componentSchema('gateway', 'ModelList'));
    const body = jsonBody(res);
    if (!validate(body)) t.violation(`the body is not a model listing with a data array: ${formatAjvErrors(validate.errors)}`);
  });

  check({ id: 'gw-models-bad-key', title: 'a bad credential gets 401', requirements: ['gw-models-bad-credential-401', 'gw-status-401-key'] }, async (t) => {
    // A well-formed key that no deployment issued (the request is shared with the error-envelope samples).
    const res = await invalidKeyListing();
    t.cite(res);
    expect(res.status, 'GET /v1/models with an invalid key').toBe(401);
    // And one without the sk- prefix, sent once the gateway has served the valid key (the run's first request): a
    // credential of another form is a bad credential too, not the last key the gateway saw.
    await verifyApiKey().catch(() => undefined);
    const other = await gatewayGet('/v1/models', { headers: { authorization: `Bearer ${madeUpCredential()}` } });
    t.cite(other);
    t.observe('without the sk- prefix', String(other.status));
    expect(other.status, 'GET /v1/models with a made-up credential without the sk- prefix').toBe(401);
  });
});
