/**
 * model-gateway-service.md — Endpoints; Errors > HTTP statuses; Versioning: request payloads per protocol, the
 * vendor B version header, unknown models, malformed bodies and unknown paths. Three small generations (one per
 * protocol; 16 tokens at most where the protocol takes a cap, and the chat completion without one, as vendor A
 * allows, on a one-word prompt) are the only billable calls of this file.
 */
import { check, expect, fail, jsonBody, checkGroup, precondition, PreconditionFailed } from '../../src/harness.js';
import {
  chosenModel,
  defectAnswer,
  FORM_LABEL,
  FORM_REQUIREMENT,
  gatewayGet,
  gatewayOperations,
  gatewaySend,
  GENERATION_FORM,
  gw,
  GW_CHECK_IDS,
  keyTaken,
  looseErrorCodes,
  minimalBody,
  minimalGeneration,
  PAYLOAD_OPERATIONS,
  protocolHeaders,
  requireServedKey,
  requireValidKey,
  shapeFor,
  gatewayErrorInVendorA,
  typeNames,
  unknownModelRequest,
} from '../../src/gateway.js';
import { once } from '../../src/context.js';
import { kebab } from '../../src/spec.js';
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

/**
 * The body that is not JSON sent to an operation: a truncated one on the paths that come first, on the others a whole
 * JSON object with text after it (a parser that stops at the end of the first value takes it), in turns so that both
 * forms are sent without another request.
 */
function notJsonForm(operationId: string): { trailing: boolean; notJson: string; body: string } {
  const trailing = PAYLOAD_OPERATIONS.indexOf(operationId) % 2 === 1;
  return trailing
    ? { trailing, notJson: 'a JSON object with text after it', body: `${JSON.stringify(minimalBody(operationId, 'x'))} and text after it` }
    : { trailing, notJson: 'a truncated JSON body', body: '{"model": "x", "messages": [' };
}

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
      const op = operations.find((o) => o.operationId === 'messages')!;
      const res = await defectAnswer(t, op, model, key, (retry = true) =>
        gatewaySend(op.path(model), { method: op.method, headers: { ...bearer(key), ...protocolHeaders('messages') }, body, billable: true, retry }),
      );
      keyTaken(res, 'POST /v1/messages');
      expect(res.status, 'POST /v1/messages without max_tokens').toBe(400);
    },
  );

  // Each generation path: an unknown model and a body that is not JSON are refused there as on the others.
  for (const op of operations.filter((o) => PAYLOAD_OPERATIONS.includes(o.operationId))) {
    const where = `${op.method} ${op.display}`;
    /** A body that is not JSON, once per path (its status and its code are two checks). */
    const { trailing, notJson, body: notJsonBody } = notJsonForm(op.operationId);
    const malformed = async (key: string) => {
      const path = op.path(await chosenModel());
      return once(`malformed-json:${op.operationId}`, () =>
        gatewaySend(path, {
          method: op.method,
          headers: { ...bearer(key), ...protocolHeaders(op.operationId), 'content-type': 'application/json' },
          body: notJsonBody,
        }),
      );
    };
    /** The request naming an unknown model, once per path (the code and the status are two checks). */
    // Billable: with the valid key, a gateway that does not refuse the model serves it.
    const unknown = (key: string) => once(`unknown-model:${op.operationId}`, () => unknownModelRequest(op, { headers: bearer(key) }, true));
    check(
      {
        id: GW_CHECK_IDS.unknownModelCode(op.operationId),
        title: `${op.display}: a request naming an unknown model answers an error whose code is model_not_found`,
        requirements: ['gw-unknown-model-code'],
      },
      async (t) => {
        const key = await requireServedKey(t, op);
        const res = await unknown(key);
        t.cite(res);
        t.observe('status', String(res.status));
        keyTaken(res, where);
        // The code wherever an envelope carries it (vendor B error.type, vendor A error.code): the envelope is its own check's.
        const codes = looseErrorCodes(res.body);
        const vendorB = op.operationId === 'messages';
        t.observe('error code', String(vendorB ? codes[1] : codes[0]));
        expect(codes, `error code (${vendorB ? 'error.type' : 'error.code'}) of ${res.body.slice(0, 200)}`).toContain('model_not_found');
      },
    );
    check(
      {
        id: GW_CHECK_IDS.unknownModel404(op.operationId),
        title: `${op.display}: a model outside the key group answers 404`,
        requirements: ['gw-unknown-model-404'],
      },
      async (t) => {
        const key = await requireServedKey(t, op);
        const res = await unknown(key);
        t.cite(res);
        keyTaken(res, where);
        expect(res.status, `${where} naming an unknown model`).toBe(404);
      },
    );
    check(
      {
        id: GW_CHECK_IDS.malformedJson(op.operationId),
        title: `${op.display}: a body that is not JSON is rejected with 400`,
        requirements: ['gw-invalid-body-400'],
      },
      async (t) => {
        const key = await requireServedKey(t, op);
        let res: HttpResponse;
        try {
          // A 5xx is retried per the client rules (it may be transient) ...
          res = await malformed(key);
        } catch (e) {
          // A lasting 429 is rate limiting, whatever else the target answers: unavailable, not an answer to this body.
          if (!(e instanceof TargetUnavailableError) || e.status === undefined || e.status === 429) throw e;
          // ... but when the target answers other requests normally, the same answer every time is its answer to this request.
          const other = await gatewayGet('/v1/models', { headers: bearer(key) });
          if (other.status !== 200) throw e;
          return t.violation(
            `${where} with ${notJson} kept failing through the retries (${e.message.replace(/^target unavailable: /, '')}) while GET /v1/models answered 200: a consistent wrong status, not an outage; the document gives 400`,
          );
        }
        keyTaken(res, where);
        expect(res.status, `${where} with ${notJson}`).toBe(400);
      },
    );
    // An empty body is no JSON either ("Bodies are JSON"): refused with 400; its code is read by the run-wide checks.
    // On chat completions only (the remote budget): a body that is not JSON is sent to every operation above.
    if (op.operationId === 'chatCompletions')
      check(
        {
          id: `gw-empty-body-400-${kebab(op.operationId)}`,
          title: `${op.display}: a POST with an empty body is rejected with 400`,
          requirements: ['gw-invalid-body-400'],
        },
        async (t) => {
          const key = await requireServedKey(t, op);
          const res = await gatewaySend(op.path(await chosenModel()), {
            method: op.method,
            headers: { ...bearer(key), ...protocolHeaders(op.operationId), 'content-type': 'application/json' },
            body: '',
            retry: 'transient',
          });
          t.cite(res);
          keyTaken(res, where);
          t.observe('error code', String(looseErrorCodes(res.body)[shapeFor(op.display) === 'vendor-b' ? 1 : 0]));
          expect(res.status, `${where} with an empty body`).toBe(400);
        },
      );
    // The code of the refusal, where the path's envelope carries one: vendor C's error body is not shown, so there it
    // is read where the refusal comes in the vendor A envelope (error.type and error.code strings), as vendor A's.
    const shape = shapeFor(op.display);
    check(
      {
        id: GW_CHECK_IDS.malformedJsonCode(op.operationId),
        title: `${op.display}: the refusal of a body that is not JSON has code bad_request_body${trailing ? ' (or invalid_request: it is a JSON object with text after it)' : ''}`,
        requirements: ['gw-error-code-values'],
      },
      async (t) => {
        const key = await requireServedKey(t, op);
        let res: HttpResponse;
        try {
          res = await malformed(key);
        } catch (e) {
          throw new PreconditionFailed(`${where} with ${notJson} got no answer (${(e as Error).message})`);
        }
        t.cite(res);
        precondition(res.status === 400, `${where} answered ${res.status} to ${notJson} (its status is gw-invalid-body-400's finding)`);
        // On vendor C, a refusal another party typed (an upstream's, passed through) carries no code of the tables.
        if (!shape && !gatewayErrorInVendorA(res.body))
          return t.notApplicable(
            `the refusal on ${op.display} (vendor C, whose error body the document does not show) is not a ${typeNames().gatewayError} in the vendor A envelope: no code of the tables to read`,
          );
        // The code wherever an envelope carries it (vendor A error.code, vendor B error.type): the envelope is its own check's.
        const codes = looseErrorCodes(res.body);
        t.observe('error code', String(shape === 'vendor-b' ? codes[1] : codes[0]));
        // A JSON object with text after it parses up to its end: "request invalid" reads it too (two readings, both taken).
        const accepted = trailing ? ['bad_request_body', 'invalid_request'] : ['bad_request_body'];
        if (!codes.some((c) => accepted.includes(String(c))))
          fail(`the code of the refusal (error.code, or error.type on vendor B) of ${res.body.slice(0, 200)} is none of ${accepted.join(', ')}`);
      },
    );
  }
});

checkGroup('a path that does not exist', () => {
  check(
    {
      id: 'gw-unknown-path-404',
      title: 'a path that does not exist answers 404, to GET (the listing method) and to POST (the generation method), under /v1 and /v1beta',
      requirements: ['gw-unknown-path-404'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      const path = '/v1/conformance-no-such-path';
      const got = await gatewaySend(path, { method: 'GET', headers: bearer(key) });
      t.cite(got);
      expect(got.status, `GET ${path}`).toBe(404);
      // "404 | path does not exist": whatever the method (a 405 says the path exists).
      const posted = await gatewaySend(path, { method: 'POST', headers: bearer(key), body: { model: await chosenModel() } });
      t.cite(posted);
      expect(posted.status, `POST ${path}`).toBe(404);
      // Under the vendor C family too (a front end's fallback route must not answer there).
      const beta = '/v1beta/conformance-no-such-path';
      const underBeta = await gatewaySend(beta, { method: 'GET', headers: bearer(key) });
      t.cite(underBeta);
      expect(underBeta.status, `GET ${beta}`).toBe(404);
    },
  );
});
