/**
 * Findings, not assertions: the `expect` the checks use. Each matcher that does not hold throws an
 * AssertionViolation whose message says what the target did, in plain words ("GET /api/v1/stories/x: 404, where
 * 308 is required"), never a test framework's text ("expected 404 to be 308 // Object.is equality"). The harness
 * adds the requirement's words and the request that showed it (findingMessage).
 *
 * `what` is required: it names the thing judged (a status, a header, a member), so no finding is anonymous.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CatalogueEntry } from './spec.js';
import type { Exchange } from './http.js';

/** A broken requirement found by a check (by `expect`, `fail` or its own logic). */
export class AssertionViolation extends Error {
  override name = 'AssertionViolation';
}

const MAX_VALUE_CHARS = 160;

/** A value as a finding shows it: absent, a quoted string, a number, a short JSON. */
export function show(v: unknown): string {
  if (v === undefined) return 'absent';
  if (v === null) return 'null';
  if (typeof v === 'string') return v === '' ? 'empty' : clip(JSON.stringify(v));
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v instanceof RegExp) return String(v);
  if (v instanceof Error) return `${v.name}: ${clip(v.message)}`;
  if (typeof v === 'function') return `[${v.name || 'function'}]`;
  try {
    return clip(JSON.stringify(v));
  } catch {
    return String(v);
  }
}

function clip(s: string): string {
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s;
}

/**
 * Two values too long to show whole: where they part. Lists (or JSON texts of lists) by entry, other texts by
 * character, each side shown around the first difference.
 */
export function mismatch(actual: unknown, expected: unknown): string {
  const short = (v: unknown) => show(v).length <= MAX_VALUE_CHARS;
  if (short(actual) && short(expected)) return `${show(actual)}, where ${show(expected)} is required`;
  const asList = (v: unknown): unknown[] | undefined => {
    if (Array.isArray(v)) return v;
    if (typeof v !== 'string') return undefined;
    try {
      const parsed: unknown = JSON.parse(v);
      return Array.isArray(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  };
  const a = asList(actual);
  const b = asList(expected);
  if (a && b) {
    const i = a.findIndex((x, k) => k >= b.length || !isDeepStrictEqual(x, b[k]));
    const at = i === -1 ? a.length : i;
    const counts = a.length === b.length ? `${a.length} entries` : `${a.length} entries, where ${b.length} are required`;
    return `${counts}; the first difference is entry ${at}: ${show(a[at])}, where ${show(b[at])} is required`;
  }
  const sa = typeof actual === 'string' ? actual : (JSON.stringify(actual) ?? String(actual));
  const sb = typeof expected === 'string' ? expected : (JSON.stringify(expected) ?? String(expected));
  let i = 0;
  while (i < sa.length && i < sb.length && sa[i] === sb[i]) i++;
  const around = (s: string) => `${i > 30 ? '…' : ''}${s.slice(Math.max(0, i - 30), i + 60)}${s.length > i + 60 ? '…' : ''}`;
  return `differs from what is required at character ${i}: ${JSON.stringify(around(sa))}, where ${JSON.stringify(around(sb))} is required`;
}

function list(values: readonly unknown[]): string {
  return values.map(show).join(', ');
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', undefined: 'absent', integer: 'an integer' };

export interface Matchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeTruthy(): void;
  toBeFalsy(): void;
  toBeUndefined(): void;
  toBeDefined(): void;
  toBeTypeOf(type: 'string' | 'number' | 'boolean' | 'object' | 'function' | 'undefined' | 'bigint' | 'symbol'): void;
  /** `form` names the required form in words ("a JSON media type"); without it the pattern is shown. */
  toMatch(pattern: RegExp | string, form?: string): void;
  /** `actual` (a list or a string) holds `item`. */
  toContain(item: unknown): void;
  /** `actual` is one of the values the document allows. */
  toBeOneOf(allowed: readonly unknown[]): void;
  toBeGreaterThan(n: number): void;
  toBeGreaterThanOrEqual(n: number): void;
  toBeLessThan(n: number): void;
  toBeLessThanOrEqual(n: number): void;
  toHaveLength(n: number): void;
  toHaveProperty(key: string): void;
  toBeInstanceOf(type: abstract new (...args: never[]) => unknown): void;
  readonly not: Pick<Matchers, 'toBe' | 'toEqual' | 'toContain' | 'toBeOneOf' | 'toMatch'>;
}

/**
 * Judge `actual`, named by `what`. A matcher that does not hold throws an AssertionViolation stating what was
 * found and what the document requires.
 */
export function expect(actual: unknown, what: string): Matchers {
  const judge: Judge = (holds, found, where) => {
    if (holds) return;
    const err = new AssertionViolation(`${what}: ${found()}`);
    // The stack starts at the check's own line, not in this module.
    Error.captureStackTrace?.(err, where);
    throw err;
  };
  const m: Matchers = {
    toBe(expected) {
      if (typeof expected === 'boolean' && typeof actual === 'boolean') return judge(actual === expected, () => (expected ? 'no' : 'yes'), m.toBe);
      judge(Object.is(actual, expected), () => mismatch(actual, expected), m.toBe);
    },
    toEqual(expected) {
      judge(isDeepStrictEqual(actual, expected), () => mismatch(actual, expected), m.toEqual);
    },
    toBeTruthy() {
      judge(Boolean(actual), () => (actual === undefined ? 'absent' : actual === '' ? 'empty' : show(actual)), m.toBeTruthy);
    },
    toBeFalsy() {
      judge(!actual, () => `${show(actual)}, where none is allowed`, m.toBeFalsy);
    },
    toBeUndefined() {
      judge(actual === undefined, () => `${show(actual)}, where none is allowed`, m.toBeUndefined);
    },
    toBeDefined() {
      judge(actual !== undefined, () => 'absent', m.toBeDefined);
    },
    toBeTypeOf(type) {
      const t = typeOf(actual);
      judge(
        typeof actual === type,
        () => `${t === 'undefined' ? 'absent' : `${show(actual)} (${ARTICLE[t] ?? `a ${t}`})`}, where ${ARTICLE[type] ?? `a ${type}`} is required`,
        m.toBeTypeOf,
      );
    },
    toMatch(pattern, form) {
      const holds = typeof actual === 'string' && (typeof pattern === 'string' ? actual.includes(pattern) : pattern.test(actual));
      judge(holds, () => `${show(actual)}, where ${form ?? `the form ${show(pattern)}`} is required`, m.toMatch);
    },
    toContain(item) {
      const holds = Array.isArray(actual)
        ? actual.some((a) => Object.is(a, item))
        : typeof actual === 'string' && typeof item === 'string' && actual.includes(item);
      judge(holds, () => `${show(actual)}, without the required ${show(item)}`, m.toContain);
    },
    toBeOneOf(allowed) {
      judge(
        allowed.some((a) => Object.is(a, actual)),
        () => `${show(actual)}, where ${allowed.length === 1 ? show(allowed[0]) : `one of ${list(allowed)}`} is required`,
        m.toBeOneOf,
      );
    },
    toBeGreaterThan(n) {
      judge(num(actual) > n, () => `${show(actual)}, where more than ${n} is required`, m.toBeGreaterThan);
    },
    toBeGreaterThanOrEqual(n) {
      judge(num(actual) >= n, () => `${show(actual)}, where at least ${n} is required`, m.toBeGreaterThanOrEqual);
    },
    toBeLessThan(n) {
      judge(num(actual) < n, () => `${show(actual)}, where less than ${n} is required`, m.toBeLessThan);
    },
    toBeLessThanOrEqual(n) {
      judge(num(actual) <= n, () => `${show(actual)}, where at most ${n} is required`, m.toBeLessThanOrEqual);
    },
    toHaveLength(n) {
      const len = (actual as { length?: unknown } | null | undefined)?.length;
      judge(len === n, () => `${typeof len === 'number' ? `${len}: ${show(actual)}` : show(actual)}, where ${n} is required`, m.toHaveLength);
    },
    toHaveProperty(key) {
      const holds = typeof actual === 'object' && actual !== null && key in actual;
      judge(holds, () => `no member ${show(key)} in ${show(actual)}`, m.toHaveProperty);
    },
    toBeInstanceOf(type) {
      judge(actual instanceof type, () => `${show(actual)}, where ${type.name || 'another kind'} is required`, m.toBeInstanceOf);
    },
    not: negated(actual, judge),
  };
  return m;
}

/** A number, or NaN (which no bound holds for). */
const num = (n: unknown) => (typeof n === 'number' ? n : Number.NaN);

type Judge = (holds: boolean, found: () => string, where: (...args: never[]) => unknown) => void;

/** The negated matchers: `actual` must not be the value, hold the item, be one of the values, have the form. */
function negated(actual: unknown, judge: Judge): Matchers['not'] {
  const n: Matchers['not'] = {
    toBe(expected) {
      judge(!Object.is(actual, expected), () => `${show(actual)}, which is not allowed`, n.toBe);
    },
    toEqual(expected) {
      judge(!isDeepStrictEqual(actual, expected), () => `${show(actual)}, which is not allowed`, n.toEqual);
    },
    toContain(item) {
      const holds = Array.isArray(actual)
        ? !actual.some((a) => Object.is(a, item))
        : !(typeof actual === 'string' && typeof item === 'string' && actual.includes(item));
      judge(holds, () => `${show(actual)}, with ${show(item)}, which is not allowed`, n.toContain);
    },
    toBeOneOf(excluded) {
      judge(!excluded.some((a) => Object.is(a, actual)), () => `${show(actual)}, which is not allowed (not ${list(excluded)})`, n.toBeOneOf);
    },
    toMatch(pattern) {
      const matches = typeof actual === 'string' && (typeof pattern === 'string' ? actual.includes(pattern) : pattern.test(actual));
      judge(!matches, () => `${show(actual)}, which has the form ${show(pattern)} that is not allowed`, n.toMatch);
    },
  };
  return n;
}

/**
 * Test-framework wording a finding must never carry (src/findings.test.ts, the self-test's variant runs): chai's
 * "expected … to be …", vitest's "// Object.is equality", matcher names, diff headers.
 */
export const FRAMEWORK_WORDING =
  /\bexpected .{0,200}? to (?:be|equal|deeply|strictly|have|contain|include|match|satisfy|throw)\b|Object\.is|\/\/ ?(?:Object|deep|strict)|\bto(?:Be|Equal|Contain|Match|Have)[A-Z]?\w*\(|AssertionError|[-+] ?(?:Expected|Received)\b/;

/**
 * A message of vitest's or chai's assertion (from code that did not use this module's expect) in the shape of a
 * finding: "<what>: expected 404 to be 308 // Object.is equality" becomes "<what>: 404, where 308 is required".
 * The last line of defence: checks use this module's expect, and the self-test fails on any framework wording.
 */
export function translateFrameworkMessage(message: string): string {
  const first = message.split('\n')[0]!.replace(/\s*\/\/ .*$/, '');
  const t = /^(?:(.*?): )?expected (.+?) to be type of '?(\w+)'?$/.exec(first);
  if (t) return `${t[1] ? `${t[1]}: ` : ''}${t[2] === 'undefined' ? 'absent' : t[2]}, where ${ARTICLE[t[3]!] ?? `a ${t[3]}`} is required`;
  const m = /^(?:(.*?): )?expected (.+?) to (?:be|equal|deeply equal|strictly equal|be one of) (.+)$/.exec(first);
  if (m) return `${m[1] ? `${m[1]}: ` : ''}${m[2]}, where ${m[3]} is required`;
  const g = /^(?:(.*?): )?expected (.+?) to (not )?(.+)$/.exec(first);
  if (g) return `${g[1] ? `${g[1]}: ` : ''}${g[2]}, which does ${g[3] ? '' : 'not '}${g[4]!.replace(/^(?:be|have) /, 'meet: ')}`;
  return first;
}

const TELLING_REQUEST_HEADERS = ['if-none-match', 'authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'sec-websocket-protocol', 'content-type'];
/** The response headers that tell what the target did: shown in findings and kept with each failing request (src/harness.ts). */
export const TELLING_RESPONSE_HEADERS = [
  'content-type',
  'content-length',
  'location',
  'retry-after',
  'etag',
  'cache-control',
  'x-request-id',
  'www-authenticate',
  'allow',
  'sec-websocket-protocol',
];

/**
 * The exchange that showed a finding: of those whose method and path the finding names, the one whose status the
 * finding names first ("POST /v1/messages: 503, where 404 is required" is the 503, not a later 401 on the same path),
 * the last one on a tie; else the last one named; else the last one.
 */
export function showingExchange(finding: string, exchanges: readonly Exchange[]): Exchange | undefined {
  const named = [...exchanges].reverse().filter((ex) => {
    const u = new URL(ex.url);
    // Under a path prefix (https://host/feed) a finding names the documented path: any tail of the path, from a "/".
    const parts = u.pathname.split('/');
    const tails = parts.slice(1).map((_, i) => `/${parts.slice(i + 1).join('/')}`);
    return tails.some((p) => p !== '/' && finding.includes(`${ex.method} ${p}`)) || finding.includes(`${ex.method} ${u.href}`);
  });
  const statusAt = (ex: Exchange) => (ex.status === undefined ? -1 : finding.search(new RegExp(`\\b${ex.status}\\b`)));
  const byStatus = named.filter((ex) => statusAt(ex) >= 0).sort((a, b) => statusAt(a) - statusAt(b))[0];
  return byStatus ?? named[0] ?? exchanges[exchanges.length - 1];
}

/** "GET /api/v1/items?limit=0 (If-None-Match: "x") → 400 (content-type: application/problem+json)" */
export function describeExchange(ex: Exchange): string {
  const u = new URL(ex.url);
  const pick = (rec: Record<string, string> | undefined, names: string[]) =>
    Object.entries(rec ?? {})
      .filter(([k]) => names.includes(k.toLowerCase()))
      .map(([k, v]) => `${k}: ${clip(v)}`);
  const sent = pick(ex.requestHeaders, TELLING_REQUEST_HEADERS);
  const got = pick(ex.responseHeaders, TELLING_RESPONSE_HEADERS);
  const answer = ex.status !== undefined ? String(ex.status) : `no answer (${ex.error ?? 'no response'})`;
  const body = ex.requestBody !== undefined ? ` with a ${ex.requestBody.length}-character body` : '';
  return `${ex.method} ${u.pathname}${u.search}${sent.length ? ` (${sent.join('; ')})` : ''}${body} → ${answer}${got.length ? ` (${got.join('; ')})` : ''}`;
}

/**
 * The message of a check that did not pass, in three parts: what the target did (the finding), what the document
 * requires (the requirements' words) and the request that showed it.
 */
export function findingMessage(finding: string, requirements: readonly CatalogueEntry[], exchanges: readonly Exchange[]): string {
  const required = requirements.map((r) => `${r.summary} (${r.id}, ${r.level})`).join('; ');
  const ex = showingExchange(finding, exchanges);
  const request = ex ? describeExchange(ex) : 'none of its own: it judged the requests the run had already made';
  return `${finding}\nrequired: ${required}\nrequest: ${request}`;
}
