/**
 * Paths under a base URL: a deployment served under a path prefix (https://host/feed behind a proxy's
 * `location /feed/`) has every documented path under that prefix, and a recorded URL gives its documented path back.
 */
import { describe, expect, test } from 'vitest';
import { pathUnderBase, underBase } from './base-url.js';

describe('underBase: a documented path under the base URL', () => {
  test.each([
    ['https://host', '/api/v1/items', 'https://host/api/v1/items'],
    ['https://host/feed', '/api/v1/items', 'https://host/feed/api/v1/items'],
    ['https://host/feed/', '/api/v1/items', 'https://host/feed/api/v1/items'],
    ['https://host/a/b', 'v1/models', 'https://host/a/b/v1/models'],
    ['http://127.0.0.1:8080/llm', '/v1/realtime', 'http://127.0.0.1:8080/llm/v1/realtime'],
  ])('%s + %s = %s', (base, path, url) => expect(underBase(base, path)).toBe(url));
});

describe('pathUnderBase: the documented path of a recorded URL', () => {
  test.each([
    ['https://host', 'https://host/api/v1/items?limit=1', '/api/v1/items'],
    ['https://host/feed', 'https://host/feed/api/v1/items?limit=1', '/api/v1/items'],
    ['https://host/feed/', 'https://host/feed/api/v1/stories/x', '/api/v1/stories/x'],
    ['https://host/feed', 'https://host/feed', '/'],
    ['https://host:443/llm', 'wss://host/llm/v1/realtime?model=m', '/v1/realtime'],
    ['http://127.0.0.1:8080/llm', 'ws://127.0.0.1:8080/llm/v1/realtime', '/v1/realtime'],
  ])('under %s, %s is %s', (base, url, path) => expect(pathUnderBase(base, url)).toBe(path));

  test.each([
    ['outside the prefix', 'https://host/feed', 'https://host/api/v1/items'],
    ['a longer segment is not the prefix', 'https://host/feed', 'https://host/feedback/api/v1/items'],
    ['another host', 'https://host/feed', 'https://other/feed/api/v1/items'],
    ['another port', 'https://host/feed', 'https://host:8443/feed/api/v1/items'],
    ['another scheme', 'https://host/feed', 'http://host/feed/api/v1/items'],
    ['not a URL', 'https://host/feed', '/feed/api/v1/items'],
  ])('%s: undefined', (_what, base, url) => expect(pathUnderBase(base, url)).toBeUndefined());
});

describe('a Location resolved against the request URL (RFC 9110 §10.2.2) stays under the prefix in every form', () => {
  const request = 'https://host/feed/api/v1/stories/st-merged';
  test.each([
    ['an absolute URL', 'https://host/feed/api/v1/stories/st-live'],
    ['an absolute path', '/feed/api/v1/stories/st-live'],
    ['a relative path', 'st-live'],
    ['a relative path with dot segments', '../stories/st-live'],
    ['a relative path with ./', './st-live'],
  ])('%s (%s)', (_form, location) => {
    const target = new URL(location, request);
    expect(target.href).toBe('https://host/feed/api/v1/stories/st-live');
    expect(pathUnderBase('https://host/feed', target.href)).toBe('/api/v1/stories/st-live');
  });

  test('an absolute path without the prefix resolves outside the feed', () => {
    expect(pathUnderBase('https://host/feed', new URL('/api/v1/stories/st-live', request).href)).toBeUndefined();
  });
});
