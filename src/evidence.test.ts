import { describe, expect, test } from 'vitest';
import { curlFor, toAllureExchange } from './evidence.js';
import type { Exchange } from './http.js';

const ex: Exchange = {
  seq: 1,
  method: 'POST',
  url: 'http://127.0.0.1:1/v1beta/models/m:generateContent?key=$GATEWAY_API_KEY',
  requestHeaders: { 'content-type': 'application/json', authorization: "Bearer $GATEWAY_API_KEY it's" },
  requestBody: '{"contents":[]}',
  status: 400,
  responseHeaders: { 'content-type': 'application/json' },
  responseBody: '{}',
  durationMs: 3,
  startedAt: '2026-11-21T00:00:00.000Z',
  attempt: 0,
};

describe('evidence', () => {
  test('curl replays the request with secrets as environment references, shell-quoted', () => {
    const curl = curlFor(ex);
    expect(curl).toBe(
      `curl -i -X POST -H 'content-type: application/json' -H 'authorization: Bearer '"$GATEWAY_API_KEY"' it'\\''s' --data-raw '{"contents":[]}' 'http://127.0.0.1:1/v1beta/models/m:generateContent?key='"$GATEWAY_API_KEY"`,
    );
  });

  test('the Allure HTTP exchange keeps the redacted query value', () => {
    const a = toAllureExchange(ex);
    expect(a.request.query).toEqual([{ name: 'key', value: '$GATEWAY_API_KEY' }]);
    expect(a.response?.status).toBe(400);
    expect(a.stop! - a.start!).toBe(3);
  });
});
