/**
 * model-gateway-service.md — Authentication rules 5 to 8; States; Errors: the configured keys, each on the
 * authentication check (GET /v1/models), with the error exactly as the documents give it for that state: the
 * status, the error produced by the gateway itself (type gateway_error), and for the IP allow list its own code
 * (access_denied) and a message about the IP; a key whose account is disabled gets 403 (States, the 403 row), read where the vendor A envelope of /v1/models carries them. The
 * control of each refusal is the valid key answered 200 with a data array on the same path. A key that is not
 * configured skips its check, naming the variable.
 */
import { check, expect, precondition, type CheckTools, checkGroup } from '../../src/harness.js';
import {
  documentedSuccess,
  gatewayCodes,
  gatewayErrorInVendorA,
  FORM_LABEL,
  gatewayGet,
  type GatewayOperation,
  gatewayOperations,
  GW_CHECK_IDS,
  judge,
  KEY_STATES,
  type KeyForm,
  looseErrorCodes,
  pathServed,
  placeKey,
  requireKey,
  requireValidKey,
  shapeFor,
  takenForms,
  refusalRequirements,
  stateRequirements,
  typeNames,
  unknownModelRequest,
  vendorAFields,
  verifyApiKey,
  madeUpKey,
  IP_MESSAGE,
  expectIpMessage,
} from '../../src/gateway.js';
import { once, secret } from '../../src/context.js';
import { field, kebab } from '../../src/spec.js';

const parseOr = (body: string): unknown => {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
};
import type { HttpResponse } from '../../src/http.js';

const authCheck = (key: string, form: KeyForm = 'bearer') => gatewayGet('/v1/models', placeKey(form, key));
const operations = await gatewayOperations();
const listModels = operations.find((o) => o.operationId === 'listModels')!;

/** The valid key is answered 200 with a data array on the authentication check: a refusal is then about the key. */
async function control(t: CheckTools): Promise<void> {
  await requireValidKey(t);
  const first = (await verifyApiKey()).responses[0]!;
  t.cite(first);
  const j = judge(first, listModels);
  precondition(j.kind === 'accepted', `GET /v1/models with GATEWAY_API_KEY answered ${j.what}, not 200 with a data array: a refusal could not be told apart`);
}

/**
 * The key forms each key state is sent in on a path: every form the path takes. The forms are equivalent ("only one
 * is needed"), so a state must be refused in each, on each path: the whole product of key state, key form and path
 * (11 forms over the five paths, so seven rows of eleven requests, within the remote budget). A path's forms are
 * those the valid key is shown taken in there (takenForms: key-placement's requests, made once), the control's form
 * first.
 */
const pathForms = (op: GatewayOperation, valid: string) =>
  once(`key-forms:${op.operationId}`, async () => takenForms(op, valid, op.operationId === 'listModels' ? 'bearer' : (await pathServed(op, valid)).form));

/** `send` in every key form `op` takes, cited, with each form's status observed: each form and its answer, in order. */
async function inEveryForm(
  t: CheckTools,
  op: GatewayOperation,
  valid: string,
  send: (form: KeyForm) => Promise<HttpResponse>,
): Promise<[KeyForm, HttpResponse][]> {
  const forms = await pathForms(op, valid);
  const answers = await Promise.all(forms.map(send));
  t.cite(...answers);
  forms.forEach((form, k) => t.observe(`status (${FORM_LABEL[form]})`, String(answers[k]!.status)));
  return forms.map((form, k) => [form, answers[k]!]);
}

/** A key refusal is an error of the gateway itself: type gateway_error (the deployment's name for it). */
function expectGatewayError(t: CheckTools, res: HttpResponse, what: string): void {
  const { type, code } = vendorAFields(res.body);
  t.observe('error', `type ${JSON.stringify(type)}, code ${JSON.stringify(code)}`);
  expect(type, `error.type of the refusal of ${what} (the gateway's own error)`).toBe(typeNames().gatewayError);
  // "Codes with the channel: prefix come from upstream accounts, not from the request": the caller's own key is the request's.
  if (typeof code === 'string' && code.startsWith('channel:'))
    t.violation(`the refusal of ${what} carries code ${code}, an upstream account's code, for the request's own key`);
}

checkGroup('keys that must not pass the authentication check', () => {
  const cases = KEY_STATES.filter((st) => st.v !== 'GATEWAY_IP_DENIED_KEY').map((st) => ({
    ...st,
    id: GW_CHECK_IDS.keyState(st.slug, 'listModels'),
    title: `${st.what.replace(/^./, (c) => c.toUpperCase())} gets ${st.statuses.length === 1 ? st.statuses[0] : 'refused'} on the authentication check${st.alone ? '' : ', a gateway_error'}`,
    reqs: stateRequirements(st, 'gw-error-type-values', 'gw-auth-forms-equivalent'),
  }));
  for (const c of cases) {
    check({ id: c.id, title: `${c.title} (in every key form it takes)`, requirements: c.reqs }, async (t) => {
      const key = requireKey(t, c.v);
      await control(t);
      for (const [form, res] of await inEveryForm(t, listModels, secret('GATEWAY_API_KEY')!, (form) => authCheck(key, form))) {
        expect(res.status, `GET /v1/models with ${c.v} in ${FORM_LABEL[form]}`).toBeOneOf(c.statuses);
        // A state checked alone cites its own requirement only: its type is read on the other vendor A paths (below).
        if (!c.alone) expectGatewayError(t, res, `${c.v} in ${FORM_LABEL[form]}`);
      }
    });
  }

  check(
    {
      id: 'gw-ip-denied-403',
      title: 'a key whose IP allow list excludes the caller gets 403, code access_denied, with a message about the IP',
      requirements: ['gw-key-ip-allow-list', 'gw-error-type-values', 'gw-error-code-values', 'gw-auth-forms-equivalent'],
    },
    async (t) => {
      const key = requireKey(t, 'GATEWAY_IP_DENIED_KEY');
      await control(t);
      for (const [form, res] of await inEveryForm(t, listModels, secret('GATEWAY_API_KEY')!, (form) => authCheck(key, form))) {
        expect(res.status, `GET /v1/models from outside the allow list, the key in ${FORM_LABEL[form]}`).toBe(403);
        expectGatewayError(t, res, `GATEWAY_IP_DENIED_KEY in ${FORM_LABEL[form]}`);
        const { code, message } = vendorAFields(res.body);
        expect(
          code,
          `error.code of the IP allow-list refusal in ${FORM_LABEL[form]} (the code table: "access denied, for example IP not in the allow list")`,
        ).toBe('access_denied');
        expect(String(message), 'the error message').toMatch(IP_MESSAGE, 'a message that speaks of the IP');
      }
    },
  );
});

/** The unknown-model request of `op` with a key in a state, once per run (its refusal is judged twice: status, type). */
const stateRequest = (st: (typeof KEY_STATES)[number], op: GatewayOperation, key: string, form: KeyForm) =>
  once(`key-state:${st.slug}:${op.operationId}:${form}`, () => unknownModelRequest(op, placeKey(form, key)));

/**
 * The key rules are the same on every model interface: each state is refused on every path family (vendor A, B and
 * C, besides the model listing above; the realtime WebSocket in realtime.checks.ts), with the status the documents
 * give it. The request names an unknown model, so nothing generates if a state is wrongly served; its control is the
 * same request with the valid key, answered as documented (so a refusal is about the key, not the path).
 */
checkGroup('each key state is refused on every path family', () => {
  for (const op of operations.filter((o) => !o.websocket && o.operationId !== 'listModels')) {
    for (const st of KEY_STATES) {
      check(
        {
          id: GW_CHECK_IDS.keyState(st.slug, op.operationId),
          title: `${op.method} ${op.display} refuses ${st.what} with ${st.statuses.join(' or ')}, in every key form the path takes`,
          // The IP allow list's own code (access_denied), read here too; the forms are equivalent, so each is sent.
          requirements: stateRequirements(st, ...(st.v === 'GATEWAY_IP_DENIED_KEY' ? ['gw-error-code-values'] : []), 'gw-auth-forms-equivalent'),
        },
        async (t) => {
          const key = requireKey(t, st.v);
          const valid = await requireValidKey(t);
          const c = await pathServed(op, valid);
          t.cite(...c.evidence);
          precondition(c.served, `the same request with the valid key answered ${c.what}, not ${documentedSuccess(op)}: a refusal could not be told apart`);
          for (const [form, res] of await inEveryForm(t, op, valid, (form) => stateRequest(st, op, key, form))) {
            const where = `${op.method} ${op.display} with ${st.v} in ${FORM_LABEL[form]}`;
            if (res.status >= 200 && res.status < 300) t.violation(`${where} was served (${res.status})`);
            expect(res.status, `${where} (with the valid key: ${c.what})`).toBeOneOf(st.statuses);
            if (st.v !== 'GATEWAY_IP_DENIED_KEY') continue;
            // The IP allow list's own code and message, wherever the path's envelope carries them (on vendor C, whose
            // error body is not shown, where the refusal comes as a gateway_error in the vendor A envelope).
            if (shapeFor(op.display) || gatewayErrorInVendorA(res.body))
              expect(looseErrorCodes(res.body), `the error code of the IP allow-list refusal on ${op.display} (${FORM_LABEL[form]})`).toContain(
                'access_denied',
              );
            expectIpMessage(res.body);
          }
        },
      );
    }
  }
});

/** A well-formed key no deployment issued, one per run (never a secret: it names no account). */
const invalidKey = () => once('invalid-key-value', async () => madeUpKey());

/**
 * "An invalid, expired or disabled key gives 401": the invalid key needs no configuration, so it is sent on every
 * path (the model listing included, besides its Bearer check in models.checks.ts), in every key form the path
 * takes, with the path's unknown-model request.
 */
checkGroup('an invalid key is refused on every path', () => {
  for (const op of operations.filter((o) => !o.websocket)) {
    check(
      {
        id: `gw-invalid-key-refused-on-${kebab(op.operationId)}`,
        title: `${op.method} ${op.display} refuses a key no deployment issued with 401 (in every key form the path takes)`,
        // On the model listing this is its row's "401 on bad credential" too (models.checks.ts reads it with Bearer).
        requirements: [...(op.operationId === 'listModels' ? ['gw-models-bad-credential-401'] : []), 'gw-key-invalid-401', 'gw-status-401-key'],
      },
      async (t) => {
        const valid = await requireValidKey(t);
        const c = await pathServed(op, valid);
        t.cite(...c.evidence);
        precondition(c.served, `the same request with the valid key answered ${c.what}, not ${documentedSuccess(op)}: a refusal could not be told apart`);
        const key = await invalidKey();
        for (const [form, res] of await inEveryForm(t, op, valid, (form) => unknownModelRequest(op, placeKey(form, key)))) {
          const where = `${op.method} ${op.display} with a key no deployment issued in ${FORM_LABEL[form]}`;
          if (res.status >= 200 && res.status < 300) t.violation(`${where} was served (${res.status})`);
          expect(res.status, `${where} (with the valid key: ${c.what})`).toBe(401);
        }
        // On the listing also the valid key with one character more (a key compared by its first characters takes it).
        if (op.operationId === 'listModels') {
          const longer = await gatewayGet('/v1/models', { headers: { authorization: `Bearer ${valid}0` } });
          t.cite(longer);
          expect(longer.status, `GET ${op.display} with the valid key followed by one more character (Authorization: Bearer)`).toBe(401);
        }
      },
    );
  }
});

/**
 * A key refusal is produced by the gateway itself, on every path: where the path's envelope carries the type
 * (vendor A: error.type), it is gateway_error (the deployment's name for it), as on the model listing above. Vendor
 * B's error.type holds the code instead, and vendor C's body is not shown: nothing to read there.
 */
checkGroup('a key refusal is an error of the gateway itself on every path', () => {
  for (const op of operations.filter((o) => !o.websocket && o.operationId !== 'listModels' && shapeFor(o.display) === 'vendor-a')) {
    check(
      {
        id: GW_CHECK_IDS.keyRefusalType(op.operationId),
        title: `${op.method} ${op.display}: the refusal of a key in each state is a gateway_error, with no upstream account's channel: code`,
        requirements: ['gw-error-type-values', 'gw-error-code-values'],
      },
      async (t) => {
        const configured = KEY_STATES.filter((st) => secret(st.v));
        if (configured.length === 0) t.notConfigured(KEY_STATES.map((st) => st.v).join(', '));
        const served = await pathServed(op, await requireValidKey(t));
        t.cite(...served.evidence);
        precondition(served.served, `the same request with the valid key answered ${served.what}: a refusal could not be told apart`);
        let judged = 0;
        for (const st of configured)
          for (const form of await pathForms(op, secret('GATEWAY_API_KEY')!)) {
            const res = await stateRequest(st, op, secret(st.v)!, form);
            t.cite(res);
            // A state served or refused with another status is the key-state checks' finding; only refusals are read here.
            if (res.status !== 401 && res.status !== 403) continue;
            judged++;
            expectGatewayError(t, res, `${st.what} on ${op.display} (${FORM_LABEL[form]})`);
          }
        precondition(judged > 0, `no key state was refused with 401 or 403 on ${op.display}`, ...refusalRequirements(configured));
      },
    );
  }
});

/**
 * On vendor B's envelope (/v1/messages) error.type holds the code: a key refusal, the gateway's own error, names a
 * code of the code tables there (the exhausted key's insufficient_user_quota is the document's own example).
 */
checkGroup('a key refusal names a code of the code tables where the envelope holds only the code', () => {
  for (const op of operations.filter((o) => !o.websocket && shapeFor(o.display) === 'vendor-b')) {
    check(
      {
        id: `gw-key-refusal-code-on-${kebab(op.operationId)}`,
        title: `${op.method} ${op.display}: the refusal of a key in each state carries a code of the code tables in error.type`,
        requirements: ['gw-error-code-values'],
      },
      async (t) => {
        const configured = KEY_STATES.filter((st) => secret(st.v));
        if (configured.length === 0) t.notConfigured(KEY_STATES.map((st) => st.v).join(', '));
        const served = await pathServed(op, await requireValidKey(t));
        t.cite(...served.evidence);
        precondition(served.served, `the same request with the valid key answered ${served.what}: a refusal could not be told apart`);
        const codes = await gatewayCodes();
        let judged = 0;
        let refused = 0;
        for (const st of configured)
          for (const form of await pathForms(op, secret('GATEWAY_API_KEY')!)) {
            const res = await stateRequest(st, op, secret(st.v)!, form);
            t.cite(res);
            if (res.status >= 400) refused++;
            // Only a vendor B envelope (top-level type "error") holds the code in error.type; another envelope is gw-error-shape-vendor-b's finding.
            if (res.status < 400 || field(parseOr(res.body), 'type') !== 'error') continue;
            judged++;
            const code = looseErrorCodes(res.body)[1];
            t.observe(`code (${st.slug}, ${FORM_LABEL[form]})`, JSON.stringify(code));
            expect(code, `error.type (the code) of the refusal of ${st.what} on ${op.display} (${FORM_LABEL[form]})`).toBeOneOf([...codes]);
          }
        precondition(
          judged > 0,
          refused > 0
            ? `${refused} key state(s) refused on ${op.display}, none in the vendor B envelope: no error.type to read the code from`
            : `no key state was refused on ${op.display}`,
          ...(refused > 0 ? ['gw-error-shape-vendor-b'] : refusalRequirements(configured)),
        );
      },
    );
  }
});
