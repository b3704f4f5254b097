/**
 * model-gateway-service.md — Authentication: the key placement table, generated from each operation's `security`
 * in specs/gateway/openapi.json. Acceptance is shown against a control: the same request without any credential
 * must be refused, so "not refused" really means "the key was taken". Requests name an unknown model, so none of
 * them generates (nothing is billed).
 */
import { describe } from 'vitest';
import { check, expect, precondition } from '../../src/harness.js';
import { once } from '../../src/context.js';
import {
  FORM_LABEL,
  FORM_REQUIREMENT,
  gatewaySend,
  gatewayOperations,
  minimalBody,
  placeKey,
  protocolHeaders,
  requireKey,
  unknownModel,
  type GatewayOperation,
} from '../../src/gateway.js';

const operations = (await gatewayOperations()).filter((o) => !o.websocket);
const REFUSED = [401, 403];

async function request(op: GatewayOperation, placement: ReturnType<typeof placeKey> | undefined) {
  const model = unknownModel();
  return gatewaySend(op.path(model), {
    method: op.method,
    headers: { ...protocolHeaders(op.operationId), ...(placement?.headers ?? {}) },
    query: placement?.query,
    body: minimalBody(op.operationId, model),
    // An unknown model: the answer is an error either way, and a 5xx is that answer, not unavailability.
    retry: 'rate-limits',
  });
}

/** The same request without a credential: it must be refused for acceptance to mean anything. */
const control = (op: GatewayOperation) => once(`control:${op.operationId}`, () => request(op, undefined));

describe('each key form is accepted where the table lists it', () => {
  for (const op of operations) {
    for (const form of op.forms) {
      check(
        {
          id: `gw-key-${form.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-on-${op.operationId.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
          title: `${op.method} ${op.display} accepts the key in ${FORM_LABEL[form]}`,
          requirements: [
            FORM_REQUIREMENT[form],
            'gw-key-one-for-all-protocols',
            'gw-auth-forms-equivalent',
            ...(form === 'bearer' ? ['gw-auth-bearer-keeps-prefix'] : []),
          ],
        },
        async (t) => {
          const key = requireKey(t, 'GATEWAY_API_KEY');
          const none = await control(op);
          t.cite(none);
          precondition(
            REFUSED.includes(none.status),
            `${op.method} ${op.display} without any credential answered ${none.status}, not 401/403, so acceptance of a key cannot be told apart`,
          );
          const res = await request(op, placeKey(form, key));
          t.observe('status with the key', String(res.status));
          expect(REFUSED, `${op.method} ${op.display} with the key in ${FORM_LABEL[form]} answered ${res.status}`).not.toContain(res.status);
        },
      );
    }
  }
});

describe('?key= does not work on vendor A interfaces', () => {
  for (const op of operations.filter((o) => o.family === 'vendor-a')) {
    check(
      {
        id: `gw-query-key-refused-on-${op.operationId.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
        title: `${op.method} ${op.display} refuses a key given as ?key=`,
        requirements: ['gw-auth-query-key-not-vendor-a'],
      },
      async (t) => {
        const key = requireKey(t, 'GATEWAY_API_KEY');
        const res = await request(op, placeKey('queryKey', key));
        expect(REFUSED, `${op.method} ${op.display}?key=… answered ${res.status}`).toContain(res.status);
      },
    );
  }
});
