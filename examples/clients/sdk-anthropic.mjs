/**
 * The official `@anthropic-ai/sdk` client, with its defaults, against the gateway scenarios:
 *   npm run client-conformance -- --service gateway -- node examples/clients/sdk-anthropic.mjs
 * It reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY. Four calls: the first meets a 429 then a 503
 * (Retry-After: 1), the second a 400, the third a 502 on every attempt, the fourth a stream that breaks after its
 * first events. The script retries nothing itself: what the run sees is what the SDK does.
 */
import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic();
const model = process.env.GATEWAY_MODEL ?? 'ref-chat-small';
const ask = (content, extra = {}) => ({ model, max_tokens: 16, messages: [{ role: 'user', content }], ...extra });
const text = (m) => m.content.map((c) => c.text ?? '').join('');

async function step(name, f) {
  try {
    console.log(`${name}: ${await f()}`);
  } catch (e) {
    console.log(`${name}: ${e.constructor.name} ${e.status ?? ''} ${e.message.split('\n')[0]}`);
  }
}

await step('messages, 429 then 503', async () => text(await client.messages.create(ask('one'))));
await step('messages, 400', async () => text(await client.messages.create(ask('two'))));
await step('messages, 502 every time', async () => text(await client.messages.create(ask('three'))));
await step('messages stream, broken', async () => {
  let out = '';
  for await (const ev of await client.messages.create(ask('four', { stream: true }))) if (ev.type === 'content_block_delta') out += ev.delta.text ?? '';
  return out;
});
