/**
 * model-gateway-service.md — Endpoints ("Every request carries a credential"); Authentication: the key placement
 * table, generated from each operation's `security` in specs/gateway/openapi.json.
 *
 * Acceptance is the documented success of an authenticated request (GET /v1/models: 200 with a data array; a
 * generation path: 2xx, or for an unknown model the error the document gives it, code model_not_found), not
 * "anything but 401/403". Every refusal has a control: the same request with a valid key in Authorization: Bearer
 * (valid on all paths) is shown accepted first, so "refused" never just means "the path does not exist". The
 * key-form requests name an unknown model, so none of them generates; the uncredentialed requests are the run's own
 * small generations without the key, so an open gateway shows itself by generating.
 */
import { check, expect, precondition, checkGroup } from '../../src/harness.js';
import {
  bearerControl,
  chosenModel,
  documentedSuccess,
  FORM_LABEL,
  FORM_REQUIREMENT,
  gatewaySend,
  gatewayOperations,
  judge,
  minimalBody,
  minimalGeneration,
  placeKey,
  protocolHeaders,
  requireValidKey,
  unknownModelRequest,
  type GatewayOperation,
} from '../../src/gateway.js';
import type { HttpResponse } from '../../src/http.js';

const operations = (await gatewayOperations()).filter((o) => !o.websocket);
const REFUSED = [401, 403];
const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** Generations the run makes anyway (requests.test.ts): their uncredentialed twin is the request an open gateway would serve. */
const GENERATES = new Set(['chatCompletions', 'messages', 'generateContent']);

/** The control of a refusal on `op`: the same request with the valid key, shown accepted. */
async function acceptedControl(op: GatewayOperation, key: string): Promise<{ control: HttpResponse; model?: string }> {
  if (GENERATES.has(op.operationId)) {
    const model = await chosenModel();
    return { control: await minimalGeneration(op, key, model), model };
  }
  return { control: await bearerControl(op, key) };
}

checkGroup('a request without any credential is refused with 401', () => {
  for (const op of operations) {
    check(
      {
        id: `gw-no-credential-refused-on-${kebab(op.operationId)}`,
        title: `${op.method} ${op.display} without any credential answers 401, never a success`,
        requirements: ['gw-credential-required'],
      },
      async (t) => {
        const key = await requireValidKey(t);
        const { control, model } = await acceptedControl(op, key);
        t.cite(control);
        const c = judge(control, op);
        precondition(
          c.kind === 'accepted',
          `the same request with the valid key answered ${c.what}, not ${documentedSuccess(op)}: a refusal without a key could not be told from a path that does not exist`,
        );
        const m = model ?? 'conformance-no-such-model';
        // The control's request, the credential left out (a generation when the gateway is open: billable if served).
        const res = model
          ? await gatewaySend(op.path(m), {
              method: op.method,
              headers: protocolHeaders(op.operationId),
              body: minimalBody(op.operationId, m, op.operationId === 'chatCompletions' ? null : 16),
              billable: true,
              retry: 'transient',
            })
          : await unknownModelRequest(op, undefined);
        t.observe('status without a credential', String(res.status));
        if (res.status >= 200 && res.status < 300)
          t.violation(`${op.method} ${op.display} served a request that carried no credential (${res.status}); with the key it answered ${c.what}`);
        expect(res.status, `${op.method} ${op.display} without any credential (with the key: ${c.what})`).toBe(401);
      },
    );
  }
});

checkGroup('each key form is accepted where the table lists it', () => {
  for (const op of operations) {
    for (const form of op.forms) {
      check(
        {
          id: `gw-key-${kebab(form)}-on-${kebab(op.operationId)}`,
          title: `${op.method} ${op.display} accepts the key in ${FORM_LABEL[form]}`,
          requirements: [
            FORM_REQUIREMENT[form],
            'gw-key-one-for-all-protocols',
            'gw-auth-forms-equivalent',
            ...(form === 'bearer' ? ['gw-auth-bearer-keeps-prefix'] : []),
          ],
        },
        async (t) => {
          const key = await requireValidKey(t);
          const res = form === 'bearer' ? await bearerControl(op, key) : await unknownModelRequest(op, placeKey(form, key));
          t.cite(res);
          const j = judge(res, op);
          t.observe('answer with the key', j.what);
          if (j.kind === 'accepted') return;
          if (j.kind === 'refused') t.violation(`${op.method} ${op.display} refused the key in ${FORM_LABEL[form]} (${res.status})`);
          // Neither accepted nor refused: the form's fault only when the same request with Bearer is answered as documented.
          const control = form === 'bearer' ? res : await bearerControl(op, key);
          t.cite(control);
          const c = judge(control, op);
          precondition(
            c.kind === 'accepted',
            `${op.method} ${op.display} answered ${j.what} with the key in ${FORM_LABEL[form]}, and ${c.what} with Authorization: Bearer: neither is ${documentedSuccess(op)}, so whether the key was taken cannot be shown`,
          );
          t.violation(
            `${op.method} ${op.display} with the key in ${FORM_LABEL[form]} answered ${j.what}, not ${documentedSuccess(op)}; the same request with Authorization: Bearer answered ${c.what}`,
          );
        },
      );
    }
  }
});

checkGroup('?key= does not work on vendor A interfaces', () => {
  for (const op of operations.filter((o) => o.family === 'vendor-a')) {
    check(
      {
        id: `gw-query-key-refused-on-${kebab(op.operationId)}`,
        title: `${op.method} ${op.display} refuses a key given as ?key=`,
        requirements: ['gw-auth-query-key-not-vendor-a'],
      },
      async (t) => {
        const key = await requireValidKey(t);
        const control = await bearerControl(op, key);
        t.cite(control);
        const c = judge(control, op);
        precondition(
          c.kind === 'accepted',
          `the same request with the key in Authorization: Bearer answered ${c.what}, not ${documentedSuccess(op)}: a refusal of ?key= could not be told from a path that does not exist`,
        );
        const res = await unknownModelRequest(op, placeKey('queryKey', key));
        if (!REFUSED.includes(res.status)) {
          // Taken as a key, or served without one? The latter is the uncredentialed-access check's failure, not this one.
          const none = await unknownModelRequest(op, undefined);
          t.cite(none);
          precondition(
            REFUSED.includes(none.status),
            `${op.method} ${op.display} answered ${none.status} to the same request without any credential: whether ?key= was taken as a key cannot be told`,
          );
        }
        expect(REFUSED, `${op.method} ${op.display}?key=… answered ${res.status} (with Bearer: ${c.what})`).toContain(res.status);
      },
    );
  }
});
