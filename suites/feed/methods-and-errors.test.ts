/**
 * content-feed-service.md — What the service does (GET only, anonymous, JSON bodies); Authentication; Errors.
 */
import { describe } from 'vitest';
import { check, expect, jsonBody, PreconditionFailed } from '../../src/harness.js';
import { FEED_OPERATIONS, MAY_BE_ABSENT, expectProblem, feedGet, operationProbe, type FeedOperation } from '../../src/feed.js';

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** The plain GET of each operation's shared probe: it carries no credential of any kind. */
const plainGet = async (op: FeedOperation) => ({ res: (await operationProbe(op)).first });

describe('every operation is a GET, open to anyone, answering JSON', () => {
  for (const op of FEED_OPERATIONS) {
    const name = op.operationId;
    check({ id: `feed-anonymous-${kebab(name)}`, title: `${name} answers without any credential`, requirements: ['feed-anonymous-access'] }, async (t) => {
      const { res } = await plainGet(op);
      t.cite(res);
      expect(res.header('www-authenticate'), 'no authentication challenge').toBeUndefined();
      expect([401, 403], `${name} without credentials`).not.toContain(res.status);
      if (res.status === 404 && MAY_BE_ABSENT.has(name))
        throw new PreconditionFailed(`setup error (precondition): ${name} answered 404, which the document allows`);
      expect(res.status, `${name} without credentials`).toBe(200);
    });

    check({ id: `feed-json-body-${kebab(name)}`, title: `${name}: a successful body is JSON`, requirements: ['feed-success-json'] }, async (t) => {
      const { res } = await plainGet(op);
      t.cite(res);
      if (res.status !== 200) throw new PreconditionFailed(`setup error (precondition): ${name} answered ${res.status}, not 200`);
      expect(res.header('content-type') ?? '', 'content type').toMatch(/^application\/([\w.-]+\+)?json\b/i);
      jsonBody(res);
    });

    check(
      {
        id: `feed-post-405-${kebab(name)}`,
        title: `${name}: POST answers 405 problem+json with X-Request-Id`,
        requirements: ['feed-get-only', 'feed-problem-json', 'feed-problem-request-id'],
      },
      async () => {
        const { path } = await op.resolve();
        expectProblem(await feedGet(path, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }), 405);
      },
    );
  }

  for (const method of ['PUT', 'PATCH', 'DELETE']) {
    check(
      {
        id: `feed-${method.toLowerCase()}-405`,
        title: `${method} on /api/v1/items answers 405 problem+json with X-Request-Id`,
        requirements: ['feed-get-only', 'feed-problem-json', 'feed-problem-request-id'],
      },
      async () => {
        expectProblem(
          await feedGet('/api/v1/items', { method, ...(method === 'DELETE' ? {} : { body: '{}', headers: { 'content-type': 'application/json' } }) }),
          405,
        );
      },
    );
  }
});

describe('problem responses', () => {
  check(
    {
      id: 'feed-400-problem',
      title: 'a rejected parameter answers 400 problem+json with X-Request-Id',
      requirements: ['feed-problem-json', 'feed-problem-request-id'],
    },
    async () => {
      expectProblem(await feedGet('/api/v1/dailies', { query: { limit: 0 } }), 400);
    },
  );
});
