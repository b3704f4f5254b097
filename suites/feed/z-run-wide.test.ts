/**
 * content-feed-service.md — Errors; Endpoints: checks over every exchange the run made with the feed, run after
 * all other feed checks (suites/all.conformance.ts loads this module last).
 */
import { describe } from 'vitest';
import { check } from '../../src/harness.js';
import { runExchanges } from '../../src/context.js';

const feedExchanges = () => runExchanges('feed');

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
