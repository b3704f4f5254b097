/**
 * The observing target of a client-conformance run: an HTTP server on loopback (port 0) in front of a deployment
 * (the reference, or a real one with --target-url). It records every exchange with the times the request arrived
 * and the answer was sent, and lets a scenario answer a request itself (a 429, a broken stream, ...), rewrite the
 * deployment's answer (scaled-down s-maxage), or pass it on unchanged.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { request as undiciRequest } from 'undici';

export interface ObservedRequest {
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: string;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/** What a scenario does with a request. */
export type Decision =
  | { kind: 'forward'; scenario?: string; rewrite?: (a: Answer) => Answer }
  | { kind: 'answer'; scenario: string; answer: Answer }
  /** Send the status and headers and the first part of the body, then destroy the connection. */
  | { kind: 'break'; scenario: string; answer: Answer; partialBody: string };

export interface ObservedExchange {
  seq: number;
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody: string;
  /** Milliseconds since the observer started: the request arrived, the answer was finished. */
  receivedAt: number;
  respondedAt?: number;
  status?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  /** The scenario that answered or rewrote this exchange (absent: passed on unchanged). */
  scenario?: string;
  /** The body was cut off on purpose (broken stream). */
  broken?: boolean;
  /** The deployment could not be reached or failed. */
  error?: string;
  /** A WebSocket handshake (an upgrade), passed through: the status is the deployment's answer to it. */
  upgrade?: boolean;
}

export interface Observer {
  url: string;
  exchanges: ObservedExchange[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'content-length']);

function headersOf(inc: IncomingMessage): Record<string, string> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(inc.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
  return h;
}

function toObserver(a: Answer, from: string, to: string): Answer {
  const swap = (v: string) => v.split(from).join(to);
  const headers = { ...a.headers };
  if (headers.location) headers.location = swap(headers.location);
  return { ...a, headers, body: a.body === undefined ? undefined : swap(a.body) };
}

export async function startObserver(o: {
  upstream: string;
  decide: (req: ObservedRequest, log: ObservedExchange[]) => Decision;
  /** The upstream is a real deployment (virtual hosting): send it its own Host. */
  realTarget?: boolean;
}): Promise<Observer> {
  const realTarget = o.realTarget ?? false;
  const self: { origin?: string } = {};
  const t0 = performance.now();
  const now = () => Math.round((performance.now() - t0) * 1000) / 1000;
  const exchanges: ObservedExchange[] = [];
  const upstream = new URL(o.upstream);
  const up: Upstream = { upstream, base: upstream.pathname.replace(/\/$/, ''), realTarget, self };

  async function handle(inc: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = now();
    const req = await readRequest(inc);
    const x: ObservedExchange = {
      seq: exchanges.length + 1,
      method: req.method,
      url: req.url,
      requestHeaders: req.headers,
      requestBody: req.body,
      receivedAt,
    };
    exchanges.push(x);
    const decision = o.decide(req, exchanges.slice(0, -1));
    if (decision.scenario) x.scenario = decision.scenario;
    const answer = decision.kind === 'forward' ? await forward(req, x, decision, up) : decision.answer;
    respond(res, req, x, answer, decision, now);
  }

  const server: Server = createServer((inc, res) => {
    handle(inc, res).catch((e: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`observer error: ${e.message}`);
    });
  });
  // A WebSocket handshake is recorded (its URL and headers: where the client put the key) and the connection is
  // then passed through to the deployment byte for byte, both ways. No scenario answers an upgrade.
  server.on('upgrade', (inc: IncomingMessage, socket: Socket, head: Buffer) => {
    const u = new URL(inc.url ?? '/', 'http://observer.invalid');
    const x: ObservedExchange = {
      seq: exchanges.length + 1,
      method: inc.method ?? 'GET',
      url: `${u.pathname}${u.search}`,
      requestHeaders: headersOf(inc),
      requestBody: '',
      receivedAt: now(),
      upgrade: true,
    };
    exchanges.push(x);
    passThrough(inc, socket, head, x, up, now);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  self.origin = `http://127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Where the observer forwards to, and whose links it rewrites. */
interface Upstream {
  upstream: URL;
  /** The upstream's path prefix, without a trailing slash. */
  base: string;
  /** A real deployment (virtual hosting): it gets its own Host, and its self-links are pointed at the observer. */
  realTarget: boolean;
  self: { origin?: string };
}

/** The deployment's answer to a forwarded request (rewritten as the scenario says), or a 502 when it could not be reached. */
async function forward(req: ObservedRequest, x: ObservedExchange, decision: Extract<Decision, { kind: 'forward' }>, u: Upstream): Promise<Answer> {
  const { upstream, base, realTarget, self } = u;
  try {
    const headers: Record<string, string> = {};
    // Host is passed on as the client sent it, so a reference builds absolute links (Location) to the observer.
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && (k !== 'host' || !realTarget)) headers[k] = v;
    const r = await undiciRequest(`${upstream.origin}${base}${req.url}`, {
      method: req.method as 'GET',
      headers,
      body: req.body === '' ? undefined : req.body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const rh: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) rh[k] = Array.isArray(v) ? v.join(', ') : v;
    // A 304 ends at its header section and may carry the Content-Length a 200 would have had (undici 7 calls
    // that a length mismatch), and a HEAD answer has no body: neither is read.
    const bodiless = r.statusCode === 304 || req.method === 'HEAD';
    if (bodiless) r.body.on('error', () => undefined).destroy();
    let answer: Answer = { status: r.statusCode, headers: rh, body: bodiless ? '' : await r.body.text() };
    // A real deployment links to itself by its own origin: point those links at the observer, so the client
    // keeps talking through it (a reference is given the observer's Host and builds them right already).
    if (realTarget && self.origin) answer = toObserver(answer, `${upstream.origin}${base}`, self.origin);
    if (decision.rewrite) answer = decision.rewrite(answer);
    return answer;
  } catch (e) {
    x.error = (e as Error).message;
    return { status: 502, headers: { 'content-type': 'text/plain' }, body: `observer: the deployment could not be reached: ${x.error}` };
  }
}

/** A WebSocket upgrade passed through to the deployment byte for byte, both ways, its handshake answer recorded. */
function passThrough(inc: IncomingMessage, socket: Socket, head: Buffer, x: ObservedExchange, u: Upstream, now: () => number): void {
  const { upstream, base, realTarget } = u;
  const port = Number(upstream.port || (upstream.protocol === 'https:' ? 443 : 80));
  const up: Socket =
    upstream.protocol === 'https:' ? tlsConnect({ host: upstream.hostname, port, servername: upstream.hostname }) : netConnect(port, upstream.hostname);
  up.once(upstream.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
    const lines = [`${x.method} ${base}${x.url} HTTP/1.1`];
    for (let i = 0; i + 1 < inc.rawHeaders.length; i += 2) {
      const [k, v] = [inc.rawHeaders[i]!, inc.rawHeaders[i + 1]!];
      lines.push(k.toLowerCase() === 'host' && realTarget ? `Host: ${upstream.host}` : `${k}: ${v}`);
    }
    up.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) up.write(head);
    up.once('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = text.slice(0, headEnd < 0 ? text.length : headEnd).split('\r\n');
      x.status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]) || undefined;
      x.responseHeaders = Object.fromEntries(
        headerLines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]),
      );
      x.responseBody = '';
      x.respondedAt = now();
      socket.write(chunk);
      up.pipe(socket);
      socket.pipe(up);
    });
  });
  up.on('error', (e) => {
    x.error = e.message;
    socket.destroy();
  });
  socket.on('error', () => up.destroy());
  socket.on('close', () => up.destroy());
}

/** The client's request, read whole. */
async function readRequest(inc: IncomingMessage): Promise<ObservedRequest> {
  const chunks: Buffer[] = [];
  for await (const c of inc) chunks.push(c as Buffer);
  const u = new URL(inc.url ?? '/', 'http://observer.invalid');
  return {
    method: inc.method ?? 'GET',
    url: `${u.pathname}${u.search}`,
    path: u.pathname,
    query: u.searchParams,
    headers: headersOf(inc),
    body: Buffer.concat(chunks).toString('utf8'),
  };
}

/** The answer sent to the client and recorded; a "break" decision cuts the connection after the first bytes. */
function respond(res: ServerResponse, req: ObservedRequest, x: ObservedExchange, answer: Answer, decision: Decision, now: () => number): void {
  x.status = answer.status;
  x.responseHeaders = Object.fromEntries(Object.entries(answer.headers).map(([k, v]) => [k.toLowerCase(), v]));
  if (decision.kind === 'break') {
    x.broken = true;
    x.responseBody = decision.partialBody;
    res.writeHead(answer.status, answer.headers);
    x.respondedAt = now();
    // Once the first bytes are handed to the connection, cut it: the stream is broken mid-body.
    res.write(decision.partialBody, () => res.destroy());
    return;
  }
  x.responseBody = req.method === 'HEAD' ? '' : (answer.body ?? '');
  res.writeHead(answer.status, answer.headers);
  x.respondedAt = now();
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}
