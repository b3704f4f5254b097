/** The client-rule judges on hand-made traffic: the cases the example clients do not reach. */
import { describe, expect, test } from 'vitest';
import { judgeAll, retryAfterSeconds, type JudgeContext } from './judge.js';
import type { ObservedExchange } from './observer.js';
import { loadProfile } from '../spec.js';

const ctx: JudgeContext = {
  retryCeiling: 10,
  commandStopped: false,
  names: loadProfile().gateway,
  feed: loadProfile().feed,
};
let seq = 0;
function x(o: Partial<ObservedExchange> & { url: string; at: number }): ObservedExchange {
  return {
    seq: ++seq,
    method: 'GET',
    requestHeaders: {},
    requestBody: '',
    receivedAt: o.at,
    respondedAt: o.at + 1,
    status: 200,
    responseHeaders: {},
    responseBody: '',
    ...o,
  };
}
const verdictOf = (service: 'feed' | 'gateway', xs: ObservedExchange[], id: string, c = ctx) => judgeAll(service, xs, c).find((r) => r.id === id)!;

describe('client-rule judges', () => {
  test('If-None-Match with the weak form of the ETag, or in a list, counts as sent', () => {
    const etag = { etag: 'W/"abc"', 'cache-control': 's-maxage=1' };
    const xs = [
      x({ url: '/api/v1/hot-topics', at: 0, responseHeaders: etag }),
      x({ url: '/api/v1/hot-topics', at: 2000, requestHeaders: { 'if-none-match': '"zzz", "abc"' }, status: 304, responseHeaders: etag }),
    ];
    expect(verdictOf('feed', xs, 'client-feed-if-none-match').verdict).toBe('passed');
    xs[1]!.requestHeaders = { 'if-none-match': '"other"' };
    expect(verdictOf('feed', xs, 'client-feed-if-none-match').verdict).toBe('warning');
  });

  test('Retry-After as an HTTP-date is read relative to the answer Date', () => {
    const a = x({ url: '/', at: 0, status: 503, responseHeaders: { date: 'Sun, 22 Nov 2026 10:00:00 GMT', 'retry-after': 'Sun, 22 Nov 2026 10:00:03 GMT' } });
    expect(retryAfterSeconds(a)).toBe(3);
  });

  test('a continuation page after a 304 is paging, not a poll', () => {
    const page1 = JSON.stringify({ items: [], page: { hasMore: true, nextCursor: 'c1' } });
    const cc = { etag: '"p1"', 'cache-control': 's-maxage=1' };
    const xs = [
      x({ url: '/api/v1/items?limit=2', at: 0, responseHeaders: cc, responseBody: page1 }),
      x({ url: '/api/v1/items?limit=2', at: 1500, status: 304, responseHeaders: cc, requestHeaders: { 'if-none-match': '"p1"' } }),
      x({ url: '/api/v1/items?limit=2&cursor=c1', at: 1503, responseHeaders: cc }),
    ];
    const r = verdictOf('feed', xs, 'client-feed-polling-interval');
    expect(r.verdict).toBe('passed');
    expect(r.message).toContain('1 poll(s)');
  });

  test('a story id first seen in a Location header is API data; one seen only as an item id is not', () => {
    const xs = [
      x({ url: '/api/v1/stories/st-a', at: 0, status: 308, responseHeaders: { location: '/api/v1/stories/st-b' } }),
      x({ url: '/api/v1/stories/st-b', at: 10 }),
    ];
    xs[0]!.responseBody = '';
    const withLink = [
      x({ url: '/api/v1/hot-topics', at: -10, responseBody: JSON.stringify({ items: [{ id: 'itm_1', links: { story: 'https://h/stories/st-a' } }] }) }),
      ...xs,
    ];
    expect(verdictOf('feed', withLink, 'client-feed-story-id-from-link').verdict).toBe('passed');
    const built = [...withLink, x({ url: '/api/v1/stories/itm_1', at: 20, status: 404 })];
    expect(verdictOf('feed', built, 'client-feed-story-id-from-link').verdict).toBe('failed');
  });

  test('a client still retrying a failing call when the time bound stopped it has no cap', () => {
    const call = { method: 'POST', requestBody: '{"model":"m"}', status: 502, scenario: 'upstream-down' };
    const xs = [1, 2, 3].map((n) => x({ url: '/v1/chat/completions', at: n * 100, ...call }));
    expect(verdictOf('gateway', xs, 'client-gw-retry-cap').verdict).toBe('passed');
    expect(verdictOf('gateway', xs, 'client-gw-retry-cap', { ...ctx, commandStopped: true }).verdict).toBe('failed');
    expect(verdictOf('gateway', xs, 'client-gw-retry-cap', { ...ctx, retryCeiling: 1 }).verdict).toBe('failed');
  });

  test('?key= alone on a vendor A path fails key placement; on a vendor C path it passes', () => {
    const post = { method: 'POST', requestBody: '{}' };
    expect(verdictOf('gateway', [x({ url: '/v1beta/models/m:generateContent?key=sk-1', at: 0, ...post })], 'client-gw-key-placement').verdict).toBe('passed');
    expect(verdictOf('gateway', [x({ url: '/v1/chat/completions?key=sk-1', at: 0, ...post })], 'client-gw-key-placement').verdict).toBe('failed');
  });
});

test('feed field names come from the deployment profile', () => {
  const feed = { ...loadProfile().feed, items: { ...loadProfile().feed.items, nextCursor: 'paging.next' } };
  const cc = { 'cache-control': 's-maxage=1' };
  const xs = [
    x({ url: '/api/v1/items', at: 0, responseHeaders: cc, responseBody: JSON.stringify({ paging: { next: 'n1' } }) }),
    x({ url: '/api/v1/items?cursor=n1', at: 5, responseHeaders: cc }),
  ];
  // With the default names the second request is not a continuation: a poll 4 ms after s-maxage=1.
  expect(verdictOf('feed', xs, 'client-feed-polling-interval').verdict).toBe('failed');
  // With the profile's names it is the next page: the client pages, it does not poll.
  expect(verdictOf('feed', xs, 'client-feed-polling-interval', { ...ctx, feed }).verdict).toBe('not applicable');
});

test('the realtime handshake: the three subprotocols or Bearer pass; the key in the URL or a lone key subprotocol fails; no handshake is not applicable', () => {
  const ws = (url: string, protocols?: string, authorization?: string) =>
    x({
      url,
      at: 0,
      upgrade: true,
      requestHeaders: { ...(protocols ? { 'sec-websocket-protocol': protocols } : {}), ...(authorization ? { authorization } : {}) },
    });
  const three = 'realtime, vendora-insecure-api-key.sk-1, vendora-beta.realtime-v1';
  expect(verdictOf('gateway', [ws('/v1/realtime?model=m', three)], 'client-gw-realtime-key-form').verdict).toBe('passed');
  expect(verdictOf('gateway', [ws('/v1/realtime?model=m', undefined, 'Bearer sk-1')], 'client-gw-realtime-key-form').verdict).toBe('passed');
  expect(verdictOf('gateway', [ws('/v1/realtime?model=m&key=sk-1')], 'client-gw-realtime-key-form').verdict).toBe('failed');
  expect(verdictOf('gateway', [ws('/v1/realtime?model=m', 'vendora-insecure-api-key.sk-1')], 'client-gw-realtime-key-form').verdict).toBe('failed');
  expect(verdictOf('gateway', [], 'client-gw-realtime-key-form').verdict).toBe('not applicable');
});

test('polls are judged on the resource, not its spelling: defaults, order and undefined parameters make no new resource; another window, a cursor do', () => {
  const cc = { 'cache-control': 's-maxage=1', etag: '"i"' };
  const at = (url: string, t: number, extra: Partial<ObservedExchange> = {}) => x({ url, at: t, responseHeaders: cc, ...extra });
  const respelt = [at('/api/v1/items?limit=20', 0), at('/api/v1/items?window=7d&limit=20', 10), at('/api/v1/items?mode=selected&_=3&limit=020', 20)];
  const r = verdictOf('feed', respelt, 'client-feed-polling-interval');
  expect(r.verdict).toBe('failed');
  expect(r.evidence).toEqual(respelt.map((e) => e.seq));
  // The same resource asked for again without If-None-Match: the ETag it was given is for the resource.
  expect(verdictOf('feed', respelt, 'client-feed-if-none-match').verdict).toBe('warning');
  const other = [
    at('/api/v1/items?limit=20', 0),
    at('/api/v1/items?window=24h&limit=20', 10),
    at('/api/v1/items?limit=20&q=%20agents%20', 20),
    at('/api/v1/items?limit=20&q=agents', 2000),
  ];
  const o = verdictOf('feed', other, 'client-feed-polling-interval');
  expect(o.verdict).toBe('passed');
  expect(o.message).toContain('1 poll(s)');
});

test('a retry after 429 is the same request however it is spelt', () => {
  const refused = x({ url: '/api/v1/items?limit=20', at: 0, status: 429, responseHeaders: { 'retry-after': '1' } });
  const retry = x({ url: '/api/v1/items?window=7d&limit=20', at: 10 });
  const v = verdictOf('feed', [refused, retry], 'client-feed-retry-after');
  expect(v.verdict).toBe('failed');
});

test('any retry makes the retry rules apply: one call retried leaves them not exercised (never not applicable); no retry at all, not applicable', () => {
  const call = { method: 'POST', url: '/v1/chat/completions', requestBody: '{"model":"m"}' };
  const retried = [x({ ...call, at: 0, status: 429, responseHeaders: { 'retry-after': '1' } }), x({ ...call, at: 1100 })];
  expect(verdictOf('gateway', retried, 'client-gw-retry-cap').verdict).toBe('not exercised');
  expect(verdictOf('gateway', retried, 'client-gw-retry-statuses').verdict).toBe('not exercised');
  expect(verdictOf('gateway', retried, 'client-gw-retry-cap').message).toContain('needed one to answer 502 every time');
  const once = [x({ ...call, at: 0, status: 429 })];
  expect(verdictOf('gateway', once, 'client-gw-retry-cap').verdict).toBe('not applicable');
});
