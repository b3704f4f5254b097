/**
 * model-gateway-service.md — Endpoints: the Responses-style operation (vendor A). Its path is not shown in the
 * document (the profile names it), and some models do not support it, so this is recorded, not required: a MAY.
 */
import { describe } from 'vitest';
import { check } from '../../src/harness.js';
import { gatewaySend, looseErrorCodes, gw, minimalBody, requireValidKey, unknownModel } from '../../src/gateway.js';

describe('the Responses-style operation', () => {
  check(
    {
      id: 'gw-responses-path-present',
      title: 'the Responses-style operation answers at its profile path (model and input)',
      requirements: ['gw-responses-operation'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      // An unknown model: no generation. A present operation answers model_not_found; an absent path answers otherwise.
      const res = await gatewaySend(gw().responsesPath, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: minimalBody('responses', unknownModel()),
        retry: false,
      });
      const code = res.status >= 400 ? looseErrorCodes(res.body)[0] : undefined;
      const present = code === 'model_not_found';
      t.observe('Responses-style operation', present ? `present at ${gw().responsesPath}` : `not recognised at ${gw().responsesPath} (status ${res.status})`);
      if (!present)
        t.violation(
          `${gw().responsesPath} did not answer as the Responses-style operation (status ${res.status}, code ${JSON.stringify(code)}); set the profile's responsesPath if it lives elsewhere`,
        );
    },
  );
});
