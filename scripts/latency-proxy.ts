/**
 * A loopback HTTP proxy in front of one upstream origin that holds each request `delayMs` before forwarding it: a
 * deployment a round trip away, for `npm run bench -- --latency N`. Everything else passes through unchanged:
 * method, path and query, headers and body one way; status, reason, headers (repeated ones included, Date kept) and
 * body the other, streamed (304s, chunked and SSE streams), and WebSocket upgrades (piped to the upstream after the
 * hold). Only hop-by-hop fields (Connection, Keep-Alive, Transfer-Encoding, ...) belong to each connection; Node.js
 * writes them per connection as the upstream's own Node.js server does. The Host field is kept as the client sent
 * it: the reference deployments build absolute URLs (a 308's Location, links in bodies) from it, and those must
 * name the proxy, as they name a reverse proxy's public origin in a real deployment.
 *
 * `stats` counts requests (upgrades included), and the concurrent in-flight requests from arrival to response end
 * (an upgrade until the upstream's handshake answer), now and at their peak, and the time they were in flight;
 * `minHeldMs` is the shortest hold the
 * proxy measured itself, so a test asserts the hold without timing the machine.
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';

export interface LatencyProxyStats {
  /** Requests received, WebSocket upgrades included. */
  requests: number;
  /** Of those, WebSocket upgrades. */
  upgrades: number;
  /** Requests in flight now (arrived, response not yet ended). */
  inFlight: number;
  /** Most requests in flight at once. */
  peakInFlight: number;
  /** Time with at least one request in flight (ms). */
  busyMs: number;
  /** Sum of every request's time in flight (ms): divided by busyMs, the mean number in flight while busy. */
  inFlightMs: number;
  /** Shortest hold before forwarding, as measured by the proxy (ms); undefined before the first forward. */
  minHeldMs: number | undefined;
  /** Requests the proxy could not forward (the upstream refused or reset the connection): answered 502 or cut. */
  upstreamErrors: number;
}

export interface LatencyProxy {
  /** The proxy's origin, http://127.0.0.1:PORT. */
  url: string;
  stats: LatencyProxyStats;
  close(): Promise<void>;
}

/** Fields of one connection, never forwarded (RFC 9110 7.6.1), plus those a Connection field names. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The end-to-end fields of a raw header list (name, value, name, value, ...), repeated fields kept in order. */
function endToEnd(raw: string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const t of raw[i + 1]!.split(',')) named.add(t.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || named.has(name)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

export async function startLatencyProxy(o: { upstream: string; delayMs: number; port?: number }): Promise<LatencyProxy> {
  const upstream = new URL(o.upstream);
  if (upstream.protocol !== 'http:') throw new Error(`latency proxy: upstream must be an http:// origin, got ${o.upstream}`);
  const upstreamPort = Number(upstream.port) || 80;
  const upstreamHost = upstream.hostname.replace(/^\[|\]$/g, '');
  const stats: LatencyProxyStats = {
    requests: 0,
    upgrades: 0,
    inFlight: 0,
    peakInFlight: 0,
    busyMs: 0,
    inFlightMs: 0,
    minHeldMs: undefined,
    upstreamErrors: 0,
  };
  let busySince = 0;
  const agent = new Agent({ keepAlive: true });
  const timers = new Set<NodeJS.Timeout>();
  const tunnels = new Set<Duplex>();

  const arrive = (): (() => void) => {
    const arrived = performance.now();
    if (stats.inFlight === 0) busySince = arrived;
    stats.requests++;
    stats.inFlight++;
    stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const now = performance.now();
      stats.inFlight--;
      stats.inFlightMs += now - arrived;
      if (stats.inFlight === 0) stats.busyMs += now - busySince;
    };
  };

  /** Run `then` once at least delayMs have passed since `start` by the proxy's own clock (a timer may fire a little early). */
  const hold = (start: number, then: () => void) => {
    const left = o.delayMs - (performance.now() - start);
    if (left <= 0) {
      const held = performance.now() - start;
      stats.minHeldMs = stats.minHeldMs === undefined ? held : Math.min(stats.minHeldMs, held);
      then();
      return;
    }
    const t = setTimeout(() => {
      timers.delete(t);
      hold(start, then);
    }, Math.ceil(left));
    timers.add(t);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const start = performance.now();
    const done = arrive();
    res.on('close', done);
    res.sendDate = false; // the upstream's Date, not the proxy's
    hold(start, () => {
      if (res.destroyed) return;
      const headers = endToEnd(req.rawHeaders);
      const up = httpRequest({
        host: upstreamHost,
        port: upstreamPort,
        method: req.method,
        path: req.url,
        headers: headers as unknown as OutgoingHttpHeaders,
        agent,
        setHost: false,
      });
      up.on('response', (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.statusMessage, endToEnd(ur.rawHeaders) as unknown as OutgoingHttpHeaders);
        res.flushHeaders();
        ur.pipe(res);
        ur.on('error', () => res.destroy());
        ur.on('close', () => {
          if (!ur.complete) res.destroy(); // the upstream cut the body short: so does the proxy
        });
      });
      up.on('error', () => {
        stats.upstreamErrors++;
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end('latency proxy: the upstream did not answer');
        } else res.destroy();
      });
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
      });
      req.pipe(up);
    });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const start = performance.now();
    const done = arrive();
    stats.upgrades++;
    tunnels.add(socket);
    socket.on('close', () => {
      done();
      tunnels.delete(socket);
    });
    socket.on('error', () => socket.destroy());
    hold(start, () => {
      if (socket.destroyed) return;
      const up = connect({ host: upstreamHost, port: upstreamPort });
      tunnels.add(up);
      up.on('close', () => {
        tunnels.delete(up);
        socket.destroy();
      });
      socket.on('close', () => up.destroy());
      up.on('error', () => {
        stats.upstreamErrors++;
        if (!up.readableEnded && up.bytesRead === 0 && !socket.destroyed)
          socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      });
      up.once('data', done); // the handshake's answer: the upgrade request is answered
      up.on('connect', () => {
        const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
        for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        up.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length > 0) up.write(head);
        socket.pipe(up);
        up.pipe(socket);
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of tunnels) s.destroy();
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
