/**
 * The official `@google/genai` client, with its defaults, against the gateway scenarios (vendor C):
 *   npm run client-conformance -- --service gateway --profile vendor-names -- node examples/clients/sdk-genai.mjs
 *   npm run client-conformance -- --service gateway --profile vendor-names -- env SDK_RETRY=1 node examples/clients/sdk-genai.mjs
 * (--profile vendor-names: the SDK sends its key in x-goog-api-key, the vendor's own name of the vendor C key
 * header.) It reads GEMINI_API_KEY / GOOGLE_API_KEY and GOOGLE_GEMINI_BASE_URL. Four calls: the first meets a
 * 429 then a 503 (Retry-After: 1), the second a 400, the third a 502 on every attempt, the fourth a stream that
 * breaks after its first event. The script retries nothing itself: what the run sees is what the SDK does.
 */
import { GoogleGenAI } from '@google/genai';

// The SDK retries nothing unless retryOptions are given. SDK_RETRY=1 turns its retries on (3 attempts, 0.1 s
// initial delay) to show how they treat Retry-After.
const retryOptions = process.env.SDK_RETRY === '1' ? { attempts: 3, initialDelay: 0.1, maxDelay: 2 } : undefined;
const ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY, httpOptions: { baseUrl: process.env.GOOGLE_GEMINI_BASE_URL, retryOptions } });
const model = process.env.GATEWAY_MODEL ?? 'ref-chat-small';

async function step(name, f) {
  try {
    console.log(`${name}: ${await f()}`);
  } catch (e) {
    console.log(`${name}: ${e.constructor.name} ${e.status ?? ''} ${String(e.message).split('\n')[0].slice(0, 200)}`);
  }
}

await step('generateContent, 429 then 503', async () => (await ai.models.generateContent({ model, contents: 'one' })).text);
await step('generateContent, 400', async () => (await ai.models.generateContent({ model, contents: 'two' })).text);
await step('generateContent, 502 every time', async () => (await ai.models.generateContent({ model, contents: 'three' })).text);
await step('generateContentStream, broken', async () => {
  let out = '';
  for await (const chunk of await ai.models.generateContentStream({ model, contents: 'four' })) out += chunk.text ?? '';
  return out;
});
