/**
 * The observer is transparent: what the client receives through it is, byte for byte, what the deployment sent
 * (gzip, binary, large, slow and chunked bodies, kept-alive connections, WebSocket frames), and so is what the
 * deployment receives; what is recorded for judging is the body decoded.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, Agent, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { startObserver, type Observer } from './observer.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const json = Buffer.from(JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: `itm_${i}`, title: `Item ${i} ✓` })) }));
const binary = randomBytes(64 * 1024);
const large = randomBytes(6 * 1024 * 1024);
let received: Buffer | undefined;
/** The slow answer's second part is written only once the client has read the first: no timer. */
let releaseSlow: (() => void) | undefined;

let upstream: Server;
let observer: Observer;
let origin: string;
beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/gzip') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', etag: '"g-gzip"' });
        res.end(gzipSync(json));
      } else if (req.url === '/binary') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(binary.length) });
        res.end(binary);
      } else if (req.url === '/large') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(large);
      } else if (req.url === '/slow') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        releaseSlow = () => res.end('data: second\n\n');
      } else if (req.url === '/upload') {
        received = Buffer.concat(chunks);
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(sha(received));
      } else {
        res.writeHead(200, { 'content-type': 'text/plain', 'x-port': String(req.socket.remotePort) });
        res.end('ok');
      }
    });
  });
  const wss = new WebSocketServer({ server: upstream });
  wss.on('connection', (ws) => ws.on('message', (m: Buffer, isBinary) => ws.send(Buffer.concat([Buffer.from('echo:'), m]), { binary: isBinary })));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  observer = await startObserver({ upstream: origin, decide: () => ({ kind: 'forward' }) });
});
afterAll(async () => {
  await observer.close();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

/** A raw GET (no decoding), through the observer or straight to the deployment. */
function raw(
  base: string,
  path: string,
  o: { agent?: Agent; body?: Buffer; onFirst?: (c: Buffer) => void } = {},
): Promise<{ res: IncomingMessage; body: Buffer; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { method: o.body ? 'POST' : 'GET', agent: o.agent, headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        if (chunks.length === 0) o.onFirst?.(c);
        chunks.push(c);
      });
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks), reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

test('gzip, binary and large bodies reach the client as the deployment sent them; the record holds the decoded body', async () => {
  for (const path of ['/gzip', '/binary', '/large']) {
    const [through, direct] = [await raw(observer.url, path), await raw(origin, path)];
    expect(through.body.length, path).toBe(direct.body.length);
    expect(sha(through.body), path).toBe(sha(direct.body));
    expect(through.res.headers['content-encoding'], path).toBe(direct.res.headers['content-encoding']);
  }
  const recorded = observer.exchanges.find((x) => x.url === '/gzip')!;
  expect(JSON.parse(recorded.responseBody!)).toEqual(JSON.parse(json.toString()));
  expect(recorded.responseHeaders?.['content-encoding']).toBe('gzip');
  expect(recorded.altered).toBeUndefined();
});

test('a slow body is passed on as it comes: the client reads its first part before the deployment has written the rest', async () => {
  const got = await raw(observer.url, '/slow', { onFirst: () => releaseSlow!() });
  expect(got.body.toString()).toBe('data: first\n\ndata: second\n\n');
  expect(observer.exchanges.find((x) => x.url === '/slow')?.responseBody).toBe('data: first\n\ndata: second\n\n');
});

test('a request body reaches the deployment byte for byte', async () => {
  const body = randomBytes(100_000);
  const got = await raw(observer.url, '/upload', { body });
  expect(got.body.toString()).toBe(sha(body));
  expect(sha(received!)).toBe(sha(body));
});

test('the client connection is kept alive across requests', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const first = await raw(observer.url, '/plain', { agent });
    const second = await raw(observer.url, '/plain', { agent });
    expect(first.reused).toBe(false);
    expect(second.reused).toBe(true);
  } finally {
    agent.destroy();
  }
});

test('WebSocket frames, text and binary, pass both ways unchanged; the handshake is recorded', async () => {
  const ws = new WebSocket(`${observer.url.replace('http', 'ws')}/socket`);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const frame = randomBytes(70_000);
  const echoes: Buffer[] = [];
  const done = new Promise<void>((r) =>
    ws.on('message', (m: Buffer) => {
      echoes.push(m);
      if (echoes.length === 2) r();
    }),
  );
  ws.send('hello ✓');
  ws.send(frame, { binary: true });
  await done;
  ws.close();
  expect(echoes[0]!.toString()).toBe('echo:hello ✓');
  expect(sha(echoes[1]!)).toBe(sha(Buffer.concat([Buffer.from('echo:'), frame])));
  expect(observer.exchanges.find((x) => x.upgrade)?.status).toBe(101);
});
