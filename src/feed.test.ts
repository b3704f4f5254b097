/**
 * The feed helpers as a client of the feed: the items pager keeps the document's cursor rule.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFeedReference, type FeedReference } from '../fixtures/feed/reference.js';
import { setFeedTestContext } from './context.js';
import { scratchDir } from '../fixtures/scratch.js';

let ref: FeedReference;
let rejectNext = true;
const seen: string[] = [];

beforeAll(async () => {
  ref = await startFeedReference({
    modifiers: [
      {
        name: 'reject-first-continuation',
        breaks: [],
        description: 'the first continuation request is told its cursor is no longer valid',
        after: (req, reply) => {
          if (req.path !== '/api/v1/items') return reply;
          seen.push(req.query.has('cursor') ? 'continuation' : 'first page');
          if (!req.query.has('cursor') || !rejectNext) return reply;
          rejectNext = false;
          return { status: 400, headers: { 'content-type': 'application/problem+json', 'x-request-id': 'r' }, body: '{"code":"invalid_cursor"}' };
        },
      },
    ],
  });
  setFeedTestContext(ref.url, scratchDir('feed-test-'));
});
afterAll(() => ref.close());

describe('client rule feed-client-cursor-restart: after invalid_cursor the client restarts from the first page', () => {
  test('the items pager restarts from the first page once when a cursor is rejected, then pages on', async () => {
    const { walkItems } = await import('./feed.js');
    const pages = await walkItems({ limit: 20 }, 3);
    expect(seen.slice(0, 4)).toEqual(['first page', 'continuation', 'first page', 'continuation']);
    expect(pages).toHaveLength(3);
    const ids = pages.flatMap((p) => p.items.map((i) => i.id));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('compareLive: two requests compared on a feed that may move', () => {
  const answer = (body: string) => ({ body, header: () => undefined }) as unknown as import('./http.js').HttpResponse;
  const series = (...bodies: string[]) => {
    let i = 0;
    return async () => answer(bodies[Math.min(i++, bodies.length - 1)]!);
  };
  const key = (r: import('./http.js').HttpResponse) => r.body;
  test('b differs while a stays, and b answers as it did when asked again: different', async () => {
    const { compareLive } = await import('./feed.js');
    expect((await compareLive(series('A', 'A'), series('B', 'B'), key)).outcome).toBe('different');
  });
  test('a change undone at once (b once without a row, then with it again): the same', async () => {
    const { compareLive } = await import('./feed.js');
    expect((await compareLive(series('A', 'A'), series('B', 'A'), key)).outcome).toBe('same');
  });
});
