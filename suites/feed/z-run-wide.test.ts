/**
 * content-feed-service.md — Errors; Endpoints: checks over every exchange the run made with the feed, run after
 * all other feed checks (suites/all.conformance.ts loads this module last); and the run's first cursor, reused at
 * its end.
 */
import { describe } from 'vitest';
import { AssertionViolation, check, expect, PreconditionFailed } from '../../src/harness.js';
import { runExchanges } from '../../src/context.js';
import { feedGet, firstCursor } from '../../src/feed.js';

const feedExchanges = () => runExchanges('feed');

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
      const errors = feedExchanges().filter((x) => x.status! >= 400 && x.method !== 'HEAD');
      if (errors.length === 0) return t.notApplicable('the run saw no error response');
      t.observe('error responses seen', String(errors.length));
      const bad = errors
        .map((x) => ({ x, type: (x.responseHeaders?.['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() }))
        .filter(({ type }) => type !== 'application/problem+json');
      if (bad.length)
        t.violation(
          `${bad.length} of ${errors.length} error responses were not problem+json, e.g. ${bad
            .slice(0, 3)
            .map(({ x, type }) => `${x.method} ${x.url} answered ${x.status} as "${type || '(no content type)'}"`)
            .join('; ')}`,
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
      const errors = feedExchanges().filter((x) => x.status! >= 400 && x.method !== 'HEAD');
      if (errors.length === 0) return t.notApplicable('the run saw no error response');
      t.observe('error responses seen', String(errors.length));
      const bad = errors.filter((x) => !x.responseHeaders?.['x-request-id']);
      if (bad.length)
        t.violation(
          `${bad.length} of ${errors.length} error responses lacked X-Request-Id, e.g. ${bad
            .slice(0, 3)
            .map((x) => `${x.method} ${x.url} (${x.status})`)
            .join('; ')}`,
        );
    },
  );
});
