/**
 * model-gateway-service.md — Endpoints: the Responses-style operation (vendor A). Its path is not shown in the
 * document (the profile names it), and some models do not support it, so this is recorded, not required: a MAY.
 */
import { check, checkGroup } from '../../src/harness.js';
import { bearerControl, gatewayOperations, keyTaken, looseErrorCodes, gw, pathServed, requireValidKey } from '../../src/gateway.js';

checkGroup('the Responses-style operation', () => {
  check(
    {
      id: 'gw-responses-path-present',
      title: 'the Responses-style operation answers at its profile path (model and input)',
      requirements: ['gw-responses-operation'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      // An unknown model: no generation. A present operation answers it as chat completions (vendor A, the same
      // key) answer an unknown model; an absent path answers otherwise (404 of a path that does not exist).
      const ops = await gatewayOperations();
      const res = await bearerControl(
        ops.find((o) => o.operationId === 'responses')!,
        key,
      );
      const chat = await bearerControl(
        ops.find((o) => o.operationId === 'chatCompletions')!,
        key,
      );
      t.cite(res, chat);
      keyTaken(res, `POST ${gw().responsesPath}`);
      const code = res.status >= 400 ? looseErrorCodes(res.body)[0] : undefined;
      const chatCode = chat.status >= 400 ? looseErrorCodes(chat.body)[0] : undefined;
      // Or told from a missing path whatever its code (the code is gw-unknown-model-code's): pathServed's control.
      const served = await pathServed(
        ops.find((o) => o.operationId === 'responses')!,
        key,
      );
      t.cite(...served.evidence);
      const present = served.served || (res.status === chat.status && code === chatCode && chat.status !== 401 && chat.status !== 403);
      t.observe('Responses-style operation', present ? `present at ${gw().responsesPath}` : `not recognised at ${gw().responsesPath} (status ${res.status})`);
      if (!present)
        t.violation(
          `${gw().responsesPath} did not answer as the Responses-style operation (status ${res.status}, code ${JSON.stringify(code)}); set the profile's responsesPath if it lives elsewhere`,
        );
    },
  );
});
