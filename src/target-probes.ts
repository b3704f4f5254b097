/**
 * Before any check, each target's URL is probed: can the suite talk HTTP to it at all, is it the service, and is
 * its scheme the one its port speaks. A wrong URL (http:// to a TLS port, https:// to a plain one, a path prefix
 * too many) is a configuration error that says what to change, not 90 requirement failures or a TLS error code.
 */
import { connect as tlsConnect } from 'node:tls';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import type { Service } from './spec.js';
import type { FirstAnswer } from './context.js';
import { readRawBody, ResponseTooLargeError } from './http.js';

/** The setting that holds each service's URL, as a message names it. */
export const URL_SETTING: Record<Service, string> = { feed: '--feed-url / FEED_BASE_URL', gateway: '--gateway-url / GATEWAY_URL' };

/** The feed's answers to the command's first request, by feed URL (FIRST_ITEMS_VAR hands one to the checks). */
const firstAnswers = new Map<string, FirstAnswer>();
/** The feed's first answer at `url` (a 200 with a JSON body), if the probe got one. */
export const firstAnswer = (url: string): FirstAnswer | undefined => firstAnswers.get(url);

const agentOf = (timeoutMs: number) => new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

/** Can we talk HTTP to the target at all? Any HTTP answer counts; connection, DNS or TLS failures do not. */
export async function reachable(url: string, timeoutMs: number): Promise<string | undefined> {
  const agent = agentOf(timeoutMs);
  try {
    const res = await request(`${url}/`, { method: 'GET', dispatcher: agent, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return undefined;
  } catch (e) {
    const err = e as { name?: string; code?: string | number; message?: string; cause?: { name?: string; code?: string; message?: string } };
    // The time bound (the abort signal's TimeoutError, or undici's own connect and header timeouts) is named as such.
    const timedOut =
      [err.name, err.cause?.name].includes('TimeoutError') ||
      ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].includes(String(err.cause?.code ?? err.code));
    const cause = timedOut ? `no response within ${timeoutMs / 1000} s` : (err.cause?.code ?? err.code ?? err.cause?.message ?? err.message ?? String(e));
    const hint = /CERT|SSL|TLS|SELF_SIGNED/i.test(String(cause)) ? ' (for a private CA, point NODE_EXTRA_CA_CERTS at its certificate)' : '';
    return `${url} is unreachable: ${cause}${hint}`;
  } finally {
    await agent.close();
  }
}

/**
 * Is the URL the service at all? One documented, anonymous request: the feed's items list, the gateway's model
 * listing without a credential (401 by the document). A 404 or an HTML page there means the URL is not the
 * service (a missing or extra path prefix), which is a configuration error, not 90 requirement failures. No answer
 * in time, or any other status, is left to the checks to judge.
 */
export async function notTheService(
  service: Service,
  url: string,
  timeoutMs: number,
  maxBodyBytes: number,
  count: () => void,
  /** The gateway's key, when one is configured: a listing refused to no key is asked once more with it. */
  key?: string,
): Promise<string | undefined> {
  const probe = service === 'feed' ? '/api/v1/items' : '/v1/models';
  const agent = agentOf(timeoutMs);
  firstAnswers.delete(url);
  try {
    const get = async (p: string, headers?: Record<string, string>) => {
      count();
      const res = await request(`${url}${p}`, { method: 'GET', headers, dispatcher: agent, signal: AbortSignal.timeout(timeoutMs) });
      res.body.on('error', () => undefined);
      const type = String(res.headers['content-type'] ?? '');
      const body = service === 'feed' && p === probe && res.statusCode === 200 && /json/i.test(type) ? await bounded(res, maxBodyBytes) : undefined;
      if (body !== undefined) firstAnswers.set(url, { url: `${url}${p}`, body, at: Date.now() });
      else res.body.destroy();
      return { status: res.statusCode, type };
    };
    const html = (t: string) => /text\/html/i.test(t);
    const res = await get(probe);
    const type = res.type;
    if (res.status !== 404 && !html(type)) return undefined;
    // An HTML page on the feed's items list: a web site answering every path, or one HTML operation? A second
    // documented operation decides (one operation serving HTML is a defect the checks report).
    if (service === 'feed' && res.status !== 404) {
      const second = await get('/api/v1/hot-topics');
      if (second.status !== 404 && !html(second.type)) return undefined;
    }
    // A gateway refusing the keyless listing with a 404 or an HTML page (defects the credential and error checks
    // report) lists with the key. After a 404 only a listing (200, JSON) says the URL is right: a wrong URL answers
    // that 404 too, and its proxy may refuse the key in JSON.
    let keyed: { status: number; type: string } | undefined;
    if (service === 'gateway' && key) {
      keyed = await get(probe, { authorization: `Bearer ${key}` });
      if (res.status === 404 ? keyed.status === 200 && /json/i.test(keyed.type) : keyed.status !== 404 && !html(keyed.type)) return undefined;
    }
    const what = service === 'feed' ? 'a content feed' : 'a model gateway';
    const answer = (a: { status: number; type: string }) => `${a.status}${a.type ? ` ${a.type.split(';')[0]}` : ''}`;
    return `this does not look like ${what}: GET ${url}${probe} answered ${answer(res)}${keyed ? ` (with the key: ${answer(keyed)})` : ''}; check ${URL_SETTING[service]}${prefixHint(service, url)}`;
  } catch {
    return undefined;
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/**
 * A body read whole, as text, when it is within the run's body bound (the client's own reader); past the bound reading
 * stops (the connection is dropped) and there is no first answer to hand on: the checks then ask themselves, under the
 * same bound.
 */
async function bounded(res: Parameters<typeof readRawBody>[0], max: number): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await readRawBody(res, max, { bytes: 0 })); // as undici's body.text() decodes
  } catch (err) {
    if (err instanceof ResponseTooLargeError) return undefined;
    throw err;
  }
}

/** What a URL that is not the service most likely has wrong: a documented path segment given as part of the base. */
function prefixHint(service: Service, url: string): string {
  const { pathname } = new URL(url);
  if (service === 'gateway' && /\/v1$/.test(pathname)) return ' (the gateway URL is the bare root: drop the /v1 segment)';
  const api = service === 'feed' ? /\/api(\/v1)?$/.exec(pathname)?.[0] : undefined;
  if (api) return ` (the feed URL is the base the documented /api/v1/… paths go under: drop the trailing ${api})`;
  const probe = service === 'feed' ? '/api/v1/items' : '/v1/models';
  return ` (a missing or extra path prefix? ${probe} must be at ${url}${probe})`;
}

/** Does the port complete a TLS handshake (any certificate: only the protocol is asked)? */
function speaksTls(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host, port, servername: isIP(host) ? undefined : host, rejectUnauthorized: false, timeout: timeoutMs });
    const done = (yes: boolean) => {
      socket.destroy();
      resolve(yes);
    };
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/** Does the port answer plain HTTP (any status)? */
async function answersPlainHttp(origin: string, timeoutMs: number): Promise<boolean> {
  const agent = agentOf(timeoutMs);
  try {
    const res = await request(`${origin}/`, { method: 'GET', dispatcher: agent, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return true;
  } catch {
    return false;
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/**
 * A URL the suite could not use (unreachable, or not the service): does its port speak the other scheme? Then that
 * is what is wrong ("this port speaks TLS: use https://…"). Not asked when the target did not answer in time or
 * does not exist (DNS, connection refused): a second probe would wait or fail alike.
 */
export async function schemeMismatch(service: Service, url: string, problem: string, timeoutMs: number, count: () => void): Promise<string | undefined> {
  if (/no response within|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH/.test(problem)) return undefined;
  const u = new URL(url);
  const tls = u.protocol === 'https:';
  const other = new URL(url);
  other.protocol = tls ? 'http:' : 'https:';
  const suggested = `${other.protocol}//${other.host}${u.pathname.replace(/\/$/, '')}`;
  const port = Number(u.port || (tls ? 443 : 80));
  if (tls) count();
  // (An IPv6 host keeps its brackets in the URL's hostname: a URL wants them, a socket does not.)
  const mismatch = tls
    ? await answersPlainHttp(`http://${u.hostname}:${port}`, timeoutMs)
    : await speaksTls(u.hostname.replace(/^\[|\]$/g, ''), port, timeoutMs);
  if (!mismatch) return undefined;
  return `${tls ? 'this port does not speak TLS: use' : 'this port speaks TLS: use'} ${suggested} (${URL_SETTING[service]} is ${url})`;
}
