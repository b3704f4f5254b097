/**
 * Evidence for the report: an exchange in Allure's HTTP-exchange format, and a curl command that replays it.
 * Exchanges are recorded already redacted: secrets appear as $VARIABLE references, which curl expands from
 * the reader's own environment.
 */
import type { HttpExchange } from 'allure-js-commons';
import type { Exchange } from './http.js';

const nv = (rec: Record<string, string> | undefined) => Object.entries(rec ?? {}).map(([name, value]) => ({ name, value }));

export function toAllureExchange(ex: Exchange): HttpExchange {
  const start = Date.parse(ex.startedAt);
  // Redacted URLs carry $VARIABLE references; they parse as they are.
  const url = new URL(ex.url);
  return {
    schemaVersion: 1,
    request: {
      method: ex.method,
      url: ex.url,
      headers: nv(ex.requestHeaders),
      query: [...url.searchParams].map(([name, value]) => ({ name, value })),
      body: ex.requestBody === undefined ? undefined : { contentType: ex.requestHeaders['content-type'], encoding: 'utf8', value: ex.requestBody },
    },
    response:
      ex.status === undefined
        ? undefined
        : {
            status: ex.status,
            headers: nv(ex.responseHeaders),
            body: {
              contentType: ex.responseHeaders?.['content-type'],
              encoding: 'utf8',
              value: ex.responseBody ?? '',
              size: ex.bodyBytes,
              truncated: ex.truncated,
            },
          },
    error: ex.error ? { name: 'RequestError', message: ex.error } : undefined,
    start,
    stop: start + ex.durationMs,
  };
}

/** Quote for a POSIX shell, leaving $VARIABLE references (redacted secrets) to expand. */
function shellQuote(s: string): string {
  const parts = s.split(/(\$[A-Z][A-Z0-9_]*)/);
  return parts.map((p) => (/^\$[A-Z][A-Z0-9_]*$/.test(p) ? `"${p}"` : p === '' ? '' : `'${p.replace(/'/g, `'\\''`)}'`)).join('');
}

const SKIP_HEADERS = new Set(['host', 'content-length', 'connection']);

export function curlFor(ex: Exchange): string {
  const args = ['curl', '-i'];
  if (ex.method === 'HEAD') args.push('--head');
  else if (ex.method !== 'GET') args.push('-X', ex.method);
  for (const [k, v] of Object.entries(ex.requestHeaders)) {
    const name = k.toLowerCase();
    // curl asks for the codings it can decode, and decodes them: the response reads as the suite read it.
    if (name === 'accept-encoding') args.push('--compressed');
    else if (!SKIP_HEADERS.has(name)) args.push('-H', shellQuote(`${k}: ${v}`));
  }
  if (ex.requestBody !== undefined) args.push('--data-raw', shellQuote(ex.requestBody));
  args.push(shellQuote(ex.url));
  return args.join(' ');
}
