/**
 * model-gateway-service.md — Endpoints; Errors > HTTP statuses; Versioning: request payloads per protocol, the
 * vendor B version header, unknown models, malformed bodies and unknown paths. Three small generations (one per
 * protocol, max 16 tokens each) are the only billable calls of this file.
 */
import { describe } from 'vitest';
import { check, expect, jsonBody } from '../../src/harness.js';

import { chosenModel, errorCode, expectErrorShape, gatewaySend, gw, minimalBody, protocolHeaders, requireKey, unknownModel } from '../../src/gateway.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('a small generation per protocol', () => {
  check(
    {
      id: 'gw-chat-completion-minimal',
      title: 'POST /v1/chat/completions with model and messages returns a generation result',
      requirements: ['gw-chat-completions', 'gw-path-families'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_API_KEY');
      const model = await chosenModel();
      const res = await gatewaySend('/v1/chat/completions', {
        method: 'POST',
        headers: bearer(key),
        body: minimalBody('chatCompletions', model),
        billable: true,
      });
      expect(res.status, 'POST /v1/chat/completions').toBe(200);
      expect(jsonBody(res), 'a JSON object').toBeTypeOf('object');
    },
  );

  check(
    {
      id: 'gw-messages-minimal',
      title: 'POST /v1/messages with model, max_tokens, messages and the version header returns a generation result',
      requirements: ['gw-messages', 'gw-path-families'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_API_KEY');
      const model = await chosenModel();
      const res = await gatewaySend('/v1/messages', {
        method: 'POST',
        headers: { ...bearer(key), ...protocolHeaders('messages') },
        body: minimalBody('messages', model),
        billable: true,
      });
      t.observe('version header', `${gw().versionHeader}: ${gw().versionValue}`);
      expect(res.status, 'POST /v1/messages').toBe(200);
      expect(jsonBody(res), 'a JSON object').toBeTypeOf('object');
    },
  );

  check(
    {
      id: 'gw-generate-content-minimal',
      title: 'POST /v1beta/models/{model}:generateContent with contents/parts/text returns a generation result',
      requirements: ['gw-generate-content', 'gw-path-families'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_API_KEY');
      const model = await chosenModel();
      const res = await gatewaySend(`/v1beta/models/${encodeURIComponent(model)}:generateContent`, {
        method: 'POST',
        headers: bearer(key),
        body: minimalBody('generateContent', model),
        billable: true,
      });
      expect(res.status, 'POST :generateContent').toBe(200);
      expect(jsonBody(res), 'a JSON object').toBeTypeOf('object');
    },
  );
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
