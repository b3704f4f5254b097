/**
 * model-gateway-service.md — Endpoints; Errors > HTTP statuses; Versioning: request payloads per protocol, the
 * vendor B version header, unknown models, malformed bodies and unknown paths. Three small generations (one per
 * protocol; 16 tokens at most where the protocol takes a cap, and the chat completion without one, as vendor A
 * allows, on a one-word prompt) are the only billable calls of this file.
 */
import { check, expect, jsonBody, checkGroup } from '../../src/harness.js';
import {
  chosenModel,
  FORM_LABEL,
  FORM_REQUIREMENT,
  GENERATION_FORM,
  looseErrorCodes,
  gatewayOperations,
  gatewaySend,
  gw,
  minimalBody,
  protocolHeaders,
  requireValidKey,
  minimalGeneration,
  gatewayGet,
  keyTaken,
  unknownModel,
} from '../../src/gateway.js';
import { TargetUnavailableError, type HttpResponse } from '../../src/http.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** One small generation per protocol; paths and methods come from the OpenAPI description. */
const GENERATIONS = [
  {
    operationId: 'chatCompletions',
    id: 'gw-chat-completion-minimal',
    // The document's payload is model and messages, "other parameters are optional": no max_tokens.
    requirements: ['gw-chat-completions', 'gw-chat-max-tokens-optional'],
    payload: 'only model and messages (no max_tokens)',
  },
  { operationId: 'messages', id: 'gw-messages-minimal', requirements: ['gw-messages'], payload: 'model, max_tokens, messages and the version header' },
  { operationId: 'generateContent', id: 'gw-generate-content-minimal', requirements: ['gw-generate-content'], payload: 'contents/parts/text' },
];
const operations = await gatewayOperations();

checkGroup('a small generation per protocol', () => {
  for (const g of GENERATIONS) {
    const op = operations.find((o) => o.operationId === g.operationId)!;
    check(
      {
        id: g.id,
        title: `${op.method} ${op.display} with ${g.payload}, the key in ${FORM_LABEL[GENERATION_FORM[g.operationId]!]}, returns a generation result`,
        requirements: [...g.requirements, 'gw-path-families', FORM_REQUIREMENT[GENERATION_FORM[g.operationId]!]],
      },
      async (t) => {
        const key = await requireValidKey(t);
        const model = await chosenModel();
        // Shared with the uncredentialed-access check, whose control it is (one billable call, not two).
        const res = await minimalGeneration(op, key, model);
        t.cite(res);
        if (g.operationId === 'messages') t.observe('version header', `${gw().versionHeader}: ${gw().versionValue}`);
        expect(res.status, `${op.method} ${op.path(model)} (${g.payload})`).toBe(200);
        expect(jsonBody(res), 'a JSON object').toBeTypeOf('object');
      },
    );
  }
});

checkGroup('requests the gateway must refuse', () => {
  check(
    {
      id: 'gw-messages-without-max-tokens',
      title: 'POST /v1/messages without max_tokens is rejected with 400',
      requirements: ['gw-messages-max-tokens-required'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      const model = await chosenModel();
      const body = { model, messages: [{ role: 'user', content: 'Reply with the single word OK.' }] };
      const res = await gatewaySend('/v1/messages', { method: 'POST', headers: { ...bearer(key), ...protocolHeaders('messages') }, body, billable: true });
      keyTaken(res, 'POST /v1/messages');
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
        const key = await requireValidKey(t);
        const model = unknownModel();
        const op = path === '/v1/messages' ? 'messages' : 'chatCompletions';
        const res = await gatewaySend(path, {
          method: 'POST',
          headers: { ...bearer(key), ...protocolHeaders(op) },
          body: minimalBody(op, model),
          billable: true,
          retry: 'transient',
        });
        t.observe('status', String(res.status));
        keyTaken(res, `POST ${path}`);
        // The code wherever an envelope carries it (vendor B error.type, vendor A error.code): the envelope is its own check's.
        const codes = looseErrorCodes(res.body);
        t.observe('error code', String(path === '/v1/messages' ? codes[1] : codes[0]));
        expect(codes, `error code (${path === '/v1/messages' ? 'error.type' : 'error.code'}) of ${res.body.slice(0, 200)}`).toContain('model_not_found');
      },
    );
  }

  check({ id: 'gw-unknown-model-404', title: 'a model outside the key group answers 404', requirements: ['gw-unknown-model-404'] }, async (t) => {
    const key = await requireValidKey(t);
    const model = unknownModel();
    const res = await gatewaySend('/v1/chat/completions', {
      method: 'POST',
      headers: bearer(key),
      body: minimalBody('chatCompletions', model),
      billable: true,
      // A 429 is retried (rate limiting says nothing about the model); a 5xx is the answer, not retried.
      retry: 'transient',
    });
    keyTaken(res, 'POST /v1/chat/completions');
    expect(res.status, `POST /v1/chat/completions naming ${model}`).toBe(404);
  });

  check({ id: 'gw-malformed-json-400', title: 'a body that is not JSON is rejected with 400', requirements: ['gw-invalid-body-400'] }, async (t) => {
    const key = await requireValidKey(t);
    const send = () =>
      gatewaySend('/v1/chat/completions', {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: '{"model": "x", "messages": [',
      });
    let res: HttpResponse;
    try {
      // A 5xx is retried per the client rules (it may be transient) ...
      res = await send();
    } catch (e) {
      // A lasting 429 is rate limiting, whatever else the target answers: unavailable, not an answer to this body.
      if (!(e instanceof TargetUnavailableError) || e.status === undefined || e.status === 429) throw e;
      // ... but when the target answers other requests normally, the same answer every time is its answer to this request.
      const other = await gatewayGet('/v1/models', { headers: bearer(key) });
      if (other.status !== 200) throw e;
      return t.violation(
        `POST /v1/chat/completions with a truncated JSON body kept failing through the retries (${e.message.replace(/^target unavailable: /, '')}) while GET /v1/models answered 200: a consistent wrong status, not an outage; the document gives 400`,
      );
    }
    keyTaken(res, 'POST /v1/chat/completions');
    expect(res.status, 'POST /v1/chat/completions with a truncated JSON body').toBe(400);
  });

  check({ id: 'gw-unknown-path-404', title: 'a path that does not exist answers 404', requirements: ['gw-unknown-path-404'] }, async (t) => {
    const key = await requireValidKey(t);
    const res = await gatewaySend('/v1/conformance-no-such-path', { method: 'GET', headers: bearer(key) });
    expect(res.status, 'GET /v1/conformance-no-such-path').toBe(404);
  });
});
