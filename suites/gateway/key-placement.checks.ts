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
import { check, expect, precondition, checkGroup, type CheckTools } from '../../src/harness.js';
import {
  bearerControl,
  chosenModel,
  documentedSuccess,
  FORM_LABEL,
  FORM_REQUIREMENT,
  formRefusedRequirement,
  expectFormRefused,
  formRequest,
  type GatewayOperation,
  gatewayOperations,
  gatewaySend,
  GW_CHECK_IDS,
  judge,
  KEY_REFUSED,
  type KeyForm,
  LIMITED_FORMS,
  looseErrorCodes,
  requiredOnlyBody,
  minimalGeneration,
  noCredentialRequest,
  pathServed,
  placeKey,
  protocolHeaders,
  requireKey,
  requireValidKey,
  unknownModelRequest,
  verifyApiKey,
} from '../../src/gateway.js';
import type { HttpResponse } from '../../src/http.js';
import { kebab } from '../../src/spec.js';

const operations = (await gatewayOperations()).filter((o) => !o.websocket);
/** Generations the run makes anyway (requests.checks.ts): their uncredentialed twin is the request an open gateway would serve. */
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
        id: GW_CHECK_IDS.noCredential(op.operationId),
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
              body: requiredOnlyBody(op.operationId, m),
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

checkGroup('the key is taken whole', () => {
  check(
    {
      id: 'gw-auth-prefix-kept',
      title: 'the key is taken with its sk- prefix in the Authorization value, not only without it',
      requirements: ['gw-auth-bearer-keeps-prefix'],
    },
    async (t) => {
      requireKey(t, 'GATEWAY_API_KEY');
      const v = await verifyApiKey();
      t.cite(...v.responses);
      if (v.unprefixedAccepted)
        t.violation(
          `GET /v1/models refused GATEWAY_API_KEY in every documented form and accepted "Authorization: Bearer" with the key stripped of its sk- prefix`,
        );
      if (v.refused) t.notConfigured(v.message!, 'key-refused');
      // Accepted in some form: whether Bearer takes it whole on each path is gw-key-bearer-on-*'s finding.
      t.observe('the key as configured', `accepted (${v.responses.map((r) => r.status).join(', ')})`);
    },
  );
});

const listedIds = (res: HttpResponse): string[] => {
  try {
    const data = (JSON.parse(res.body) as { data?: unknown }).data;
    return Array.isArray(data) ? data.map((e) => String((e as { id?: unknown } | null)?.id)).sort() : [];
  } catch {
    return [];
  }
};

/**
 * "The forms are equivalent" and the protocols "differ only in where the key is placed": the same key's listing in
 * another form names the models its Bearer listing names. A difference is read once more with Bearer (the listing may
 * have changed between the two) before it is a departure.
 */
async function sameListing(t: CheckTools, op: GatewayOperation, key: string, res: HttpResponse, form: KeyForm): Promise<void> {
  const ids = listedIds(res).join('\n');
  let control = await bearerControl(op, key);
  // Bearer's own listing is the comparison: when it is no listing, that is Bearer's check's finding, nothing to compare.
  if (judge(control, op).kind !== 'accepted') return;
  if (listedIds(control).join('\n') !== ids) control = await unknownModelRequest(op, placeKey('bearer', key));
  t.cite(control);
  if (judge(control, op).kind !== 'accepted') return;
  const bearerIds = listedIds(control);
  if (bearerIds.join('\n') !== ids)
    t.violation(
      `${op.method} ${op.display} with the key in ${FORM_LABEL[form]} listed ${listedIds(res).length} model(s) [${listedIds(res).slice(0, 5).join(', ')}], with Authorization: Bearer ${bearerIds.length} [${bearerIds.slice(0, 5).join(', ')}]: the forms are equivalent`,
    );
}

checkGroup('each key form is accepted where the table lists it', () => {
  for (const op of operations) {
    for (const form of op.forms) {
      check(
        {
          id: GW_CHECK_IDS.formAccepted(form, op.operationId),
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
          const res = await formRequest(op, form, key);
          t.cite(res);
          const j = judge(res, op);
          t.observe('answer with the key', j.what);
          if (j.kind === 'accepted') {
            if (op.operationId === 'listModels' && form !== 'bearer') await sameListing(t, op, key, res, form);
            return;
          }
          if (j.kind === 'refused') t.violation(`${op.method} ${op.display} refused the key in ${FORM_LABEL[form]} (${res.status})`);
          // Neither accepted nor refused: the form's fault only when the same request with Bearer is answered as documented.
          const control = form === 'bearer' ? res : await bearerControl(op, key);
          t.cite(control);
          const c = judge(control, op);
          if (c.kind !== 'accepted') {
            // The unknown-model answer itself departs (its code is another requirement's): the key was taken when the
            // path serves the valid key and this form is answered exactly as Bearer is, while no credential is refused.
            const served = await pathServed(op, key);
            const none = await noCredentialRequest(op);
            t.cite(...served.evidence, none);
            const same = res.status === control.status && looseErrorCodes(res.body).join() === looseErrorCodes(control.body).join();
            if (served.served && same && KEY_REFUSED.includes(none.status)) {
              t.observe('answer with the key', `${j.what}, as with Authorization: Bearer (without a credential: ${none.status})`);
              return;
            }
          }
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

// "The key forms are equivalent; one is enough": a client that sends the key in two of a path's forms at once (a
// proxy adding a header, an SDK and a wrapper each placing it) is answered as with one. Bearer and the path's next
// form, the valid key in both; the valid key's answer in Bearer alone is the control.
checkGroup('the key in two forms at once', () => {
  for (const op of operations.filter((o) => o.forms.length > 1)) {
    const other = op.forms.find((f) => f !== 'bearer')!;
    check(
      {
        id: `gw-two-forms-${kebab(op.operationId)}`,
        title: `${op.method} ${op.display} takes the key sent in Authorization: Bearer and in ${FORM_LABEL[other]} at once`,
        requirements: ['gw-auth-forms-equivalent'],
      },
      async (t) => {
        const key = await requireValidKey(t);
        const control = await bearerControl(op, key);
        t.cite(control);
        precondition(
          judge(control, op).kind === 'accepted',
          `${op.method} ${op.display} answered ${judge(control, op).what} with the key in Authorization: Bearer`,
        );
        const both = placeKey(other, key);
        const res = await unknownModelRequest(op, { headers: { authorization: `Bearer ${key}`, ...both.headers }, query: both.query });
        t.cite(res);
        const j = judge(res, op);
        t.observe('answer with the key in both', j.what);
        if (j.kind !== 'accepted')
          t.violation(
            `${op.method} ${op.display} with the key in Authorization: Bearer and ${FORM_LABEL[other]} answered ${j.what}, where Bearer alone is taken`,
          );
      },
    );
  }
});

/**
 * Each form of the Authentication table works only on the paths it lists: on any other path it is no credential,
 * and the request is refused as one without any (?key= explicitly: "It works only on vendor C paths and /v1/models").
 */
checkGroup('a key form works only on the paths the table lists for it', () => {
  for (const op of operations) {
    for (const form of LIMITED_FORMS.filter((f) => !op.forms.includes(f))) {
      check(
        {
          id: GW_CHECK_IDS.formRefused(form, op.operationId, op.family),
          title: `${op.method} ${op.display} refuses a key given in ${FORM_LABEL[form]}`,
          requirements: [formRefusedRequirement(form)],
        },
        async (t) => {
          const key = await requireValidKey(t);
          const c = await pathServed(op, key);
          t.cite(...c.evidence);
          precondition(
            c.served,
            `the same request with the key in Authorization: Bearer answered ${c.what}, not ${documentedSuccess(op)}: a refusal of ${FORM_LABEL[form]} could not be told from a path that does not exist`,
          );
          const res = await unknownModelRequest(op, placeKey(form, key));
          // Taken as a key, or served without one? The latter is the uncredentialed-access check's failure, not this one.
          await expectFormRefused(t, res, () => noCredentialRequest(op), {
            open: (status) =>
              `${op.method} ${op.display} answered ${status} to the same request without any credential: it takes no key at all, so no form can be refused there (gw-credential-required's finding)`,
            refused: `${op.method} ${op.display} with the key in ${FORM_LABEL[form]} (with Bearer: ${c.what})`,
          });
        },
      );
    }
  }
});
