/**
 * content-feed-service.md — Errors; Endpoints: checks over every exchange the run made with the feed, run after
 * all other feed checks (suites/all.conformance.ts loads this module last); and the run's first cursor, reused at
 * its end.
 */
import { describe } from 'vitest';
import { AssertionViolation, check, expect, PreconditionFailed, type CheckTools } from '../../src/harness.js';
import type { Exchange } from '../../src/http.js';
import { operationPath, runExchanges } from '../../src/context.js';
import { feedGet, firstCursor, instant, profile } from '../../src/feed.js';
import { sMaxAge } from '../../src/caching.js';
import { field } from '../../src/spec.js';

/** The run's exchanges with the feed: under its base URL (a redirect followed out of a path prefix reached something else). */
const feedExchanges = () => runExchanges('feed').filter((x) => operationPath('feed', x.url) !== undefined);
/** The run's error responses (a HEAD has no body to judge). */
const errorExchanges = () => feedExchanges().filter((x) => x.status! >= 400 && x.method !== 'HEAD');
const mediaType = (x: Exchange) => (x.responseHeaders?.['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** Fail with how many of the `seen` responses broke the rule, and the first three of them. */
function violations<T>(t: CheckTools, bad: T[], seen: number, what: string, show: (b: T) => string): void {
  if (bad.length) t.violation(`${bad.length} of ${seen} ${what}, e.g. ${bad.slice(0, 3).map(show).join('; ')}`);
}

/**
 * The least age of the cursor reused below: one reused a moment after it was issued says nothing about a timer. The
 * cursor is the run's first (taken by the items checks at its start) and reused here, after every other feed check,
 * as old as the run allows: against a remote deployment that is many seconds, and nothing waits; against one on
 * loopback the run is shorter than this, and the check waits the rest.
 */
const CURSOR_REUSE_AGE_MS = 1500;

describe.sequential('the cursor lifetime, at the end of the run', () => {
  check(
    {
      id: 'feed-items-cursor-still-valid',
      title: 'a cursor taken earlier in the run is still accepted: it does not expire on a timer',
      requirements: ['feed-items-cursor-no-timer'],
    },
    async (t) => {
      // Whether the listing answers 200 at all, and gives a cursor, is other checks' requirement.
      const first = await firstCursor().catch((e: unknown) => {
        if (e instanceof AssertionViolation) throw new PreconditionFailed(`setup error (precondition): ${e.message} (reported by the items checks)`);
        throw e;
      });
      const { cursor, at, res } = first;
      t.cite(res);
      const young = CURSOR_REUSE_AGE_MS - (Date.now() - at);
      if (young > 0) await new Promise((r) => setTimeout(r, young));
      const again = await feedGet('/api/v1/items', { query: { limit: 5, cursor } });
      t.observe('cursor age when reused', `${((Date.now() - at) / 1000).toFixed(1)} s`);
      expect(again.status, 'the same query with a cursor from earlier in the run').toBe(200);
    },
  );
});

// After every other feed check: these read every response the run saw.
describe.sequential('every response the run saw', () => {
  check(
    {
      id: 'feed-retry-after-on-429-503',
      title: 'every 429 and 503 of the run carried Retry-After in integer seconds, at least 1',
      requirements: ['feed-retry-after'],
    },
    async (t) => {
      const seen = feedExchanges().filter((x) => x.status === 429 || x.status === 503);
      if (seen.length === 0) return t.notApplicable('the target sent no 429 or 503 during this run');
      t.observe('429/503 responses seen', String(seen.length));
      for (const x of seen) {
        const ra = x.responseHeaders?.['retry-after'];
        if (ra === undefined || !/^[1-9]\d*$/.test(ra.trim()))
          t.violation(`${x.method} ${x.url} answered ${x.status} with Retry-After ${JSON.stringify(ra ?? '(none)')}`);
      }
    },
  );

  check(
    {
      id: 'feed-every-error-is-problem',
      title: 'every 4xx and 5xx of the run was application/problem+json',
      requirements: ['feed-problem-json'],
    },
    async (t) => {
      const errors = errorExchanges();
      if (errors.length === 0) return t.notApplicable('the run saw no error response');
      t.observe('error responses seen', String(errors.length));
      const bad = errors.filter((x) => mediaType(x) !== 'application/problem+json');
      violations(
        t,
        bad,
        errors.length,
        'error responses were not problem+json',
        (x) => `${x.method} ${x.url} answered ${x.status} as "${mediaType(x) || '(no content type)'}"`,
      );
    },
  );

  check(
    {
      id: 'feed-every-error-has-request-id',
      title: 'every 4xx and 5xx of the run carried X-Request-Id',
      requirements: ['feed-problem-request-id'],
    },
    async (t) => {
      const errors = errorExchanges();
      if (errors.length === 0) return t.notApplicable('the run saw no error response');
      t.observe('error responses seen', String(errors.length));
      const bad = errors.filter((x) => !x.responseHeaders?.['x-request-id']);
      violations(t, bad, errors.length, 'error responses lacked X-Request-Id', (x) => `${x.method} ${x.url} (${x.status})`);
    },
  );
});

// The per-operation checks read one 200 each; this reads every 200 of the run (continuation pages, every parameter
// value, every story and date the run asked for).
describe.sequential('every 200 the run saw', () => {
  check(
    {
      id: 'feed-every-200-etag-cache-control',
      title: 'every 200 of the run, continuation pages and every parameter value included, carried ETag and Cache-Control',
      requirements: ['feed-200-etag-cache-control'],
    },
    async (t) => {
      // The documented operations: /api/v1/... under the base URL, whatever path prefix the feed is served under.
      const ok = feedExchanges().filter((x) => x.status === 200 && x.method === 'GET' && operationPath('feed', x.url)?.startsWith('/api/v1/'));
      if (ok.length === 0) return t.notApplicable('the run saw no 200 from an operation');
      t.observe('200 responses seen', String(ok.length));
      const bad = ok.filter((x) => !x.responseHeaders?.['etag'] || !x.responseHeaders?.['cache-control']);
      const has = (x: Exchange, h: string) => (x.responseHeaders?.[h] ? 'present' : 'absent');
      violations(
        t,
        bad,
        ok.length,
        '200 responses lacked ETag or Cache-Control',
        (x) => `${x.method} ${x.url} (ETag ${has(x, 'etag')}, Cache-Control ${has(x, 'cache-control')})`,
      );
    },
  );
});

// RFC 9457, which application/problem+json names: the members the document leaves out ("Problem body fields … not
// shown") still have the types the media type gives them, wherever a deployment sends them.
describe.sequential('every problem body the run saw', () => {
  check(
    {
      id: 'feed-every-problem-members-typed',
      title: 'every problem body is a JSON object whose status, when present, is the response status, and whose type, title and detail are strings',
      requirements: ['feed-problem-json'],
    },
    async (t) => {
      const problems = errorExchanges().filter(
        // A body read whole: not cut by the recorder, not broken off by the connection (the exchange's error).
        (x) => !x.truncated && !x.error && x.responseBody !== undefined && mediaType(x) === 'application/problem+json',
      );
      // An error that is not problem+json at all is feed-every-error-is-problem's finding.
      if (problems.length === 0) return t.notApplicable('the run saw no problem+json response');
      t.observe('problem bodies read', String(problems.length));
      const wrong: string[] = [];
      for (const x of problems) {
        let body: unknown;
        try {
          body = JSON.parse(x.responseBody ?? '');
        } catch {
          body = undefined;
        }
        const where = `${x.method} ${x.url} (${x.status})`;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          // A body recorded as it came off the wire (the raw-socket probes: chunked or compressed bytes) is not read here.
          const framed = x.responseHeaders?.['transfer-encoding'] !== undefined || x.responseHeaders?.['content-encoding'] !== undefined;
          if (!framed) wrong.push(`${where}: the body is not a JSON object`);
          continue;
        }
        const p = body as Record<string, unknown>;
        if ('status' in p && p.status !== x.status) wrong.push(`${where}: status member ${JSON.stringify(p.status)}`);
        for (const m of ['type', 'title', 'detail', 'instance'])
          if (m in p && typeof p[m] !== 'string') wrong.push(`${where}: ${m} member ${JSON.stringify(p[m])}, not a string`);
      }
      violations(t, wrong, problems.length, "problem bodies break RFC 9457's member types", (w) => w);
    },
  );
});

// ---------------------------------------------------------------- every place the run reached
// The rules of every response, read on every exchange of the run: continuation pages, search (q) pages, each
// parameter value, HEAD, each 304, not only the one request per operation the per-operation checks make.

/** The run's answers from a documented operation (/api/v1/...), GET or HEAD. */
const operationExchanges = () =>
  feedExchanges().filter((x) => (x.method === 'GET' || x.method === 'HEAD') && operationPath('feed', x.url)?.startsWith('/api/v1/') && !x.error);
const where = (x: Exchange) => `${x.method} ${operationPath('feed', x.url) ?? x.url}${new URL(x.url).search} (${x.status})`;
/**
 * A body recorded as it came off the wire (the raw-socket reads, on a connection of their own: `Connection: close`),
 * chunked or compressed: not the representation, so not judged here.
 */
const framedOnWire = (x: Exchange) =>
  x.requestHeaders['connection'] === 'close' &&
  (x.responseHeaders?.['transfer-encoding'] !== undefined || x.responseHeaders?.['content-encoding'] !== undefined);
const parsed = (x: Exchange): unknown => {
  try {
    return JSON.parse(x.responseBody ?? '');
  } catch {
    return undefined;
  }
};

describe.sequential('every 200 and 304 the run saw', () => {
  check(
    {
      id: 'feed-every-response-s-maxage',
      title: 'every 200 and 304 of the run (continuation and search pages, each parameter value, HEAD) gave s-maxage in its Cache-Control',
      requirements: ['feed-cache-control-s-maxage'],
    },
    async (t) => {
      // A missing Cache-Control is the ETag and Cache-Control checks' finding; here, the s-maxage of those present.
      const seen = operationExchanges().filter((x) => (x.status === 200 || x.status === 304) && x.responseHeaders?.['cache-control']);
      if (seen.length === 0) return t.notApplicable('the run saw no 200 or 304 with Cache-Control from an operation');
      t.observe('200 and 304 responses seen', String(seen.length));
      const bad = seen.filter((x) => sMaxAge(x.responseHeaders!['cache-control']) === undefined);
      violations(t, bad, seen.length, 'responses gave no s-maxage in seconds', (x) => `${where(x)}: Cache-Control "${x.responseHeaders!['cache-control']}"`);
    },
  );

  check(
    {
      id: 'feed-every-304-etag-cache-control',
      title: 'every 304 of the run (GET and HEAD, every page and parameter value) carried ETag and Cache-Control',
      requirements: ['feed-304-headers-empty-body'],
    },
    async (t) => {
      const seen = operationExchanges().filter((x) => x.status === 304);
      if (seen.length === 0) return t.notApplicable('the run saw no 304');
      t.observe('304 responses seen', String(seen.length));
      const bad = seen.filter((x) => !x.responseHeaders?.['etag'] || !x.responseHeaders?.['cache-control']);
      const has = (x: Exchange, h: string) => (x.responseHeaders?.[h] ? 'present' : 'absent');
      violations(
        t,
        bad,
        seen.length,
        '304 responses lacked ETag or Cache-Control',
        (x) => `${where(x)} (ETag ${has(x, 'etag')}, Cache-Control ${has(x, 'cache-control')})`,
      );
    },
  );

  check(
    {
      id: 'feed-every-head-etag-cache-control',
      title: 'every HEAD answered 200 carried ETag and Cache-Control',
      requirements: ['feed-200-etag-cache-control'],
    },
    async (t) => {
      const seen = operationExchanges().filter((x) => x.method === 'HEAD' && x.status === 200);
      if (seen.length === 0) return t.notApplicable('the run saw no HEAD answered 200');
      t.observe('HEAD 200 responses seen', String(seen.length));
      const bad = seen.filter((x) => !x.responseHeaders?.['etag'] || !x.responseHeaders?.['cache-control']);
      violations(t, bad, seen.length, 'HEAD 200 responses lacked ETag or Cache-Control', where);
    },
  );

  check(
    {
      id: 'feed-every-200-json',
      title: 'every 200 body of the run (continuation and search pages, each parameter value, every id and date) was JSON',
      requirements: ['feed-success-json'],
    },
    async (t) => {
      const seen = operationExchanges().filter(
        (x) => x.method === 'GET' && x.status === 200 && !x.truncated && x.responseBody !== undefined && !framedOnWire(x),
      );
      if (seen.length === 0) return t.notApplicable('the run saw no 200 body from an operation');
      t.observe('200 bodies read', String(seen.length));
      const bad = seen.filter((x) => !/^application\/([\w.-]+\+)?json$/.test(mediaType(x)) || parsed(x) === undefined);
      violations(
        t,
        bad,
        seen.length,
        '200 bodies were not JSON',
        (x) => `${where(x)} as "${mediaType(x)}": ${JSON.stringify((x.responseBody ?? '').slice(0, 40))}`,
      );
    },
  );
});

/**
 * The item records of every 200 the run read: items pages, snapshot pages (an item with its summary is one of the
 * default fields: under `minimal` both summary and the link go), and a story's coverage timeline.
 */
function runItems(): { items: { x: Exchange; item: Record<string, unknown>; full: boolean }[]; pages: number } {
  const p = profile();
  const lists: [string, (x: Exchange, body: unknown) => unknown][] = [
    ['/api/v1/items', (_x, b) => field(b, p.items.list!)],
    ['/api/v1/selected/snapshot', (_x, b) => field(b, p.snapshot.list!)],
    ['/api/v1/stories/', (_x, b) => field(field(b, p.story.root!), p.story.timeline!)],
  ];
  const out: { x: Exchange; item: Record<string, unknown>; full: boolean }[] = [];
  let pages = 0;
  for (const x of operationExchanges().filter((e) => e.method === 'GET' && e.status === 200 && !e.truncated && !framedOnWire(e))) {
    const path = operationPath('feed', x.url)!;
    const at = lists.find(([prefix]) => (prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix));
    const list = at ? at[1](x, parsed(x)) : undefined;
    if (!at || !Array.isArray(list)) continue;
    pages++;
    const snapshot = at[0] === '/api/v1/selected/snapshot';
    for (const item of list)
      if (typeof item === 'object' && item !== null) out.push({ x, item: item as Record<string, unknown>, full: !snapshot || 'summary' in item });
  }
  return { items: out, pages };
}

describe.sequential('every item the run saw', () => {
  check(
    {
      id: 'feed-every-item-original-link',
      title: 'every item of every page the run read (continuation, search, each parameter value, a story timeline) links its original article',
      requirements: ['feed-item-original-link'],
    },
    async (t) => {
      const { items, pages } = runItems();
      const full = items.filter((i) => i.full);
      if (full.length === 0) return t.notApplicable('the run read no item outside a fields=minimal snapshot page');
      t.observe('items read', `${full.length} on ${pages} pages`);
      const bad = full.filter(({ item }) => {
        const link = field(item, 'links.original');
        return typeof link !== 'string' || !URL.canParse(link);
      });
      violations(
        t,
        bad,
        full.length,
        'items had no original-article URL in links.original',
        ({ x, item }) => `${where(x)}: item ${String(item[profile().items.id!] ?? '?')}`,
      );
    },
  );

  check(
    {
      id: 'feed-every-item-timestamps',
      title: 'every item of every items page the run read (continuation, search, each parameter value) carried publishedAt and discoveredAt',
      requirements: ['feed-item-timestamps'],
    },
    async (t) => {
      const items = runItems().items.filter(({ x }) => operationPath('feed', x.url) === '/api/v1/items');
      if (items.length === 0) return t.notApplicable('the run read no item from /api/v1/items');
      t.observe('items read', String(items.length));
      const bad = items.filter(({ item }) => !('publishedAt' in item) || !('discoveredAt' in item) || instant(item.discoveredAt) === undefined);
      violations(
        t,
        bad,
        items.length,
        'items lacked publishedAt or discoveredAt',
        ({ x, item }) => `${where(x)}: item ${String(item[profile().items.id!] ?? '?')}`,
      );
    },
  );
});

describe.sequential('X-Request-Id identifies each response', () => {
  check(
    {
      id: 'feed-request-ids-distinct',
      title: 'the error responses of the run do not all carry one X-Request-Id: it correlates each response, so it differs between them',
      requirements: ['feed-problem-request-id'],
    },
    async (t) => {
      // The feed's answers only: a 429 or 503 is the retry rules' transient refusal, and a run that meets nothing
      // else met an outage (target unavailable), never a finding; a storm of them under one id says nothing here.
      const ids = errorExchanges()
        .filter((x) => x.status !== 429 && x.status !== 503)
        .map((x) => x.responseHeaders?.['x-request-id'])
        .filter((v): v is string => !!v);
      // A cache in front may replay one stored error with its id; three or more distinct requests all under one id is no correlation.
      if (ids.length < 3) return t.notApplicable(`the run saw ${ids.length} error response(s) other than 429/503 with X-Request-Id, fewer than 3`);
      const distinct = new Set(ids).size;
      t.observe('X-Request-Id values', `${distinct} distinct of ${ids.length}`);
      if (distinct === 1)
        t.violation(`all ${ids.length} error responses of the run carried the same X-Request-Id ${JSON.stringify(ids[0])}: it identifies no one request`);
    },
  );
});
