/**
 * One HTTP/1.1 exchange read byte by byte from a connection of its own (`Connection: close`), for what an HTTP
 * client hides by design: the bytes a server writes after a response that ends at its header section (a 304,
 * RFC 9112 6.3). The request is admitted, counted against the run's budget and recorded through the suite's
 * client, like the client's own exchanges.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { http, runContext } from './context.js';
import { ACCEPT_ENCODING, NoResponseError, TransportError, USER_AGENT } from './http.js';
import { clientRules, type Service } from './spec.js';

export interface RawResponse {
  url: string;
  status: number;
  headers: Record<string, string>;
  /** The header section as received (status line included). */
  head: string;
  /** Every byte the server sent after the header section, up to the connection's close. */
  after: Buffer;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * Send one GET on its own connection and read until the server closes it (or the run's timeout). A transient
 * refusal (a 429, or a 503 of the feed) is retried by the suite's client's own retry loop (Retry-After, or the
 * origin's backoff; retries first; capped; the breaker counts it); past the cap the target is unavailable.
 */
export async function rawGet(url: URL, headers: Record<string, string>, service: Service, o: { continuation?: boolean } = {}): Promise<RawResponse> {
  const { result, unavailable } = await http().retried(url, 'GET', { rules: clientRules(service), mode: 'transient' }, async (retry) => {
    const res = await rawGetOnce(url, headers, service, { ...retry, continuation: o.continuation });
    return { result: res, answer: { status: res.status, retryAfter: res.headers['retry-after'], body: res.after.toString('utf8') } };
  });
  if (unavailable) throw unavailable;
  return result;
}

async function rawGetOnce(
  url: URL,
  headers: Record<string, string>,
  service: Service,
  retry: { attempt: number; waited: number; continuation?: boolean },
): Promise<RawResponse> {
  const ctx = runContext();
  const requestHeaders: Record<string, string> = {
    host: url.host,
    accept: 'application/json',
    'user-agent': USER_AGENT,
    // The representation the suite's other requests ask for, so that their ETags name the same one.
    'accept-encoding': ACCEPT_ENCODING,
    ...headers,
    connection: 'close',
  };
  const done = await http().external(url, 'GET', requestHeaders, service, retry);
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, ...Object.entries(requestHeaders).map(([k, v]) => `${k}: ${v}`)];
  let bytes: Buffer;
  try {
    bytes = await exchange(url, `${lines.join('\r\n')}\r\n\r\n`, ctx.timeoutMs, ctx.maxBodyBytes);
  } catch (e) {
    done({ error: (e as Error).message });
    throw e;
  }
  // Interim (1xx) responses come before the final one; skip them.
  let rest = bytes;
  for (;;) {
    const end = rest.indexOf(CRLF2);
    if (end < 0) {
      done({ error: 'no complete header section before the connection closed', responseBody: rest.toString('latin1') });
      throw new TransportError(`GET ${url.href}: the connection closed before a complete header section (${rest.length} bytes)`);
    }
    const head = rest.subarray(0, end).toString('latin1');
    const after = rest.subarray(end + 4);
    const [statusLine = '', ...fieldLines] = head.split('\r\n');
    const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(statusLine);
    if (!m) {
      done({ error: `not an HTTP response: ${JSON.stringify(statusLine.slice(0, 80))}` });
      throw new TransportError(`GET ${url.href}: not an HTTP status line: ${JSON.stringify(statusLine.slice(0, 80))}`);
    }
    const status = Number(m[1]);
    if (status >= 100 && status < 200 && status !== 101) {
      rest = after;
      continue;
    }
    const out: Record<string, string> = {};
    for (const line of fieldLines) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const name = line.slice(0, i).trim().toLowerCase();
      const value = line.slice(i + 1).trim();
      out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
    }
    done({ status, responseHeaders: out, responseBody: after.toString('utf8'), bodyBytes: after.length });
    return { url: url.href, status, headers: out, head, after };
  }
}

function exchange(url: URL, request: string, timeoutMs: number, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const socket: Socket =
      url.protocol === 'https:'
        ? tlsConnect({ host, port, servername: /^[\d.]+$|:/.test(host) ? undefined : host, ALPNProtocols: ['http/1.1'] })
        : netConnect({ host, port });
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      // What arrived before the bound is still the answer when a full header section came (a server that keeps
      // the connection open despite Connection: close); otherwise there was no response.
      const got = Buffer.concat(chunks);
      if (got.indexOf(CRLF2) >= 0) resolve(got);
      else reject(new NoResponseError(`no response within ${timeoutMs / 1000} s: GET ${url.href}`));
    }, timeoutMs);
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => socket.write(request));
    socket.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        clearTimeout(timer);
        socket.destroy();
        resolve(Buffer.concat(chunks));
        return;
      }
      chunks.push(c);
    });
    socket.once('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      const got = Buffer.concat(chunks);
      if (got.indexOf(CRLF2) >= 0) resolve(got);
      else reject(new TransportError(`GET ${url.href} failed: ${e.message}`));
    });
  });
}
