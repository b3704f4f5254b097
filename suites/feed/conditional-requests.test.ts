/**
 * content-feed-service.md — What the service does / Endpoints: ETag, Cache-Control and conditional requests,
 * on every operation. Each operation is probed once (GET, GET again, GET with If-None-Match) and the checks
 * below share that probe, so no URL is fetched more than three times.
 */
import { describe } from 'vitest';
import { check, expect, precondition, PreconditionFailed } from '../../src/harness.js';
import { FEED_OPERATIONS, MAY_BE_ABSENT, operationProbe, type FeedOperation, type OperationProbe as Probe } from '../../src/feed.js';
import { ENTITY_TAG, isWeak, sMaxAge, weakMatch } from '../../src/caching.js';
import type { HttpResponse } from '../../src/http.js';

async function ok200(op: FeedOperation, cite: (...r: HttpResponse[]) => void): Promise<Probe> {
  const p = await operationProbe(op);
  cite(...p.evidence);
  if (p.first.status === 404 && MAY_BE_ABSENT.has(op.operationId)) {
    throw new PreconditionFailed(`setup error (precondition): ${op.operationId} answered 404, which the document allows; nothing to check`);
  }
  expect(p.first.status, `${op.operationId} should answer 200`).toBe(200);
  return p;
}

describe('conditional requests on every operation', () => {
  for (const op of FEED_OPERATIONS) {
    const name = op.operationId;
    check(
      { id: `feed-etag-cache-control-${kebab(name)}`, title: `${name}: a 200 carries ETag and Cache-Control`, requirements: ['feed-200-etag-cache-control'] },
      async (t) => {
        const p = await ok200(op, t.cite);
        const etag = expectEntityTag(p.first.header('etag'), 'ETag');
        expect(p.first.header('cache-control'), 'Cache-Control header').toBeTruthy();
        t.observe('etag strength', isWeak(etag) ? 'weak' : 'strong');
      },
    );

    check(
      {
        id: `feed-s-maxage-${kebab(name)}`,
        title: `${name}: Cache-Control carries s-maxage, the minimum polling interval`,
        requirements: ['feed-cache-control-s-maxage'],
      },
      async (t) => {
        const p = await ok200(op, t.cite);
        const cc = p.first.header('cache-control');
        precondition(cc, 'the 200 has no Cache-Control (reported by the ETag and Cache-Control check)');
        expect(sMaxAge(cc), `s-maxage in "${cc}"`).toBeTypeOf('number');
      },
    );

    check(
      {
        id: `feed-conditional-304-${kebab(name)}`,
        title: `${name}: If-None-Match with the current ETag answers 304`,
        requirements: ['feed-conditional-304', 'feed-shared-params'],
      },
      async (t) => {
        const p = await ok200(op, t.cite);
        precondition(p.conditional, 'the 200 carried no ETag to send back (reported by the ETag and Cache-Control check)');
        if (p.again.body !== p.first.body)
          throw new PreconditionFailed('setup error (precondition): the content changed between two requests; an unchanged resource is needed');
        expect(p.conditional.status, `If-None-Match: ${p.first.header('etag')} on an unchanged resource`).toBe(304);
      },
    );

    check(
      {
        id: `feed-304-headers-${kebab(name)}`,
        title: `${name}: a 304 carries ETag and Cache-Control and no body`,
        requirements: ['feed-304-headers-empty-body'],
      },
      async (t) => {
        const p = await ok200(op, t.cite);
        precondition(p.conditional?.status === 304, 'no 304 was obtained (reported by the If-None-Match check)');
        // The empty body is not asserted: a 304 ends at its header section (RFC 9112 6.3), so no HTTP client can
        // observe a body on one. See the note on feed-304-headers-empty-body.
        expectEntityTag(p.conditional.header('etag'), '304 ETag');
        expect(p.conditional.header('cache-control'), '304 Cache-Control').toBeTruthy();
      },
    );

    check(
      { id: `feed-etag-stable-${kebab(name)}`, title: `${name}: the ETag stays the same while the content does`, requirements: ['feed-etag-stable'] },
      async (t) => {
        const p = await ok200(op, t.cite);
        const [a, b] = [p.first.header('etag'), p.again.header('etag')];
        precondition(a && b, 'the 200 carried no ETag (reported by the ETag and Cache-Control check)');
        if (p.again.body !== p.first.body)
          throw new PreconditionFailed('setup error (precondition): the content changed between two requests; an unchanged resource is needed');
        if (!weakMatch(a, b)) t.violation(`identical content got two ETags: ${a} then ${b}`);
      },
    );
  }
});

function expectEntityTag(value: string | undefined, label: string): string {
  expect(value, `${label} header is present`).toBeTypeOf('string');
  expect(value, `${label} is an entity-tag: [W/]"..."`).toMatch(ENTITY_TAG);
  return value!;
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
