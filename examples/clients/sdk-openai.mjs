/**
 * The official `openai` client, with its defaults, against the gateway scenarios:
 *   npm run client-conformance -- --service gateway -- node examples/clients/sdk-openai.mjs
 * It reads OPENAI_BASE_URL and OPENAI_API_KEY. Four calls: the first meets a 429 then a 503 (Retry-After: 1),
 * the second a 400, the third a 502 on every attempt, the fourth a stream that breaks after its first event.
 * The script retries nothing itself: what the run sees is what the SDK does.
 */
import OpenAI from 'openai';

const client = new OpenAI();
const model = process.env.GATEWAY_MODEL ?? 'ref-chat-small';
const ask = (content, extra = {}) => ({ model, messages: [{ role: 'user', content }], ...extra });

async function step(name, f) {
  try {
    console.log(`${name}: ${await f()}`);
  } catch (e) {
    console.log(`${name}: ${e.constructor.name} ${e.status ?? ''} ${e.message.split('\n')[0]}`);
  }
}

await step('chat, 429 then 503', async () => (await client.chat.completions.create(ask('one'))).choices[0].message.content);
await step('chat, 400', async () => (await client.chat.completions.create(ask('two'))).choices[0].message.content);
await step('chat, 502 every time', async () => (await client.chat.completions.create(ask('three'))).choices[0].message.content);
await step('chat stream, broken', async () => {
  let text = '';
  for await (const chunk of await client.chat.completions.create(ask('four', { stream: true }))) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
});
