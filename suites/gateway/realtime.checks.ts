/**
 * model-gateway-service.md — Authentication rule 4: the realtime WebSocket takes the key as the second of three
 * subprotocols; Endpoints: every request carries a credential. The path is GATEWAY_REALTIME_PATH (default from the
 * profile). Every refusal has a control: the handshake with the valid key is shown opening a session first, so a
 * refusal is never just a path that does not exist (a wrong realtime path answers 404 to every handshake).
 */
import { describe } from 'vitest';
import { check, expect, precondition } from '../../src/harness.js';
import {
  chosenModel,
  gw,
  GW_CHECK_IDS,
  KEY_STATES,
  expectIpMessage,
  looseErrorCodes,
  openRealtime,
  realtimeControl,
  realtimeProtocols,
  requireKey,
  requireValidKey,
  statedLimit,
  unknownModel,
  type WsOutcome,
  madeUpKey,
} from '../../src/gateway.js';
import type { CheckTools } from '../../src/harness.js';
import { once, runContext } from '../../src/context.js';

/**
 * A subprotocol is an HTTP token (RFC 6455 §4.1; RFC 9110 §5.6.2): a credential with other characters (the '/', '+'
 * and '=' of random or base64 text, as new-api's management access token has) cannot be offered by any WebSocket
 * client, so the realtime interface cannot be reached with it at all: nothing to check there.
 */
const SUBPROTOCOL_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const describeOutcome = (r: WsOutcome) => (r.opened ? 'a session opened' : r.status ? `HTTP ${r.status}` : (r.error ?? 'closed'));

/**
 * The document does not show the realtime path: GATEWAY_REALTIME_PATH (or the profile's default) names it. A 404 to
 * the handshake with the valid key says the path is not the deployment's — a configuration problem naming the
 * variable, not a realtime rule the target broke.
 */
function requireRealtimePath(r: WsOutcome): void {
  precondition(
    r.opened || r.status !== 404,
    `GATEWAY_REALTIME_PATH=${runContext().realtimePath}: the realtime handshake with the valid key answered 404 there (no WebSocket endpoint at that path). The document does not show the realtime path: set GATEWAY_REALTIME_PATH to the deployment's`,
  );
}

/** The handshake with the valid key opens a session, or the refusal checks cannot be decided. */
async function shownOpening(t: CheckTools, key: string): Promise<WsOutcome> {
  const control = await realtimeControl(key, await chosenModel());
  precondition(
    control.opened,
    `the handshake with the valid key in the subprotocols did not open a session (${describeOutcome(control)}): a refusal could not be told from a realtime path that does not exist (set GATEWAY_REALTIME_PATH)`,
  );
  t.observe('control', 'the handshake with the valid key opened a session');
  return control;
}

/** The handshake without any credential: the realtime and beta subprotocols, no key. */
const noCredential = async () =>
  once('realtime-no-credential', async () => openRealtime({ protocols: [gw().realtimeProtocol, gw().realtimeBetaProtocol], model: await chosenModel() }));

/** A configured key (`v`) that the subprotocols cannot carry is not offered on the handshake: the check is not applicable. */
function offerable(t: CheckTools, v: string, key: string): void {
  if (!realtimeProtocols(key).every((p) => SUBPROTOCOL_TOKEN.test(p)))
    t.notApplicable(
      `${v} holds characters a WebSocket subprotocol cannot carry (a subprotocol is an HTTP token, RFC 6455 §4.1), so no client can offer it on the realtime WebSocket`,
    );
}

// One handshake at a time: a WebSocket upgrade is never retried, so it is not sent into a burst of other requests.
describe.sequential('the realtime WebSocket', () => {
  check(
    {
      id: 'gw-realtime-subprotocol-key',
      title: 'the key in Sec-WebSocket-Protocol, as three subprotocols, opens a session; the server selects one of them',
      requirements: ['gw-auth-websocket-subprotocol'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      const r = await realtimeControl(key, await chosenModel());
      requireRealtimePath(r);
      expect(r.opened, `a realtime session opened (the handshake: ${describeOutcome(r)})`).toBe(true);
      t.observe('selected subprotocol', r.protocol ? (r.protocol.startsWith(gw().realtimeKeyProtocolPrefix) ? '(the key subprotocol)' : r.protocol) : '(none)');
      expect(r.protocol, 'the subprotocol the server selected').toBeOneOf(realtimeProtocols(key));
    },
  );

  check(
    {
      id: 'gw-realtime-bad-key-refused',
      title: 'a bad key in the subprotocols is refused with 401',
      requirements: ['gw-auth-websocket-subprotocol', 'gw-key-invalid-401'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      await shownOpening(t, key);
      const r = await openRealtime({ protocols: realtimeProtocols(madeUpKey()), model: await chosenModel() });
      t.observe('refusal', describeOutcome(r));
      expect(r.opened, 'a session opened with an invalid key').toBe(false);
      expect(r.status, `the handshake with an invalid key (${describeOutcome(r)})`).toBe(401);
    },
  );

  check(
    {
      id: 'gw-realtime-no-credential-refused',
      title: 'a realtime handshake without any credential is refused with 401',
      requirements: ['gw-credential-required'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      await shownOpening(t, key);
      const r = await noCredential();
      t.observe('refusal', describeOutcome(r));
      expect(r.opened, 'a realtime session opened without any credential').toBe(false);
      expect(r.status, `the handshake without any credential (${describeOutcome(r)})`).toBe(401);
    },
  );

  check(
    { id: 'gw-realtime-bearer', title: 'Authorization: Bearer (valid on all paths) opens a realtime session', requirements: ['gw-auth-bearer'] },
    async (t) => {
      const key = await requireValidKey(t);
      const model = await chosenModel();
      const headers = { authorization: `Bearer ${key}` };
      // The document does not say which subprotocols a handshake that carries its key in Authorization offers: read
      // either way, Bearer alone (the key is in the header, so no subprotocol is needed) or Bearer beside the
      // `realtime` subprotocol (a deployment may require it). The second is tried only when the first is refused.
      let r = await openRealtime({ protocols: [], headers, model });
      let reading = 'Bearer alone, no subprotocol offered';
      if (!r.opened) {
        const beside = await openRealtime({ protocols: [gw().realtimeProtocol], headers, model });
        reading = `Bearer alone: ${describeOutcome(r)}; Bearer beside the ${gw().realtimeProtocol} subprotocol`;
        r = beside;
      }
      t.reading('the subprotocols a realtime handshake with Authorization: Bearer offers', `${reading}: ${describeOutcome(r)}`);
      if (!r.opened && r.status === 404) requireRealtimePath(await realtimeControl(key, model));
      expect(r.opened, `a realtime session opened (the handshake: ${reading}: ${describeOutcome(r)})`).toBe(true);
    },
  );

  check(
    {
      id: 'gw-realtime-query-key-refused',
      title: 'a key given as ?key= does not open a realtime session (a vendor A interface)',
      requirements: ['gw-auth-query-key-not-vendor-a'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      await shownOpening(t, key);
      const r = await openRealtime({ protocols: [gw().realtimeProtocol], query: { key }, model: await chosenModel() });
      t.observe('refusal', describeOutcome(r));
      if (r.opened) {
        // Taken as a key, or opened without one? The latter is the uncredentialed-access check's failure, not this one.
        const none = await noCredential();
        precondition(!none.opened, 'a handshake without any credential opens a session too: whether ?key= was taken as a key cannot be told');
      }
      expect(r.opened, 'a session opened with ?key=').toBe(false);
    },
  );

  check(
    {
      id: 'gw-realtime-unknown-model-404',
      title: 'a realtime handshake naming an unknown model (?model=) is refused 404 with code model_not_found, no session opened',
      requirements: ['gw-unknown-model-404', 'gw-unknown-model-code'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      await shownOpening(t, key);
      const r = await openRealtime({ protocols: realtimeProtocols(key), model: unknownModel() });
      t.observe('refusal', describeOutcome(r));
      expect(r.opened, 'a realtime session opened for a model no deployment has (a default substituted?)').toBe(false);
      expect(r.status, `the handshake naming an unknown model (${describeOutcome(r)})`).toBe(404);
      t.observe('error code', String(looseErrorCodes(r.body ?? '')[0]));
      expect(looseErrorCodes(r.body ?? ''), `the error code of the refusal ${JSON.stringify((r.body ?? '').slice(0, 200))}`).toContain('model_not_found');
    },
  );

  check(
    {
      id: 'gw-realtime-per-user-429',
      title: 'the realtime handshake with a key over its per-user limit is refused 429 without Retry-After, the window and the count in the body',
      requirements: ['gw-429-per-user'],
    },
    async (t) => {
      const limited = requireKey(t, 'GATEWAY_RATE_LIMITED_KEY');
      offerable(t, 'GATEWAY_RATE_LIMITED_KEY', limited);
      await shownOpening(t, await requireValidKey(t));
      // The per-user 429 is the answer under test: an IP-level one (with Retry-After) is waited out once, as elsewhere.
      const r = await openRealtime({
        protocols: realtimeProtocols(limited),
        model: await chosenModel(),
        retry: { answer: (a) => a.status === 429 && (a.retryAfter === undefined || a.attempt > 0) },
      });
      t.observe('refusal', describeOutcome(r));
      expect(r.opened, 'a realtime session opened for a key over its per-user limit').toBe(false);
      expect(r.status, `the handshake with GATEWAY_RATE_LIMITED_KEY (${describeOutcome(r)})`).toBe(429);
      expect(r.retryAfter, 'a per-user 429 carries no Retry-After').toBeUndefined();
      const stated = statedLimit(r.body ?? '');
      t.observe('stated limit', `window ${stated.windowMinutes ?? '?'} minute(s), at most ${stated.max ?? '?'} requests`);
      expect(stated.windowMinutes, 'the body states the window in minutes (a number with a minute unit)').toBeGreaterThan(0);
      expect(stated.max, 'the body states the maximum request count (a number besides the window)').toBeGreaterThan(0);
    },
  );

  // The key states are refused on the realtime WebSocket as on every other model interface (key-states.checks.ts).
  for (const st of KEY_STATES) {
    check(
      {
        id: GW_CHECK_IDS.keyState(st.slug, 'realtime'),
        title: `the realtime handshake with ${st.what} in the subprotocols is refused with ${st.statuses.join(' or ')}`,
        requirements: st.reqs,
      },
      async (t) => {
        const key = requireKey(t, st.v);
        offerable(t, st.v, key);
        const valid = await requireValidKey(t);
        await shownOpening(t, valid);
        const r = await openRealtime({ protocols: realtimeProtocols(key), model: await chosenModel() });
        t.observe('refusal', describeOutcome(r));
        expect(r.opened, `a realtime session opened with ${st.v}`).toBe(false);
        expect(r.status, `the handshake with ${st.v} (${describeOutcome(r)})`).toBeOneOf(st.statuses);
        // Rule 5's message, on the handshake as on every other path: a refused handshake carries the error body.
        if (st.v === 'GATEWAY_IP_DENIED_KEY') expectIpMessage(r.body ?? '', 'the error message of the refused handshake');
      },
    );
  }
});
