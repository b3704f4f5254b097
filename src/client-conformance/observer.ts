/**
 * The observing target of a client-conformance run: an HTTP server on loopback (port 0) in front of a deployment
 * (the reference, or a real one with --target-url). It records every exchange with the times the request arrived
 * and the answer was sent, and lets a scenario answer a request itself (a 429, a broken stream, ...), rewrite the
 * deployment's answer headers (scaled-down s-maxage), or pass it on unchanged.
 *
 * It is transparent: the bytes of a forwarded request body and of the deployment's answer body pass through
 * unchanged, as they come (gzip or any other coding, binary, large, slow: each chunk is written on as it arrives),
 * connections are kept alive, and WebSocket frames are piped both ways. What is recorded for judging is the body
 * decoded (Content-Encoding undone). The one change to a body: a real deployment's absolute links to itself are
 * pointed at the observer (see `selfLinks`), re-encoded in the body's own coding, and the exchange says so.
 */
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, brotliDecompressSync, deflateSync, gzipSync, gunzipSync, inflateSync } from 'node:zlib';

export interface ObservedRequest {
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  /** The body as text (UTF-8), for the scenarios. */
  body: string;
  /** The body's bytes as they came: what is forwarded. */
  raw: Buffer;
  /** The client's request (its headers are what is forwarded). */
  inc: IncomingMessage;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/** What a scenario does with a request. */
export type Decision =
  | { kind: 'forward'; scenario?: string; rewriteHeaders?: (status: number, h: Record<string, string>) => Record<string, string> }
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
  /** What the observer changed in a forwarded answer besides headers a scenario rewrote (absent: the bytes as sent). */
  altered?: string;
  /** Which run of the client command (1 unless the scenario repeated it). */
  round?: number;
}

export interface Observer {
  url: string;
  exchanges: ObservedExchange[];
  close(): Promise<void>;
}

/** Headers of one connection, not of the message: never passed on (the framing of each hop is its own). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);
/** The most of a body kept for judging (the client still gets all of it). */
const RECORD_LIMIT = 16 * 1024 * 1024;

function headersOf(inc: IncomingMessage): Record<string, string> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(inc.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
  return h;
}

/** An exchange's round, recorded from the second on. */
const roundOf = (n: number) => (n > 1 ? { round: n } : {});

export async function startObserver(o: {
  upstream: string;
  decide: (req: ObservedRequest, log: ObservedExchange[]) => Decision;
  /** The upstream is a real deployment (virtual hosting): send it its own Host. */
  realTarget?: boolean;
  /** The run of the client command now under way (the scenario may repeat it); recorded on each exchange. */
  round?: () => number;
}): Promise<Observer> {
  const realTarget = o.realTarget ?? false;
  const self: { origin?: string } = {};
  const t0 = performance.now();
  const now = () => Math.round((performance.now() - t0) * 1000) / 1000;
  const exchanges: ObservedExchange[] = [];
  const upstream = new URL(o.upstream);
  // Connections to the deployment are kept alive and reused, as a client's own would be.
  const agent = upstream.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const up: Upstream = { upstream, base: upstream.pathname.replace(/\/$/, ''), realTarget, self, agent };

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
      ...roundOf(o.round?.() ?? 1),
    };
    exchanges.push(x);
    const decision = o.decide(req, exchanges.slice(0, -1));
    if (decision.scenario) x.scenario = decision.scenario;
    if (decision.kind === 'forward') await forward(req, res, x, decision, up, now);
    else respond(res, req, x, decision.answer, decision, now);
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
      ...roundOf(o.round?.() ?? 1),
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
        agent.destroy();
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
  agent: HttpAgent;
}

/** The headers of a message without those of its connection; a multi-valued header joined as HTTP allows. */
function endToEnd(h: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = Array.isArray(v) ? v.join(k === 'set-cookie' ? '\n' : ', ') : v;
  return out;
}

/** A body as recorded for judging: its Content-Encoding undone (the bytes themselves are passed on as they came). */
export function decodeBody(raw: Buffer, encoding: string | undefined): { text: string; note?: string } {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  try {
    let b: Buffer = raw;
    for (const c of codings.reverse()) {
      if (c === 'gzip' || c === 'x-gzip') b = gunzipSync(b);
      else if (c === 'deflate') b = inflateSync(b);
      else if (c === 'br') b = brotliDecompressSync(b);
      else return { text: raw.toString('latin1'), note: `a body in coding ${c}, recorded undecoded` };
    }
    return { text: b.toString('utf8') };
  } catch (e) {
    return { text: raw.toString('latin1'), note: `a body that does not decode as its Content-Encoding says (${(e as Error).message}), recorded undecoded` };
  }
}

function encodeBody(text: string, encoding: string | undefined): Buffer {
  let b: Buffer = Buffer.from(text, 'utf8');
  for (const c of (encoding ?? '').split(',').map((v) => v.trim().toLowerCase())) {
    if (c === 'gzip' || c === 'x-gzip') b = gzipSync(b);
    else if (c === 'deflate') b = deflateSync(b);
    else if (c === 'br') b = brotliCompressSync(b);
  }
  return b;
}

/**
 * Forwards a request to the deployment and passes its answer back as it comes: status, end-to-end headers (the
 * scenario may rewrite them) and the body's bytes, each chunk written on as it arrives; the decoded body is
 * recorded at its end. A deployment that cannot be reached gives the client a 502 from the observer.
 */
async function forward(
  req: ObservedRequest,
  res: ServerResponse,
  x: ObservedExchange,
  decision: Extract<Decision, { kind: 'forward' }>,
  u: Upstream,
  now: () => number,
): Promise<void> {
  const { upstream, base, realTarget, agent } = u;
  const headers = endToEnd(req.inc.headers);
  // Host is passed on as the client sent it, so a reference builds absolute links (Location) to the observer.
  if (realTarget) headers.host = upstream.host;
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  await new Promise<void>((resolve) => {
    const out = send({
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      path: `${base}${req.url}`,
      method: req.method,
      headers,
      agent,
    });
    out.on('response', (ur) => relay(ur, res, req, x, decision, u, now).then(resolve, resolve));
    out.on('error', (e) => {
      x.error = e.message;
      if (res.headersSent) res.destroy();
      else
        respond(
          res,
          req,
          x,
          { status: 502, headers: { 'content-type': 'text/plain' }, body: `observer: the deployment could not be reached: ${e.message}` },
          decision,
          now,
        );
      resolve();
    });
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    out.end(req.raw.length ? req.raw : undefined);
  });
}

/** The deployment's answer, relayed to the client byte for byte (see `forward`) and recorded. */
async function relay(
  ur: IncomingMessage,
  res: ServerResponse,
  req: ObservedRequest,
  x: ObservedExchange,
  decision: Extract<Decision, { kind: 'forward' }>,
  u: Upstream,
  now: () => number,
): Promise<void> {
  const status = ur.statusCode ?? 502;
  let headers = endToEnd(ur.headers);
  // A connection the deployment closes after this answer is closed to the client too.
  if (/\bclose\b/i.test(String(ur.headers.connection ?? ''))) headers.connection = 'close';
  if (u.realTarget && u.self.origin && headers.location) headers.location = headers.location.split(`${u.upstream.origin}${u.base}`).join(u.self.origin);
  if (decision.rewriteHeaders) headers = decision.rewriteHeaders(status, headers);
  x.status = status;
  x.responseHeaders = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== 'connection'));
  const chunks: Buffer[] = [];
  let kept = 0;
  const keep = (c: Buffer) => {
    if (kept < RECORD_LIMIT) chunks.push(c);
    kept += c.length;
  };
  // A real deployment's self-links in a JSON or text body are pointed at the observer: that body is read whole.
  const selfLinks = u.realTarget && !!u.self.origin && /json|text\/(?!event-stream)/.test(headers['content-type'] ?? '');
  if (selfLinks) {
    const all: Buffer[] = [];
    for await (const c of ur) all.push(c as Buffer);
    const raw = Buffer.concat(all);
    const { text, note } = decodeBody(raw, headers['content-encoding']);
    const from = `${u.upstream.origin}${u.base}`;
    let body: Buffer = raw;
    if (!note && text.includes(from)) {
      body = encodeBody(text.split(from).join(u.self.origin!), headers['content-encoding']);
      if (headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
      x.altered = `the deployment's absolute links to itself (${from}) pointed at the observer, the body re-encoded${headers['content-encoding'] ? ` (${headers['content-encoding']})` : ''}`;
    }
    res.writeHead(status, ur.statusMessage, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
    return record(x, body, headers, now);
  }
  res.writeHead(status, ur.statusMessage, headers);
  res.flushHeaders();
  try {
    for await (const c of ur) {
      keep(c as Buffer);
      if (!res.write(c)) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  } catch (e) {
    x.error = `the deployment's answer broke off: ${(e as Error).message}`;
    res.destroy();
  }
  record(x, Buffer.concat(chunks), headers, now);
}

function record(x: ObservedExchange, raw: Buffer, headers: Record<string, string>, now: () => number): void {
  const { text, note } = decodeBody(raw, headers['content-encoding']);
  x.responseBody = text;
  if (note) x.altered = `${x.altered ? `${x.altered}; ` : ''}${note} (passed on unchanged)`;
  x.respondedAt = now();
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
    // The handshake answer's head is recorded once it is whole; every byte goes on to the client as it came.
    const answerHead: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      answerHead.push(chunk);
      const text = Buffer.concat(answerHead).toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd < 0 && text.length < 65536) return;
      up.off('data', onData);
      const [statusLine = '', ...headerLines] = text.slice(0, headEnd < 0 ? text.length : headEnd).split('\r\n');
      x.status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]) || undefined;
      x.responseHeaders = Object.fromEntries(
        headerLines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]),
      );
      x.responseBody = '';
      x.respondedAt = now();
      socket.write(Buffer.concat(answerHead));
      up.pipe(socket);
      socket.pipe(up);
    };
    up.on('data', onData);
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
  const raw = Buffer.concat(chunks);
  const u = new URL(inc.url ?? '/', 'http://observer.invalid');
  return {
    method: inc.method ?? 'GET',
    url: `${u.pathname}${u.search}`,
    path: u.pathname,
    query: u.searchParams,
    headers: headersOf(inc),
    body: decodeBody(raw, inc.headers['content-encoding']).text,
    raw,
    inc,
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
