/**
 * A gateway client that keeps the retry rules and the key placement of the model gateway document.
 * careful-gateway-client.mjs runs it as is; the self-test runs it with one fault switched on
 * (fixtures/clients/faulty-gateway-client.mjs) to show that each rule broken alone is caught.
 *
 * Retry policy: only 429 and 5xx (and a connection that broke) are retried, at most 3 times; Retry-After is
 * waited out when present, else exponential backoff (100 ms base, 800 ms ceiling) with equal jitter. A broken
 * stream is repeated from the beginning, with the same request.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export const FAULTS = ['retry-4xx', 'no-retry-wait', 'no-retry-cap', 'stream-resume', 'query-key-vendor-a', 'x-api-key-on-chat'];
const MAX_RETRIES = 3;

/**
 * @param {{ base: string, key: string, model?: string, faults?: Set<string>, log?: (s: string) => void }} o
 */
export async function runGatewayClient({ base, key, model = 'ref-chat-small', faults = new Set(), log = (s) => console.log(s) }) {
  const has = (f) => faults.has(f);
  const backoff = (attempt) => {
    const ceiling = Math.min(800, 100 * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  };

  /** One call with the retry rules; `read` consumes the body (a stream may break while it is read). */
  async function call(path, { headers = {}, body, read = (res) => res.json() }) {
    const url = new URL(path, base).href;
    for (let attempt = 0; ; attempt++) {
      let res;
      try {
        res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
        if (res.ok) return { status: res.status, body: await read(res) };
      } catch (e) {
        // The connection broke (for a stream: after it had started). Repeat the whole request.
        if (attempt >= MAX_RETRIES && !has('no-retry-cap')) throw e;
        log(`${path}: ${e.message}; repeating the request from the beginning`);
        await sleep(backoff(attempt));
        continue;
      }
      const text = await res.text();
      const retryable = res.status === 429 || res.status >= 500 || has('retry-4xx');
      if (!retryable || (attempt >= MAX_RETRIES && !has('no-retry-cap'))) {
        log(`${path}: ${res.status}, not retried${retryable ? ` (gave up after ${attempt} retries)` : ''}`);
        return { status: res.status, body: text };
      }
      const ra = res.headers.get('retry-after');
      const wait = has('no-retry-wait') ? 0 : ra && /^\d+$/.test(ra) ? Number(ra) * 1000 + 10 : backoff(attempt);
      log(`${path}: ${res.status}; retrying in ${Math.round(wait)} ms${ra ? ` (Retry-After: ${ra})` : ''}`);
      await sleep(wait);
    }
  }

  const bearer = { authorization: `Bearer ${key}` };
  const chat = (text, extra = {}) => ({ model, messages: [{ role: 'user', content: text }], ...extra });

  // The authentication check, with the form every path accepts.
  const models = await fetch(new URL('/v1/models', base), { headers: bearer });
  log(`models: ${models.status}`);
  await models.arrayBuffer();

  // Vendor A chat with Bearer; vendor B with x-api-key; vendor C with ?key= (each a form its path accepts).
  const a = await call('/v1/chat/completions', { headers: has('x-api-key-on-chat') ? { 'x-api-key': key } : bearer, body: chat('hello') });
  log(`chat: ${a.status}`);
  const b = await call('/v1/messages', { headers: { 'x-api-key': key, 'vendorb-version': '2023-06-01' }, body: { ...chat('hello from B'), max_tokens: 16 } });
  log(`messages: ${b.status}`);
  const c = await call(`/v1beta/models/${model}:generateContent?key=${encodeURIComponent(key)}`, {
    body: { contents: [{ parts: [{ text: 'hello from C' }] }] },
  });
  log(`generateContent: ${c.status}`);

  // A stream, read to its end; if it breaks, the call is repeated whole.
  const streamBody = chat('stream please', { stream: true });
  if (has('stream-resume')) {
    let received = '';
    try {
      const res = await fetch(new URL('/v1/chat/completions', base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer },
        body: JSON.stringify(streamBody),
      });
      const decoder = new TextDecoder();
      for await (const chunk of res.body) received += decoder.decode(chunk, { stream: true });
    } catch {
      // "Resume": send back the text that arrived as a prefilled assistant turn and ask for the rest.
      const partial = received
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '')
        .join('');
      const s = await call('/v1/chat/completions', {
        headers: bearer,
        body: { ...streamBody, messages: [...streamBody.messages, { role: 'assistant', content: partial }] },
      });
      log(`stream resumed after "${partial}": ${s.status}`);
    }
  } else {
    const s = await call('/v1/chat/completions', { headers: bearer, body: streamBody, read: (res) => res.text() });
    log(`stream: ${s.status}, ${String(s.body).split('\n\n').filter(Boolean).length} events`);
  }

  if (has('query-key-vendor-a')) {
    const q = await call(`/v1/chat/completions?key=${encodeURIComponent(key)}`, { body: chat('key in the query') });
    log(`chat with ?key=: ${q.status}`);
  }
}
