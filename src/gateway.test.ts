/**
 * Every way the suite contacts a target (its own requests, the raw reader, the WebSocket handshake, an official
 * client's fetch) keeps the same rules: each says who sends it (the suite's User-Agent, an official client's own),
 * and a target that goes down ends each of them as "unavailable", never as a failure of the check, on every path
 * and before as after the breaker gives up on it. Loopback servers on port 0 that record what they receive.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type OpenAIClient from 'openai';
import type AnthropicClient from '@anthropic-ai/sdk';
import { CONTEXT_VAR, setFeedTestContext } from './context.js';
import { scratchDir } from '../fixtures/scratch.js';
import { TargetUnavailableError } from './http.js';
import { readFileSync } from 'node:fs';

const load = createRequire(import.meta.url);
const KEY = 'sk-gateway-test-key-0123456789';
const NO_UPSTREAM = JSON.stringify({
  error: { message: 'no upstream account is available', type: 'gateway_error', param: '', code: 'channel:no_available_key' },
});

/** A loopback server that records each request (path and User-Agent) and answers 503 with Retry-After: 0 once down. */
interface Target {
  url: string;
  down: boolean;
  seen: { path: string; ua?: string; upgrade?: boolean }[];
}
const servers: Server[] = [];
async function target(answer: (req: IncomingMessage) => { status: number; body: string }): Promise<Target> {
  const t: Target = { url: '', down: false, seen: [] };
  const s = createServer((req, res) => {
    t.seen.push({ path: req.url ?? '', ua: req.headers['user-agent'] });
    req.resume();
    req.on('end', () => {
      const a = t.down ? { status: 503, body: NO_UPSTREAM } : answer(req);
      res.writeHead(a.status, { 'content-type': 'application/json', ...(t.down ? { 'retry-after': '0' } : {}) }).end(a.body);
    });
  });
  // The realtime handshake: refused (401 while up, 503 once down), as a gateway refuses an unknown key.
  s.on('upgrade', (req: IncomingMessage, socket: import('node:stream').Duplex) => {
    t.seen.push({ path: req.url ?? '', ua: req.headers['user-agent'], upgrade: true });
    const [status, extra] = t.down ? ['503 Service Unavailable', 'retry-after: 0\r\n'] : ['401 Unauthorized', ''];
    const body = t.down ? NO_UPSTREAM : '{}';
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  t.url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return t;
}

const MODELS = JSON.stringify({ object: 'list', data: [{ id: 'ref-chat-small', object: 'model', created: 0, owned_by: 'test' }] });
let gateway: Target;
/** A second origin (the feed's, to the suite): down throughout the breaker's test of the raw reader. */
let other: Target;

beforeAll(async () => {
  gateway = await target((req) => (req.url?.startsWith('/v1/models') ? { status: 200, body: MODELS } : { status: 404, body: '{}' }));
  other = await target(() => ({ status: 200, body: '{}' }));
  // The run context as the conformance command sets it: both origins, one retry, a small budget.
  setFeedTestContext(other.url, scratchDir('gateway-test-'));
  const ctx = JSON.parse(process.env[CONTEXT_VAR]!) as Record<string, unknown>;
  process.env[CONTEXT_VAR] = JSON.stringify({ ...ctx, services: ['feed', 'gateway'], gatewayUrl: gateway.url });
  process.env.GATEWAY_API_KEY = KEY;
});
afterAll(async () => {
  delete process.env.GATEWAY_API_KEY;
  await Promise.all(servers.map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))));
});

const openai = async (): Promise<OpenAIClient> => {
  const { recordingFetch } = await import('./gateway.js');
  const OpenAI = (load('openai') as typeof import('openai')).default;
  return new OpenAI({ apiKey: KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, fetch: recordingFetch() });
};
const anthropic = async (): Promise<AnthropicClient> => {
  const { recordingFetch } = await import('./gateway.js');
  const Anthropic = (load('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk')).default;
  return new Anthropic({ apiKey: KEY, baseURL: gateway.url, maxRetries: 0, fetch: recordingFetch() });
};
const genai = () => {
  const { GoogleGenAI } = load('@google/genai') as typeof import('@google/genai');
  return new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gateway.url } });
};
/** What a promise rejected with (or 'resolved'). */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return e;
  }
}

describe.sequential('one set of rules for every path to the target', () => {
  test('every request the suite sends itself says User-Agent: <package>/<version>; the official clients keep their own', async () => {
    const { gatewayGet, openRealtime, sdkCall } = await import('./gateway.js');
    const { rawGet } = await import('./raw-http.js');
    const { http } = await import('./context.js');
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
    const suite = `${pkg.name}/${pkg.version}`;

    expect((await gatewayGet('/v1/models')).status).toBe(200);
    expect((await rawGet(new URL(`${gateway.url}/v1/models?raw=1`), {}, 'gateway')).status).toBe(200);
    expect((await openRealtime({ protocols: ['realtime'], model: 'ref-chat-small' })).status).toBe(401);
    await sdkCall('models.list()', async () => (await openai()).models.list());
    await sdkCall('models.list()', async () => (await anthropic()).models.list());
    // A request the suite sends on another origin's behalf says it too.
    expect((await http().send(other.url)).status).toBe(200);

    // In the order they were sent: the suite's own request, the raw reader's, the WebSocket handshake, then the
    // official clients' requests, each with its own User-Agent, not the suite's.
    expect(gateway.seen.map((s) => [s.path, s.ua])).toEqual([
      ['/v1/models', suite],
      ['/v1/models?raw=1', suite],
      ['/v1/realtime?model=ref-chat-small', suite],
      ['/v1/models', expect.stringMatching(/^OpenAI\/JS \d/)],
      [expect.stringMatching(/^\/v1\/models/), expect.stringMatching(/^Anthropic\/JS \d/)],
    ]);
    expect(other.seen.map((s) => s.ua)).toEqual([suite]);
  });

  test('a gateway gone down: past the retries, and once the breaker has given up on it, every official client call is unavailable, never failed', async () => {
    const { gatewayGet, openRealtime, sdkCall, sdkError, withRecordedGlobalFetch } = await import('./gateway.js');
    gateway.down = true;
    // Past the retries: the official client gets the last 503, and its check learns that the target was unavailable.
    expect(await outcome(sdkCall('models.list()', async () => (await openai()).models.list()))).toBeInstanceOf(TargetUnavailableError);
    // The suite's own requests meet the same outage; the breaker gives up on the gateway (after three unavailable
    // requests in a row: the official client's among them).
    for (let i = 0; i < 3; i++) expect(await outcome(gatewayGet('/v1/models'))).toBeInstanceOf(TargetUnavailableError);
    const sent = gateway.seen.length;
    // Nothing more is sent, and an official client's call ends unavailable, whatever error the client makes of it.
    const calls: [string, () => Promise<unknown>][] = [
      ['openai', () => sdkCall('models.list()', async () => (await openai()).models.list())],
      ['anthropic', () => sdkCall('models.list()', async () => (await anthropic()).models.list())],
      [
        'genai',
        () =>
          sdkCall('models.generateContent()', () => withRecordedGlobalFetch(() => genai().models.generateContent({ model: 'ref-chat-small', contents: 'OK' }))),
      ],
      // A typed-error check reads the error a call raised: the suite's own verdict comes first.
      ['openai (typed error)', () => sdkError(async () => (await openai()).models.list())],
      ['realtime', () => openRealtime({ protocols: ['realtime'], model: 'ref-chat-small' })],
      ['own request', () => gatewayGet('/v1/models')],
    ];
    for (const [name, call] of calls) {
      const e = await outcome(call());
      expect(e, `${name}: ${String(e)}`).toBeInstanceOf(TargetUnavailableError);
      expect((e as Error).message, name).toMatch(/is no longer contacted in this run/);
    }
    expect(gateway.seen.length).toBe(sent);
  });

  test('the breaker counts every path: three raw reads answered 503 past the retries, and the origin is no longer contacted', async () => {
    const { rawGet } = await import('./raw-http.js');
    const { http } = await import('./context.js');
    other.down = true;
    for (let i = 0; i < 3; i++) expect(await outcome(rawGet(new URL(`${other.url}/?raw=${i}`), {}, 'gateway'))).toBeInstanceOf(TargetUnavailableError);
    const sent = other.seen.length;
    const e = await outcome(http().send(other.url));
    expect(e).toBeInstanceOf(TargetUnavailableError);
    expect((e as Error).message).toMatch(/is no longer contacted in this run/);
    expect(other.seen.length).toBe(sent);
  });
});

describe("rule 5's message: a refusal that speaks of the IP", () => {
  test.each([
    ['IP 1.2.3.4 is not in the allowed list', true],
    ['Your IPv4 address is not in the token allow list', true],
    ['ip address not allowed', true],
    ['ip_whitelist: 127.0.0.1 denied', true],
    ['您的 IP 不在令牌允许访问的列表中', true],
    ['IP地址不在允许列表', true],
    ['Forbidden', false],
    ['access denied for this skip-list token', false],
  ])('%s: %s', async (message, speaks) => {
    const { IP_MESSAGE } = await import('./gateway.js');
    expect(IP_MESSAGE.test(message)).toBe(speaks);
  });
});
