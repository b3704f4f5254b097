import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect as vexpect, test } from 'vitest';
import { AssertionViolation, describeExchange, expect, findingMessage, FRAMEWORK_WORDING, translateFrameworkMessage } from './findings.js';
import { requirement } from './spec.js';
import type { Exchange } from './http.js';

/** The message a failing matcher of src/findings.ts throws. */
function finding(f: () => void): string {
  try {
    f();
  } catch (e) {
    vexpect(e).toBeInstanceOf(AssertionViolation);
    return (e as Error).message;
  }
  throw new Error('the matcher held');
}

/** The message vitest's own expect throws for the same judgement. */
function vitestMessage(f: () => void): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the matcher held');
}

describe('findings: each matcher says what the target did and what is required, in plain words', () => {
  const cases: [string, () => void, string][] = [
    ['toBe', () => expect(404, 'GET /api/v1/stories/x').toBe(308), 'GET /api/v1/stories/x: 404, where 308 is required'],
    ['toBe on a claim', () => expect(false, 'a realtime session opened (the handshake: 503)').toBe(true), 'a realtime session opened (the handshake: 503): no'],
    ['toBe(false) on a claim', () => expect(true, 'a session opened with ?key=').toBe(false), 'a session opened with ?key=: yes'],
    ['toEqual', () => expect([2, 1], 'ranks').toEqual([1, 2]), 'ranks: [2,1], where [1,2] is required'],
    ['toBeTruthy on a missing header', () => expect(undefined, '304 Cache-Control').toBeTruthy(), '304 Cache-Control: absent'],
    ['toBeTypeOf on a missing header', () => expect(undefined, '304 ETag header').toBeTypeOf('string'), '304 ETag header: absent, where a string is required'],
    ['toBeTypeOf on another type', () => expect(3, 'links.story').toBeTypeOf('string'), 'links.story: 3 (a number), where a string is required'],
    ['toMatch', () => expect('1.5', 'Retry-After').toMatch(/^\d+$/), 'Retry-After: "1.5", where the form /^\\d+$/ is required'],
    [
      'toMatch with the form in words',
      () => expect('text/html', 'content type').toMatch(/json/, 'a JSON media type'),
      'content type: "text/html", where a JSON media type is required',
    ],
    ['toContain', () => expect(['a'], 'the events').toContain('b'), 'the events: ["a"], without the required "b"'],
    [
      'toBeOneOf',
      () => expect(200, 'the handshake with an expired key').toBeOneOf([401, 403]),
      'the handshake with an expired key: 200, where one of 401, 403 is required',
    ],
    [
      'not.toBeOneOf',
      () => expect(401, 'GET /api/v1/items without credentials').not.toBeOneOf([401, 403]),
      'GET /api/v1/items without credentials: 401, which is not allowed (not 401, 403)',
    ],
    ['toBeGreaterThan', () => expect(0, 'entries').toBeGreaterThan(0), 'entries: 0, where more than 0 is required'],
    ['toBeLessThanOrEqual', () => expect(4, 'items returned for limit=3').toBeLessThanOrEqual(3), 'items returned for limit=3: 4, where at most 3 is required'],
    ['toBeUndefined', () => expect('Bearer', 'no authentication challenge').toBeUndefined(), 'no authentication challenge: "Bearer", where none is allowed'],
    ['toHaveLength', () => expect(['a', 'b'], 'cursor values across pages').toHaveLength(1), 'cursor values across pages: 2: ["a","b"], where 1 is required'],
    ['toHaveProperty', () => expect({}, 'an item').toHaveProperty('summary'), 'an item: no member "summary" in {}'],
    [
      'toBeInstanceOf',
      () => expect(undefined, 'the error the call raised').toBeInstanceOf(TypeError),
      'the error the call raised: absent, where TypeError is required',
    ],
  ];
  for (const [name, f, message] of cases)
    test(name, () => {
      const m = finding(f);
      vexpect(m).toBe(message);
      vexpect(m).not.toMatch(FRAMEWORK_WORDING);
    });

  test('two long values: where they part, not two clipped dumps', () => {
    const listed = (ids: string[]) => JSON.stringify(ids.map((id) => ({ id, title: `a long title for ${id} `.repeat(4) })));
    const m = finding(() => expect(listed(['a', 'b', 'x']), 'window=7d lists what the request without it lists').toBe(listed(['a', 'b', 'c', 'd'])));
    vexpect(m).toMatch(/^window=7d lists what the request without it lists: 3 entries, where 4 are required; the first difference is entry 2: \{"id":"x"/);
    const text = finding(() => expect(`${'same '.repeat(40)}mine`, 'the report').toBe(`${'same '.repeat(40)}theirs`));
    vexpect(text).toBe(
      'the report: differs from what is required at character 200: "…same same same same same same mine", where "…same same same same same same theirs" is required',
    );
  });

  test('a matcher that holds throws nothing', () => {
    expect(308, 'status').toBe(308);
    expect(403, 'status').toBeOneOf([401, 403]);
    expect('W/"a"', 'ETag').toMatch(/"/);
    expect(200, 'status').not.toBeOneOf([401, 403]);
  });
});

describe("framework wording: recognised, and put in a finding's shape when it slips through", () => {
  const framework = [
    vitestMessage(() => vexpect(404, 'feed-story-merged-308: GET /api/v1/stories/x').toBe(308)),
    vitestMessage(() => vexpect(undefined, '304 ETag header is present').toBeTypeOf('string')),
    vitestMessage(() => vexpect(undefined, '304 Cache-Control').toBeTruthy()),
    vitestMessage(() => vexpect(false, 'handshake: 503').toBe(true)),
    vitestMessage(() => vexpect([1, 2], 'ranks').toEqual([1, 3])),
    vitestMessage(() => vexpect([401, 403], 'the handshake').toContain(200)),
  ];
  test("the issue's examples, as vitest words them, are recognised as framework wording", () => {
    for (const m of framework) vexpect(m, m).toMatch(FRAMEWORK_WORDING);
  });
  test('translated, none of them is', () => {
    for (const m of framework) vexpect(translateFrameworkMessage(m), m).not.toMatch(FRAMEWORK_WORDING);
    vexpect(translateFrameworkMessage(framework[0]!)).toBe('feed-story-merged-308: GET /api/v1/stories/x: 404, where 308 is required');
    vexpect(translateFrameworkMessage(framework[1]!)).toBe('304 ETag header is present: absent, where a string is required');
  });
  test('findings in plain words are not taken for framework wording', () => {
    for (const m of [
      'the ETag changed on every one of 5 successive requests',
      'GET /api/v1/items: 404, where 200 is required',
      'expected by the document: 308',
    ])
      vexpect(m).not.toMatch(FRAMEWORK_WORDING);
  });
});

describe('the message of a check that did not pass: the finding, the requirement in its words, the request', () => {
  const ex: Exchange = {
    seq: 1,
    method: 'GET',
    url: 'http://127.0.0.1:1/api/v1/stories/x?fields=all',
    requestHeaders: { 'if-none-match': '"abc"', 'user-agent': 'suite' },
    status: 404,
    responseHeaders: { 'content-type': 'application/problem+json', date: 'x' },
    durationMs: 1,
    startedAt: '',
    attempt: 0,
  };
  test('three lines, the request with its telling headers only', () => {
    const req = requirement('feed-story-merged-308');
    const m = findingMessage('GET /api/v1/stories/x: 404, where 308 is required', [req], [ex]);
    vexpect(m.split('\n')).toEqual([
      'GET /api/v1/stories/x: 404, where 308 is required',
      `required: ${req.summary} (feed-story-merged-308, ${req.level})`,
      'request: GET /api/v1/stories/x?fields=all (if-none-match: "abc") → 404 (content-type: application/problem+json)',
    ]);
  });
  test('the request the finding names is the one shown, not merely the last', () => {
    const other: Exchange = { ...ex, seq: 2, url: 'http://127.0.0.1:1/api/v1/items', status: 200, responseHeaders: {} };
    vexpect(findingMessage('GET /api/v1/stories/x: 404, where 308 is required', [requirement('feed-story-merged-308')], [ex, other])).toContain(
      'request: GET /api/v1/stories/x',
    );
    vexpect(describeExchange({ ...other, status: undefined, error: 'timeout' })).toBe('GET /api/v1/items (if-none-match: "abc") → no answer (timeout)');
  });
  test('of two requests on the path the finding names, the one with the status it names is shown, not merely the later', () => {
    const refused: Exchange = { ...ex, method: 'POST', url: 'http://127.0.0.1:1/v1/messages', status: 503, responseHeaders: {} };
    const later: Exchange = { ...refused, seq: 2, status: 401 };
    const m = findingMessage('POST /v1/messages: 503, where 404 is required', [requirement('feed-story-merged-308')], [refused, later]);
    vexpect(m).toContain('request: POST /v1/messages (if-none-match: "abc") → 503');
    // A finding naming no status of those requests shows the last one it names.
    vexpect(findingMessage('POST /v1/messages: no error body', [requirement('feed-story-merged-308')], [refused, later])).toContain('→ 401');
  });
  test('under a path prefix, the finding names the documented path and the request is still the one shown', () => {
    const prefixed: Exchange = { ...ex, url: 'https://host/feed/api/v1/stories/x' };
    const other: Exchange = { ...ex, seq: 2, url: 'https://host/feed/api/v1/items', status: 200, responseHeaders: {} };
    vexpect(findingMessage('GET /api/v1/stories/x: 404, where 308 is required', [requirement('feed-story-merged-308')], [prefixed, other])).toContain(
      'request: GET /feed/api/v1/stories/x',
    );
  });
});

test("no suite module judges with the test framework's expect: checks use src/findings.ts (through the harness)", () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const offenders: string[] = [];
  for (const dir of ['suites/feed', 'suites/gateway', 'src'])
    for (const f of readdirSync(path.join(root, dir))) {
      if (!f.endsWith('.ts') || (dir === 'src' && f.endsWith('.test.ts'))) continue;
      const text = readFileSync(path.join(root, dir, f), 'utf8');
      if (/import\s*\{[^}]*\bexpect\b[^}]*\}\s*from\s*'vitest'/.test(text)) offenders.push(`${dir}/${f}`);
    }
  vexpect(offenders).toEqual([]);
});
