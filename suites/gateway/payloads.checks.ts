/**
 * model-gateway-service.md — Endpoints (the request payload of each protocol); Errors > HTTP statuses (400: invalid
 * body). Every way to break a payload against its OpenAPI request schema, one defect at a time (a required field left
 * out, a field of another type than the table states), and more of them generated with fast-check: each answers 400.
 * The bodies name the run's model, so a gateway that refuses them refuses the body, not the model; one that serves
 * them bills a few tokens (counted as billable).
 */
import { check, expect, checkGroup } from '../../src/harness.js';
import {
  chosenModel,
  defectAnswer,
  gatewayOperations,
  gatewaySend,
  GW_CHECK_IDS,
  keyTaken,
  requiredOnlyBody,
  PAYLOAD_OPERATIONS,
  payloadExamples,
  placeKey,
  protocolHeaders,
  requireServedKey,
} from '../../src/gateway.js';
import { property } from '../../src/generate.js';
import type { JsonSchema } from '../../src/spec.js';

const operations = await gatewayOperations();

checkGroup('a body that breaks its documented payload answers 400', () => {
  for (const op of operations.filter((o) => PAYLOAD_OPERATIONS.includes(o.operationId))) {
    check(
      {
        id: GW_CHECK_IDS.brokenPayload(op.operationId),
        title: `${op.method} ${op.display}: a body without a required field, or with a field of another type, answers 400`,
        requirements: ['gw-request-payload-400'],
      },
      async (t) => {
        const key = await requireServedKey(t, op);
        const model = await chosenModel();
        const schema = (op.op as { requestBody?: { content: Record<string, { schema: JsonSchema }> } }).requestBody!.content['application/json']!.schema;
        // Chat completions without max_tokens: the table states its type for vendor B only ("other parameters are optional" on vendor A).
        const { fixed, generated } = payloadExamples(schema, requiredOnlyBody(op.operationId, model));
        t.observe('broken bodies', `${fixed.length} fixed (each required field left out, each typed field retyped twice)`);
        const placed = placeKey('bearer', key);
        await property(
          generated,
          async (b) => {
            // A 5xx is this body's answer, not an outage; an outage's 503 is retried (and one on every try is set
            // against the same model's valid request: defectAnswer).
            const res = await defectAnswer(t, op, model, key, (retry = 'transient') =>
              gatewaySend(op.path(model), {
                method: op.method,
                headers: { ...placed.headers, ...protocolHeaders(op.operationId) },
                body: b.body,
                billable: true,
                retry,
              }),
            );
            keyTaken(res, `${op.method} ${op.display}`);
            expect(res.status, `${op.method} ${op.display} with a body ${b.label}`).toBe(400);
          },
          { runs: 0, examples: fixed },
        );
      },
    );
  }
});
