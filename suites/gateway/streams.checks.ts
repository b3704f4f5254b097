/**
 * model-gateway-service.md — Authentication rules 5 to 8; Errors > HTTP statuses; Endpoints ("A request naming an
 * unknown model answers with an error whose code is `model_not_found`", "Bodies are JSON"): the same refusals on
 * requests that ask for a stream (`"stream": true` on chat completions, messages and the Responses-style operation).
 * An error that precedes a stream keeps its documented status and its protocol's JSON error body: a 200 event stream,
 * or an error event inside one, is not the documented answer. The requests name an unknown model (nothing generates)
 * but for the broken bodies, which name the run's model (a gateway that serves them bills a few tokens). Each refusal
 * has its control: the same request without `"stream": true` and with the valid key answered as documented.
 * `"stream": false` is no stream: the answer is a JSON body (two small generations, the run's only billable calls here).
 */
import { check, checkGroup, expect, precondition, jsonBody, type CheckTools } from '../../src/harness.js';
import {
  chosenModel,
  documentedSuccess,
  type GatewayOperation,
  gatewayOperations,
  gatewaySend,
  GW_CHECK_IDS,
  isEventStream,
  KEY_REFUSED,
  KEY_STATES,
  type KeyForm,
  keyTaken,
  looseErrorCodes,
  minimalBody,
  requiredOnlyBody,
  pathServed,
  payloadExamples,
  placeKey,
  protocolHeaders,
  requireKey,
  requireValidKey,
  shapeFor,
  refusalRequirements,
  stateRequirements,
  streamedRequest,
  defectAnswer,
  STREAM_OPERATIONS,
  takenForms,
  FORM_LABEL,
  FORM_REQUIREMENT,
  expectFormRefused,
  formRefusedRequirement,
  LIMITED_FORMS,
  typeNames,
  judge,
  unknownModel,
  vendorAFields,
  expectIpMessage,
} from '../../src/gateway.js';
import { once, secret } from '../../src/context.js';
import type { HttpResponse } from '../../src/http.js';
import type { JsonSchema } from '../../src/spec.js';

const operations = (await gatewayOperations()).filter((o) => STREAM_OPERATIONS.includes(o.operationId));

/** The path takes the valid key (its unknown-model request answered as documented): a refusal is then about what changed. */
async function served(t: CheckTools, op: GatewayOperation): Promise<{ key: string; form: KeyForm }> {
  const key = await requireValidKey(t);
  const c = await pathServed(op, key);
  t.cite(...c.evidence);
  precondition(c.served, `the same request without "stream": true and with the valid key answered ${c.what}, not ${documentedSuccess(op)}`);
  return { key, form: c.form };
}

/**
 * An answer to a streamed request that must be refused before the stream: never a 2xx (a stream served, or one carrying
 * the error as an event), the documented status, no event stream, a JSON body.
 */
async function refusedBeforeStream(t: CheckTools, op: GatewayOperation, res: HttpResponse, statuses: number[], what: string): Promise<void> {
  t.cite(res);
  t.observe('answer', `${res.status} ${res.header('content-type') ?? '(no content type)'}`);
  const where = `${op.method} ${op.display} with "stream": true and ${what}`;
  if (res.status >= 200 && res.status < 300)
    t.violation(
      `${where} answered ${res.status}${isEventStream(res) ? ' with an event stream' : ''}: an error that precedes a stream keeps its status and body`,
    );
  expect(res.status, where).toBeOneOf(statuses);
  expect(isEventStream(res), `${where}: the refusal answered as an event stream (text/event-stream)`).toBe(false);
  // A JSON body: whether it is the protocol's envelope is the run-wide envelope check's finding (it reads this one too).
  jsonBody(res);
}

/** A JSON text that asks for a stream and breaks off where its prompt starts (the operation's `messages` array or `input` string). */
function truncatedStreamBody(op: GatewayOperation, model: string): string {
  const body = minimalBody(op.operationId, model) as Record<string, unknown>;
  const prompt = Object.keys(body).find((k) => k !== 'model' && typeof body[k] !== 'number')!;
  return `{"model": ${JSON.stringify(model)}, "stream": true, ${JSON.stringify(prompt)}: ${JSON.stringify(body[prompt]).slice(0, 1)}`;
}

/**
 * A key state's streamed request on `op`, once per run (its status and its type are two checks). The states take turns
 * over the forms the path was shown to take the valid key in (the key-state order, from the form the valid key was
 * first served in): every form a streamed request on the path reads is met by some state, for the requests of one form.
 */
async function stateStream(t: CheckTools, st: (typeof KEY_STATES)[number], op: GatewayOperation, key: string): Promise<{ res: HttpResponse; form: KeyForm }> {
  const { key: valid, form: first } = await served(t, op);
  // The forms a streamed request was shown to read the valid key in (its unknown-model answer, the check below): a
  // handler that does not read a form when the request streams is that rule's finding, not a key state's.
  const forms: KeyForm[] = [];
  for (const f of await takenForms(op, valid, first)) if (judge(await streamForm(op, f, valid), op).kind === 'accepted') forms.push(f);
  if (forms.length === 0) forms.push(first);
  const form = forms[KEY_STATES.indexOf(st) % forms.length]!;
  const res = await once(`stream-key-state:${st.slug}:${op.operationId}`, () => streamedRequest(op, unknownModel(), placeKey(form, key)));
  return { res, form };
}

/** The valid key's streamed unknown-model request of `op` in `form`, once per run (the unknown-model check and the state turns). */
const streamForm = (op: GatewayOperation, form: KeyForm, key: string) =>
  once(`stream-form:${form}:${op.operationId}`, () => streamedRequest(op, unknownModel(), placeKey(form, key)));

/** The streamed request of `op` without any credential, once per run (its check, and the refused-form checks' control). */
const noCredentialStream = (op: GatewayOperation) => once(`stream-no-credential:${op.operationId}`, () => streamedRequest(op, unknownModel(), undefined));

// "Every request carries a credential": a streamed request without one is refused before any stream, as a plain one is.
checkGroup('a streamed request without any credential is refused', () => {
  for (const op of operations) {
    check(
      {
        id: GW_CHECK_IDS.streamNoCredential(op.operationId),
        title: `${op.method} ${op.display} with "stream": true and no credential answers 401 and a JSON error, not a stream`,
        requirements: ['gw-credential-required'],
      },
      async (t) => {
        await served(t, op);
        await refusedBeforeStream(t, op, await noCredentialStream(op), [401], 'no credential');
      },
    );
  }
});

/**
 * "Where to put the key" holds for a streamed request as for any other: a form the Authentication table does not list
 * for the path is no credential there, and the request is refused before any stream (?key= explicitly: "It works only
 * on vendor C paths and /v1/models"). A streaming handler that reads every form lets the key in.
 */
checkGroup('a streamed request with the key in a form its path does not list is refused', () => {
  for (const op of operations) {
    for (const form of LIMITED_FORMS.filter((f) => !op.forms.includes(f))) {
      check(
        {
          id: GW_CHECK_IDS.streamFormRefused(form, op.operationId),
          title: `${op.method} ${op.display} with "stream": true refuses a key given in ${FORM_LABEL[form]}, before any stream`,
          requirements: [formRefusedRequirement(form)],
        },
        async (t) => {
          const { key } = await served(t, op);
          const res = await streamedRequest(op, unknownModel(), placeKey(form, key));
          t.cite(res);
          t.observe('answer', `${res.status} ${res.header('content-type') ?? '(no content type)'}`);
          // Its status only: the body and media type of a refusal before a stream are the no-credential check's finding.
          // Taken as a key, or streamed without one? The latter is the streamed no-credential check's failure.
          await expectFormRefused(t, res, () => noCredentialStream(op), {
            open: (status) =>
              `${op.method} ${op.display} with "stream": true answered ${status} without any credential: it takes no key there, so no form can be refused (gw-credential-required's finding)`,
            refused: `${op.method} ${op.display} with "stream": true and the key in ${FORM_LABEL[form]} (not listed for the path)`,
          });
        },
      );
    }
  }
});

// "The forms are equivalent": a path reads the key in each form it takes whether or not the request streams (a
// streaming route whose auth middleware reads one header only refuses the others). The valid key's streamed
// unknown-model request in each form the path was shown to take it in (the requests the unknown-model check makes).
checkGroup('a streamed request reads the key in every form its path takes', () => {
  for (const op of operations) {
    check(
      {
        id: GW_CHECK_IDS.streamKeyForms(op.operationId),
        title: `${op.method} ${op.display} with "stream": true takes the valid key in every form the path takes it in without "stream" (no 401 or 403)`,
        requirements: ['gw-auth-forms-equivalent', ...op.forms.map((f) => FORM_REQUIREMENT[f])],
      },
      async (t) => {
        const { key, form: first } = await served(t, op);
        for (const form of await takenForms(op, key, first)) {
          const res = await streamForm(op, form, key);
          t.cite(res);
          t.observe(`answer (${FORM_LABEL[form]})`, String(res.status));
          if (KEY_REFUSED.includes(res.status))
            t.violation(
              `${op.method} ${op.display} with "stream": true and the valid key in ${FORM_LABEL[form]} answered ${res.status}: the path takes the key in that form when the request does not stream`,
            );
        }
      },
    );
  }
});

checkGroup('the refusals that precede a stream', () => {
  for (const op of operations) {
    for (const st of KEY_STATES) {
      check(
        {
          id: GW_CHECK_IDS.streamKeyState(st.slug, op.operationId),
          title: `${op.method} ${op.display} with "stream": true refuses ${st.what} with ${st.statuses.join(' or ')} and a JSON error, not a stream`,
          requirements: st.v === 'GATEWAY_IP_DENIED_KEY' ? stateRequirements(st, 'gw-error-code-values') : st.reqs,
        },
        async (t) => {
          const stateKey = requireKey(t, st.v);
          // The state's key in its turn of the forms the valid key was shown taken in.
          const { res, form } = await stateStream(t, st, op, stateKey);
          t.observe('key form', FORM_LABEL[form]);
          await refusedBeforeStream(t, op, res, st.statuses, st.what);
          if (st.v !== 'GATEWAY_IP_DENIED_KEY') return;
          if (shapeFor(op.display))
            expect(looseErrorCodes(res.body), `the error code of the IP allow-list refusal on ${op.display}`).toContain('access_denied');
          expectIpMessage(res.body);
        },
      );
    }

    if (shapeFor(op.display) === 'vendor-a')
      check(
        {
          id: GW_CHECK_IDS.streamKeyRefusalType(op.operationId),
          title: `${op.method} ${op.display} with "stream": true: the refusal of a key in each state is a gateway_error`,
          requirements: ['gw-error-type-values'],
        },
        async (t) => {
          const configured = KEY_STATES.filter((st) => secret(st.v));
          if (configured.length === 0) t.notConfigured(KEY_STATES.map((st) => st.v).join(', '));
          await served(t, op);
          let judged = 0;
          for (const st of configured) {
            const { res } = await stateStream(t, st, op, secret(st.v)!);
            t.cite(res);
            if (res.status !== 401 && res.status !== 403) continue;
            judged++;
            const { type, code } = vendorAFields(res.body);
            t.observe(`error (${st.slug})`, `type ${JSON.stringify(type)}, code ${JSON.stringify(code)}`);
            expect(type, `error.type of the refusal of ${st.what} on a streamed ${op.display} (the gateway's own error)`).toBe(typeNames().gatewayError);
          }
          precondition(judged > 0, `no key state was refused with 401 or 403 on a streamed ${op.display}`, ...refusalRequirements(configured));
        },
      );

    // An unknown model and a body that is not JSON are refused before any generation, whether or not the model could
    // stream: held on every operation that streams, the Responses-style one included.
    check(
      {
        id: GW_CHECK_IDS.streamUnknownModel(op.operationId),
        title: `${op.method} ${op.display} with "stream": true naming an unknown model answers 404 with code model_not_found, not a stream, in each key form the path takes`,
        requirements: ['gw-unknown-model-404', 'gw-unknown-model-code'],
      },
      async (t) => {
        const { key, form: first } = await served(t, op);
        // In each key form the path takes the valid key in: a streamed request reads its key as any other.
        for (const form of await takenForms(op, key, first)) {
          const res = await streamForm(op, form, key);
          keyTaken(res, `${op.method} ${op.display} (the key in ${FORM_LABEL[form]})`);
          await refusedBeforeStream(t, op, res, [404], `an unknown model, the key in ${FORM_LABEL[form]}`);
          t.observe(`error code (${FORM_LABEL[form]})`, String(looseErrorCodes(res.body)[op.operationId === 'messages' ? 1 : 0]));
          expect(looseErrorCodes(res.body), `the error code of ${res.body.slice(0, 200)}`).toContain('model_not_found');
        }
      },
    );

    check(
      {
        id: GW_CHECK_IDS.streamMalformedJson(op.operationId),
        title: `${op.method} ${op.display}: a truncated JSON body asking for a stream answers 400 (code bad_request_body), not a stream`,
        requirements: shapeFor(op.display) ? ['gw-invalid-body-400', 'gw-error-code-values'] : ['gw-invalid-body-400'],
      },
      async (t) => {
        const { key } = await served(t, op);
        const model = await chosenModel();
        const res = await streamedRequest(op, model, { headers: { authorization: `Bearer ${key}` } }, truncatedStreamBody(op, model));
        keyTaken(res, `${op.method} ${op.display}`);
        await refusedBeforeStream(t, op, res, [400], 'a truncated JSON body');
        if (!shapeFor(op.display)) return;
        const codes = looseErrorCodes(res.body);
        expect(codes, `the code of the refusal (error.code, or error.type on vendor B) of ${res.body.slice(0, 200)}`).toContain('bad_request_body');
      },
    );
  }
});

/**
 * The payload the operation's own table row requires, left out (its first required field after `model`: messages,
 * input, max_tokens), in a body that is valid JSON and asks for a stream: the broken payloads of payloads.checks.ts,
 * held on the streamed transport too.
 */
function brokenStreamBody(op: GatewayOperation, model: string): { label: string; body: unknown } {
  const schema = (op.op as { requestBody?: { content: Record<string, { schema: JsonSchema }> } }).requestBody!.content['application/json']!.schema;
  const { fixed } = payloadExamples(schema, requiredOnlyBody(op.operationId, model));
  return fixed.find((b) => b.label.startsWith('without ') && b.label !== 'without model')!;
}

checkGroup('a broken payload asking for a stream answers 400', () => {
  for (const op of operations) {
    check(
      {
        id: GW_CHECK_IDS.streamBrokenPayload(op.operationId),
        title: `${op.method} ${op.display} with "stream": true and a body without a required field answers 400, not a stream`,
        requirements: ['gw-request-payload-400'],
      },
      async (t) => {
        const { key } = await served(t, op);
        const model = await chosenModel();
        const broken = brokenStreamBody(op, model);
        t.observe('body', broken.label);
        const res = await defectAnswer(t, op, model, key, (retry) =>
          streamedRequest(op, model, { headers: { authorization: `Bearer ${key}` } }, broken.body, retry),
        );
        keyTaken(res, `${op.method} ${op.display}`);
        await refusedBeforeStream(t, op, res, [400], `a body ${broken.label}`);
      },
    );
  }
});

/** The endpoint requirement a well-formed request of each operation is served under. */
const SERVES: Record<string, string> = { chatCompletions: 'gw-chat-completions', messages: 'gw-messages', generateContent: 'gw-generate-content' };

/** A small generation with `"stream": false`: what a client that does not stream may send (the default of each protocol). */
checkGroup('"stream": false is not a stream', () => {
  for (const op of operations.filter((o) => o.operationId !== 'responses')) {
    check(
      {
        id: GW_CHECK_IDS.streamFalseJson(op.operationId),
        title: `${op.method} ${op.display} with "stream": false answers a JSON body, not an event stream`,
        requirements: ['gw-stream-false-json', ...(SERVES[op.operationId] ? [SERVES[op.operationId]!] : [])],
      },
      async (t) => {
        const key = await requireValidKey(t);
        const model = await chosenModel();
        const res = await gatewaySend(op.path(model), {
          method: op.method,
          headers: { authorization: `Bearer ${key}`, ...protocolHeaders(op.operationId) },
          body: { ...(minimalBody(op.operationId, model) as object), stream: false },
          billable: true,
        });
        t.cite(res);
        keyTaken(res, `${op.method} ${op.display}`);
        t.observe('answer', `${res.status} ${res.header('content-type') ?? '(no content type)'}`);
        expect(isEventStream(res), `${op.method} ${op.display} with "stream": false answered an event stream (text/event-stream)`).toBe(false);
        // The request is the protocol's documented payload ("other parameters are optional"), a listed model and the
        // valid key: a 400 ("invalid body") or another request defect refuses a well-formed request.
        if (res.status >= 400 && res.status < 500 && ![401, 403, 404, 429].includes(res.status))
          t.violation(`${op.method} ${op.display}, a well-formed request with "stream": false, answered ${res.status}: ${res.body.slice(0, 200)}`);
        precondition(
          res.status >= 200 && res.status < 300,
          `${op.method} ${op.display} with "stream": false answered ${res.status} (the generation checks judge it)`,
        );
        expect(jsonBody(res), `the body of ${op.method} ${op.display} with "stream": false (a JSON generation result)`).toBeTypeOf('object');
      },
    );
  }
});
