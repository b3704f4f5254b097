/**
 * model-gateway-service.md — Endpoints; Errors > HTTP statuses; Versioning: request payloads per protocol, the
 * vendor B version header, unknown models, malformed bodies and unknown paths. Three small generations (one per
 * protocol, max 16 tokens each) are the only billable calls of this file.
 */
import { describe } from 'vitest';
import { check, expect, jsonBody } from '../../src/harness.js';
import {
  chosenModel,
  errorCode,
  expectErrorShape,
  gatewayOperations,
  gatewaySend,
  gw,
  minimalBody,
  protocolHeaders,
  requireKey,
  unknownModel,
} from '../../src/gateway.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** One small generation per protocol; paths and methods come from the OpenAPI description. */
const GENERATIONS = [
  { operationId: 'chatCompletions', id: 'gw-chat-completion-minimal', requirement: 'gw-chat-completions', payload: 'model and messages' },
  { operationId: 'messages', id: 'gw-messages-minimal', requirement: 'gw-messages', payload: 'model, max_tokens, messages and the version header' },
  { operationId: 'generateContent', id: 'gw-generate-content-minimal', requirement: 'gw-generate-content', payload: 'contents/parts/text' },
];
const operations = await gatewayOperations();

describe('a small generation per protocol', () => {
  for (const g of GENERATIONS) {
    const op = operations.find((o) => o.operationId === g.operationId)!;
    check(
      {
        id: g.id,
        title: `${op.method} ${op.display} with ${g.payload} returns a generation result`,
        requirements: [g.requirement, 'gw-path-families'],
      },
      async (t) => {
        const key = requireKey(t, 'GATEWAY_API_KEY');
        const model = await chosenModel();
        const res = await gatewaySend(op.path(model), {
          method: op.method,
          headers: { ...bearer(key), ...protocolHeaders(g.operationId) },
          body: minimalBody(g.operationId, model),
          billable: true,
        });
        if (g.operationId === 'messages') t.observe('version header', `${gw().versionHeader}: ${gw().versionValue}`);
        expect(res.status, `${op.method} ${op.path(model)}`).toBe(200);
        expect(jsonBody(res), 'a JSON object').toBeTypeOf('object');
      },
    );
  }
});

describe('requests the gateway must refuse', () => {
  check(
    {
      id: 'gw-messages-without-max-tokens',
      title: 'POST /v1/messages without max_tokens is rejected with 400',
      requirements: ['gw-messages-max-tokens-required'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_API_KEY');
      const model = await chosenModel();
      const body = { model, messages: [{ role: 'user', content: 'Reply with the single word OK.' }] };
      const res = await gatewaySend('/v1/messages', { method: 'POST', headers: { ...bearer(key), ...protocolHeaders('messages') }, body, billable: true });
      expect(res.status, 'POST /v1/messages without max_tokens').toBe(400);
    },
  );

  for (const path of ['/v1/chat/completions', '/v1/messages']) {
    check(
      {
        id: `gw-unknown-model-code-${path === '/v1/messages' ? 'messages' : 'chat'}`,
        title: `${path}: a request naming an unknown model answers an error whose code is model_not_found`,
        requirements: ['gw-unknown-model-code'],
      },
      async (t) => {
        const key = requireKey(t, 'GATEWAY_API_KEY');
        const model = unknownModel();
        const op = path === '/v1/messages' ? 'messages' : 'chatCompletions';
        const res = await gatewaySend(path, {
          method: 'POST',
          headers: { ...bearer(key), ...protocolHeaders(op) },
          body: minimalBody(op, model),
          billable: true,
          retry: 'rate-limits',
        });
        t.observe('status', String(res.status));
        expect(await errorCode(res, path), `error code (${path === '/v1/messages' ? 'error.type' : 'error.code'})`).toBe('model_not_found');
      },
    );
  }

  check({ id: 'gw-unknown-model-404', title: 'a model outside the key group answers 404', requirements: ['gw-unknown-model-404'] }, async (t) => {
    const key = requireKey(t, 'GATEWAY_API_KEY');
    const model = unknownModel();
    const res = await gatewaySend('/v1/chat/completions', {
      method: 'POST',
      headers: bearer(key),
      body: minimalBody('chatCompletions', model),
      billable: true,
      retry: false,
    });
    expect(res.status, `POST /v1/chat/completions naming ${model}`).toBe(404);
  });

  check({ id: 'gw-malformed-json-400', title: 'a body that is not JSON is rejected with 400', requirements: ['gw-invalid-body-400'] }, async (t) => {
    const key = requireKey(t, 'GATEWAY_API_KEY');
    const res = await gatewaySend('/v1/chat/completions', {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: '{"model": "x", "messages": [',
    });
    expect(res.status, 'POST /v1/chat/completions with a truncated JSON body').toBe(400);
    await expectErrorShape(res, 'vendor-a');
  });

  check({ id: 'gw-unknown-path-404', title: 'a path that does not exist answers 404', requirements: ['gw-unknown-path-404'] }, async (t) => {
    const key = requireKey(t, 'GATEWAY_API_KEY');
    const res = await gatewaySend('/v1/conformance-no-such-path', { method: 'GET', headers: bearer(key) });
    expect(res.status, 'GET /v1/conformance-no-such-path').toBe(404);
  });
});
