// BREAKS: "Cap the number of retries, so that failed requests do not exhaust the total-request quota."
/* eslint-disable -- written blind from the two documents alone (see README.md here), kept as written */
// Model gateway client: model listing, vendor A chat (plain + streamed), vendor B messages, vendor C generateContent, realtime WebSocket.
import WebSocket from 'ws';
const BASE = process.env.GATEWAY_URL.replace(/\/+$/, ''),
  KEY = process.env.GATEWAY_API_KEY;
const T0 = Date.now(),
  DEADLINE = T0 + 50_000,
  MAX_RETRIES = Infinity; // FAULT: retries until success (only the run deadline stops it)
const CHAT = '/v1/chat/completions',
  PREFERRED_MODEL = 'preferred-model-not-in-group';
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const log = (...a) => console.log(`[${((Date.now() - T0) / 1000).toFixed(1)}s]`, ...a);
const bearer = { authorization: `Bearer ${KEY}` }; // sk- prefix kept
const backoff = (n) => {
  const exp = Math.min(8000, 500 * 2 ** n);
  return exp / 2 + Math.random() * (exp / 2);
}; // exponential + jitter
function retryAfterMs(h) {
  if (/^\s*\d+(\.\d+)?\s*$/.test(String(h))) return Number(h) * 1000 + 50;
  const d = Date.parse(h);
  return Number.isNaN(d) ? backoff(0) : Math.max(0, d - Date.now());
}

async function readStream(res) {
  // complete only when the terminator (or a finish_reason) arrived
  let text = '';
  const dec = new TextDecoder();
  try {
    for await (const chunk of res.body) text += dec.decode(chunk, { stream: true });
  } catch {
    return { text, broken: true };
  }
  return { text, broken: !/data:\s*\[DONE\]/.test(text) && !/"finish_reason"\s*:\s*"[a-z_]+"/.test(text) };
}
async function httpOnce(path, { headers = {}, body, stream = false } = {}) {
  try {
    const res = await fetch(BASE + path, {
      method: body ? 'POST' : 'GET',
      signal: AbortSignal.timeout(20_000),
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const r = { status: res.status, retryAfter: res.headers.get('retry-after') };
    if (stream && res.ok) Object.assign(r, await readStream(res));
    else r.text = await res.text();
    try {
      r.data = JSON.parse(r.text);
    } catch {}
    return r;
  } catch (e) {
    return { status: 0, error: e.message };
  }
}
async function withRetry(label, once) {
  // retry only 429 / 5xx / broken stream, wait Retry-After or backoff, capped
  let last;
  for (let attempt = 0; ; attempt++) {
    last = await once(last);
    log(label, last.status, last.broken ? '(stream broken)' : '', last.error ?? '');
    const retryable = last.status === 429 || last.status >= 500 || last.status === 0 || last.broken;
    if (!retryable) return last;
    if (attempt >= MAX_RETRIES) {
      log(label, `giving up after ${attempt} retries`);
      return last;
    }
    const wait = last.retryAfter != null ? retryAfterMs(last.retryAfter) : backoff(attempt);
    if (Date.now() + wait > DEADLINE) {
      log(label, 'no time left to wait', Math.round(wait));
      return last;
    }
    await sleep(wait);
  }
}
function realtimeOnce(model, protocols) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${BASE.replace(/^http/, 'ws')}/v1/realtime?model=${encodeURIComponent(model)}`, protocols);
    let done = false;
    const finish = (r) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        resolve(r);
      }
    };
    const timer = setTimeout(() => {
      ws.terminate();
      finish({ status: 101, note: 'no message within 5 s' });
    }, 5000);
    ws.on('unexpected-response', (req, res) => {
      finish({ status: res.statusCode, retryAfter: res.headers['retry-after'] ?? null });
      req.destroy();
    });
    ws.on('message', (m) => {
      finish({ status: 101, first: String(m).slice(0, 60) });
      ws.close(1000);
    });
    ws.on('error', (e) => finish({ status: 0, error: e.message }));
    ws.on('close', () => finish({ status: 101 }));
  });
}
const chatBody = (model, extra = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello in one word.' }], ...extra });

const listing = await withRetry('models', () => httpOnce('/v1/models', { headers: bearer }));
const ids = (listing.data?.data ?? []).map((m) => m.id);
if (!ids.length) {
  log('no model listed; stopping');
  process.exit(0);
}
let model = ids[0];
const pref = await withRetry('chat (preferred model)', () => httpOnce(CHAT, { headers: bearer, body: chatBody(PREFERRED_MODEL) }));
if (pref.status === 200) model = PREFERRED_MODEL;
else log('preferred model unavailable; using', model);

const chat = await withRetry('chat', () => httpOnce(CHAT, { headers: bearer, body: chatBody(model) }));
const streamBody = chatBody(model, { stream: true });
const streamed = await withRetry('chat stream', () => httpOnce(CHAT, { headers: bearer, body: streamBody, stream: true })); // restart from the beginning
const msgs = await withRetry('messages', () =>
  httpOnce('/v1/messages', {
    headers: { 'x-api-key': KEY, 'vendorb-version': '2023-06-01' },
    body: { model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello in one word.' }] },
  }),
);
const gen = await withRetry('generateContent', () =>
  httpOnce(`/v1beta/models/${encodeURIComponent(model)}:generateContent`, {
    headers: { 'x-vendorc-api-key': KEY },
    body: { contents: [{ parts: [{ text: 'Say hello in one word.' }] }] },
  }),
);
const rt = await withRetry('realtime', () => realtimeOnce(model, ['realtime', `vendora-insecure-api-key.${KEY}`, 'vendora-beta.realtime-v1']));
log('done:', { model, chat: chat.status, stream: streamed.status, messages: msgs.status, generate: gen.status, realtime: rt.status });
process.exit(0);
