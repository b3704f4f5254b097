/**
 * model-gateway-service.md — What the service does: "Official client libraries of vendor A and vendor B work by
 * replacing only the base URL and the API key." Vendor A's client gets the base URL with /v1, vendor B's the bare
 * root. SDK retries are off; every SDK request goes through the suite's counting, recording fetch. Vendor C's
 * client is not promised by the document; it is run with the deployment's vendor C key header added.
 */
import { describe } from 'vitest';
import { createRequire } from 'node:module';
import type OpenAIClient from 'openai';
import type AnthropicClient from '@anthropic-ai/sdk';

import { check, expect, type CheckTools } from '../../src/harness.js';
import { baseUrl, runContext } from '../../src/context.js';
import { chosenModel, gw, recordingFetch, requireValidKey, sdkCall, sdkError, unknownModel, withRecordedGlobalFetch, madeUpKey } from '../../src/gateway.js';

const timeout = () => runContext().timeoutMs;
/**
 * The SDKs are loaded when a check needs them, so a run that skips these checks does not pay for them. They are
 * loaded as CommonJS, which is what `require('openai')` gives: the vendors publish it beside the ES module build,
 * from the same sources. In a fresh worker thread the three load in about 0.2 s of CPU that way, against 0.35 s as
 * ES modules, on Node 20 (about 0.1 s less on Node 22, 0.05 s less on Node 24); a whole gateway run of the suite
 * measured about 0.3 s of CPU less.
 */
const load = createRequire(import.meta.url);
const OpenAI = async () => (load('openai') as typeof import('openai')).default;
const Anthropic = async () => (load('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk')).default;
const openai = async (apiKey: string): Promise<OpenAIClient> =>
  new (await OpenAI())({ apiKey, baseURL: `${baseUrl('gateway')}/v1`, maxRetries: 0, timeout: timeout(), fetch: recordingFetch() });
const anthropic = async (apiKey: string): Promise<AnthropicClient> =>
  new (await Anthropic())({ apiKey, baseURL: baseUrl('gateway'), maxRetries: 0, timeout: timeout(), fetch: recordingFetch() });
/**
 * The call fails with the client's typed error for the documented status. A refusal that outlasted the retries (a
 * 429, an outage's 503), or a request the suite no longer sends (the breaker, the budget), ends the check as the
 * target being unavailable (sdkError), not as the status this check is about. A 5xx the retry policy takes as the
 * gateway's answer to this very request (an unknown model answered 503 model_not_found departs from the 404 the
 * document gives it) is judged like any other.
 */
async function rejectsAs(call: () => Promise<unknown>, expected: abstract new (...args: never[]) => Error, label: string): Promise<void> {
  const error = await sdkError(call);
  expect(error, `the error ${label} raised`).toBeInstanceOf(expected);
  // Both clients obey the vendors' x-should-retry header before their own rules: "true" on this 4xx (a defect of the
  // request: "Retry only 429 and 5xx") makes the client, with its default retries, send the defect again.
  const headers = (error as { headers?: { get?: (name: string) => string | null } }).headers;
  const shouldRetry = typeof headers?.get === 'function' ? headers.get('x-should-retry') : null;
  expect(shouldRetry, `x-should-retry on the 4xx ${label} got (the official client retries a 4xx that says "true")`).not.toBe('true');
}
const bogus = () => madeUpKey();

/**
 * The vendor A client's ChatCompletionMessage: the answer's text is its `content`, a string or null (a refusal, a tool
 * call), which code written against the client reads. A message without `content` is judged only when its choice
 * finished normally (finish_reason "stop") with no tool call: an answer cut by max_tokens (a reasoning model may spend
 * them all) or a tool call may come without one from an OpenAI-compatible upstream.
 */
function expectChatMessage(choice: unknown): void {
  const c = choice as { message?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown } | undefined;
  expect(c?.message, 'choices[0].message').toBeTypeOf('object');
  const message = c!.message!;
  if (!('content' in message) && (c!.finish_reason !== 'stop' || message.tool_calls !== undefined)) return;
  const content = message.content;
  const readable = typeof content === 'string' || content === null;
  expect(readable, `choices[0].message.content of a completed answer (the client's string or null), got ${JSON.stringify(content)}`).toBe(true);
}

// One official client call at a time: the vendor C client goes through the swapped global fetch, which must not
// carry another check's requests; and an SDK's own connection reuse is not interleaved with other checks.
describe.sequential('vendor A official client (openai)', () => {
  check(
    {
      id: 'gw-sdk-openai-list-and-generate',
      title: 'lists models and makes one small chat completion with only the base URL and key replaced',
      requirements: ['gw-sdk-vendor-a'],
    },
    async (t) => {
      const client = await openai(await requireValidKey(t));
      const models = await sdkCall('models.list()', () => client.models.list());
      expect(models.data.length, 'models listed').toBeGreaterThan(0);
      const model = await chosenModel();
      const completion = await sdkCall('chat.completions.create()', () =>
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Reply with the single word OK.' }], max_tokens: 16 }),
      );
      expectChatMessage(completion.choices?.[0]);
    },
  );

  check(
    {
      id: 'gw-sdk-openai-401-typed',
      title: 'openai: a bad key surfaces as AuthenticationError (401)',
      requirements: ['gw-sdk-vendor-a', 'gw-models-bad-credential-401'],
    },
    async (t) => {
      await requireValidKey(t);
      const { AuthenticationError } = await OpenAI();
      const client = await openai(bogus());
      await rejectsAs(() => client.models.list(), AuthenticationError, 'models.list() with a bad key');
    },
  );

  check(
    {
      id: 'gw-sdk-openai-404-typed',
      title: 'openai: an unknown model surfaces as NotFoundError (404)',
      requirements: ['gw-sdk-vendor-a', 'gw-unknown-model-404'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      const { NotFoundError } = await OpenAI();
      const client = await openai(key);
      const missing = () => client.chat.completions.create({ model: unknownModel(), messages: [{ role: 'user', content: 'OK' }], max_tokens: 16 });
      await rejectsAs(missing, NotFoundError, 'a call naming an unknown model');
    },
  );

  check(
    {
      id: 'gw-sdk-openai-stream',
      title: "openai: a streamed chat completion yields the chunks of its deltas and a complete completion through the client's own stream helper",
      requirements: ['gw-sdk-vendor-a'],
    },
    async (t) => {
      const client = await openai(await requireValidKey(t));
      const model = await chosenModel();
      const chunks = await sdkCall('chat.completions.stream()', async () => {
        // Without max_tokens (optional on vendor A); the helper's accumulation throws on a choice left without finish_reason or role.
        const stream = client.chat.completions.stream({
          model,
          messages: [{ role: 'user', content: 'Reply with the single word OK.' }],
        });
        const seen: OpenAIClient.Chat.Completions.ChatCompletionChunk[] = [];
        for await (const chunk of stream) seen.push(chunk);
        await stream.finalChatCompletion();
        return seen;
      });
      t.observe('chunks', `${chunks.length}, text ${JSON.stringify(chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join(''))}`);
      // The document does not show the chunk format ("Event types and the streaming chunk format: not shown"): what
      // is asserted is what the client needs to work. Its stream parser has already thrown on an event that is not
      // JSON or that carries an error; its stream accumulation (ChatCompletionStream) iterates every chunk's
      // `choices`, and the generation comes through their deltas. Nothing else: a chunk with empty choices, an empty
      // id or object (an upstream's content-filter chunk, which the client reads) is not a departure.
      expect(chunks.length, 'chunks the client parsed from the stream').toBeGreaterThan(0);
      expect(
        chunks.every((c) => Array.isArray(c.choices)),
        "every chunk has a choices array (the client's stream accumulation iterates it)",
      ).toBe(true);
      expect(
        chunks.some((c) => c.choices.some((ch) => ch.delta !== undefined)),
        'a chunk carries choices[].delta',
      ).toBe(true);
    },
  );
});

/**
 * A streamed message through the client's stream helper (MessageStream): its events in the order the client needs,
 * and the message it builds from them holding the stream's text and stop reason.
 */
async function anthropicStream(t: CheckTools): Promise<void> {
  const client = await anthropic(await requireValidKey(t));
  const model = await chosenModel();
  const { types, streamed, message } = await sdkCall('messages.stream()', async () => {
    // The client's stream helper (MessageStream): it parses the events and builds the message from them, as an
    // application reading a stream does; finalMessage() throws where the events do not build one.
    const stream = client.messages.stream({
      model,
      max_tokens: 16,
      messages: [{ role: 'user', content: 'Reply with the single word OK.' }],
    });
    const seen: string[] = [];
    let text = '';
    for await (const event of stream) {
      seen.push(event.type);
      // The text the stream carried, whatever its delta's type says.
      if (event.type === 'content_block_delta') {
        const piece = (event.delta as { text?: unknown }).text;
        if (typeof piece === 'string') text += piece;
      }
    }
    return { types: seen, streamed: text, message: await stream.finalMessage() };
  });
  const built = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  t.observe('events', types.join(', '));
  t.observe('the message the client built', `${JSON.stringify(built)}, stop_reason ${JSON.stringify(message.stop_reason)}`);
  // What the client needs to build the message (its MessageStream: a message_start, the content blocks' deltas
  // after it, a message_stop after them), in that order; events of other types anywhere (the vendor's protocol
  // adds some, and its client passes them on or skips them) are not a departure.
  expect(types, 'the events the client parsed from the stream').toContain('message_start');
  const start = types.indexOf('message_start');
  expect(types.slice(start + 1), 'the events after message_start').toContain('content_block_delta');
  const delta = types.indexOf('content_block_delta', start + 1);
  expect(types.slice(delta + 1), 'the events after its first content_block_delta').toContain('message_stop');
  // The message the client built holds the text the stream carried: a delta it cannot read is text lost to the
  // application. (Its stop_reason is observed above, not judged: the client builds a message without one, and the
  // stream format is not shown.)
  expect(built, "the text of the message the client built from the stream's deltas").toBe(streamed);
}

describe.sequential('vendor B official client (@anthropic-ai/sdk)', () => {
  check(
    {
      id: 'gw-sdk-anthropic-list-and-generate',
      title: 'lists models and makes one small message with only the base URL (bare root) and key replaced',
      requirements: ['gw-sdk-vendor-b'],
    },
    async (t) => {
      const client = await anthropic(await requireValidKey(t));
      const models = await sdkCall('models.list()', () => client.models.list());
      expect(models.data.length, 'models listed').toBeGreaterThan(0);
      const model = await chosenModel();
      const message = await sdkCall('messages.create()', () =>
        client.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Reply with the single word OK.' }] }),
      );
      expect(Array.isArray(message.content), 'content blocks').toBe(true);
      // The client's Message is of type "message" (stop_reason is not judged: the document names none of its values,
      // and a gateway passes on what its upstream sends).
      expect(message.type, 'the message type').toBe('message');
    },
  );

  check(
    {
      id: 'gw-sdk-anthropic-401-typed',
      title: '@anthropic-ai/sdk: a bad key surfaces as AuthenticationError (401)',
      requirements: ['gw-sdk-vendor-b', 'gw-models-bad-credential-401'],
    },
    async (t) => {
      await requireValidKey(t);
      const { AuthenticationError } = await Anthropic();
      const client = await anthropic(bogus());
      await rejectsAs(() => client.models.list(), AuthenticationError, 'models.list() with a bad key');
    },
  );

  check(
    {
      id: 'gw-sdk-anthropic-404-typed',
      title: '@anthropic-ai/sdk: an unknown model surfaces as NotFoundError (404)',
      requirements: ['gw-sdk-vendor-b', 'gw-unknown-model-404'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      const { NotFoundError } = await Anthropic();
      const client = await anthropic(key);
      const missing = () => client.messages.create({ model: unknownModel(), max_tokens: 16, messages: [{ role: 'user', content: 'OK' }] });
      await rejectsAs(missing, NotFoundError, 'a call naming an unknown model');
    },
  );

  check(
    {
      id: 'gw-sdk-anthropic-stream',
      title:
        "@anthropic-ai/sdk: a streamed message yields its events, message_start, its deltas, message_stop, and the message they build, through the client's own stream helper",
      requirements: ['gw-sdk-vendor-b'],
    },
    anthropicStream,
  );
});

describe.sequential('vendor C client (@google/genai)', () => {
  check(
    {
      id: 'gw-sdk-genai-generate',
      title: "generates one small reply when pointed at the gateway, the key in the deployment's vendor C header",
      requirements: ['gw-generate-content', 'gw-auth-vendorc-header'],
    },
    async (t) => {
      const key = await requireValidKey(t);
      const { GoogleGenAI } = load('@google/genai') as typeof import('@google/genai');
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: baseUrl('gateway'), headers: { [gw().vendorCKeyHeader]: key }, timeout: timeout() } });
      const model = await chosenModel();
      const res = await sdkCall('models.generateContent()', () =>
        withRecordedGlobalFetch(() => ai.models.generateContent({ model, contents: 'Reply with the single word OK.', config: { maxOutputTokens: 16 } })),
      );
      expect(res.candidates?.length, 'candidates').toBeGreaterThan(0);
    },
  );
});
