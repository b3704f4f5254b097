/**
 * model-gateway-service.md — Errors > Body shapes, type values, code values: the envelope of each protocol, and
 * redaction (a credential sent never comes back).
 */
import { randomBytes } from 'node:crypto';
import { check, expect, precondition, checkGroup } from '../../src/harness.js';
import type { HttpResponse } from '../../src/http.js';
import { http, once } from '../../src/context.js';
import {
  bearerControl,
  chosenModel,
  gatewayOperations,
  invalidKeyListing,
  expectErrorShape,
  vendorAFields,
  gatewayCodes,
  gatewaySend,
  minimalBody,
  protocolHeaders,
  requireValidKey,
  typeNames,
  unknownModel,
  madeUpKey,
} from '../../src/gateway.js';

/** Errors of each protocol, provoked without generating anything. */
const samples = (key: string) =>
  once('gateway-error-samples', async () => {
    const model = unknownModel();
    // The invalid key's listing and each protocol's unknown-model request with the key are the run's own (made once).
    const ops = await gatewayOperations();
    const op = (id: string) => ops.find((o) => o.operationId === id)!;
    const vendorA = [await invalidKeyListing(), await bearerControl(op('chatCompletions'), key)];
    const vendorB = [
      await bearerControl(op('messages'), key),
      await gatewaySend('/v1/messages', {
        method: 'POST',
        headers: { 'x-api-key': madeUpKey(), ...protocolHeaders('messages') },
        body: minimalBody('messages', model),
      }),
    ];
    return { vendorA, vendorB };
  });

/** The samples that are errors (whether each request was refused as it should be is its own check's business). */
function errorsOf(samples: HttpResponse[]): HttpResponse[] {
  const errors = samples.filter((r) => r.status >= 400);
  precondition(errors.length > 0, `none of the requests that provoke errors got one (${samples.map((r) => r.status).join(', ')})`);
  return errors;
}

checkGroup('error envelopes', () => {
  check(
    { id: 'gw-vendor-a-error-shape', title: 'vendor A errors are {error: {message, type, param, code}}', requirements: ['gw-error-shape-vendor-a'] },
    async (t) => {
      const { vendorA } = await samples(await requireValidKey(t));
      t.cite(...vendorA);
      for (const res of errorsOf(vendorA)) await expectErrorShape(res, 'vendor-a');
    },
  );

  check(
    {
      id: 'gw-vendor-b-error-shape',
      title: 'errors on /v1/messages are {type: "error", error: {type: <code>, message}}',
      requirements: ['gw-error-shape-vendor-b'],
    },
    async (t) => {
      const { vendorB } = await samples(await requireValidKey(t));
      t.cite(...vendorB);
      for (const res of errorsOf(vendorB)) await expectErrorShape(res, 'vendor-b');
    },
  );

  check({ id: 'gw-error-type-from-table', title: "error.type is one of the type table's values", requirements: ['gw-error-type-values'] }, async (t) => {
    const { vendorA } = await samples(await requireValidKey(t));
    t.cite(...vendorA);
    const { deployed } = typeNames();
    for (const res of errorsOf(vendorA)) {
      const { type } = vendorAFields(res.body);
      expect(type, `error.type of ${new URL(res.url).pathname}`).toBeOneOf([...deployed]);
    }
  });

  check(
    { id: 'gw-error-code-from-tables', title: "when type is gateway_error, code is one of the code tables' values", requirements: ['gw-error-code-values'] },
    async (t) => {
      const { vendorA } = await samples(await requireValidKey(t));
      t.cite(...vendorA);
      const codes = await gatewayCodes();
      let seen = 0;
      for (const res of errorsOf(vendorA)) {
        const { type, code } = vendorAFields(res.body);
        if (type !== typeNames().gatewayError) continue;
        seen++;
        expect(code, `error.code of a gateway_error on ${new URL(res.url).pathname}`).toBeOneOf([...codes]);
      }
      if (seen === 0) t.notApplicable('none of the provoked errors had type gateway_error');
    },
  );
});

checkGroup('redaction', () => {
  check(
    {
      id: 'gw-canary-key-not-echoed',
      title: 'a credential the gateway is sent never comes back in a body or header',
      requirements: ['gw-error-message-redacted'],
    },
    async (t) => {
      const canary = `sk-conformance-canary-${randomBytes(12).toString('hex')}`;
      // Redact the canary from every recorded exchange too: the report must not carry it either.
      http().opts.redactor.add('CONFORMANCE_CANARY_KEY', canary);
      const model = await chosenModel().catch(() => 'conformance-model');
      const responses = [
        await gatewaySend('/v1/models', { method: 'GET', headers: { authorization: `Bearer ${canary}` } }),
        await gatewaySend('/v1/models', { method: 'GET', query: { key: canary } }),
        await gatewaySend('/v1/messages', {
          method: 'POST',
          headers: { 'x-api-key': canary, ...protocolHeaders('messages') },
          body: minimalBody('messages', model),
        }),
        await gatewaySend('/v1/chat/completions', {
          method: 'POST',
          headers: { authorization: `Bearer ${canary}` },
          body: minimalBody('chatCompletions', model),
        }),
      ];
      const secretPart = canary.slice('sk-conformance-canary-'.length);
      for (const res of responses) {
        const echoed = [res.body, ...Object.values(res.headers)].some((v) => v.includes(secretPart));
        if (echoed) t.violation(`${new URL(res.url).pathname} (${res.status}) echoed the credential it was sent`);
      }
    },
  );
});
