/**
 * content-feed-service.md — What the service does / Endpoints: ETag, Cache-Control and conditional requests,
 * on every operation. Each operation is probed once (GET, GET again, GET with If-None-Match) and the checks
 * below share that probe. "Unchanged" is judged the way a cache judges it: a 200 whose ETag matches the one
 * sent says the representation is unchanged, whatever per-request fields (a snapshot's `asOf`) its body carries.
 */
import { randomBytes } from 'node:crypto';
import { check, expect, fail, precondition, PreconditionFailed, checkGroup } from '../../src/harness.js';
import {
  cachingCheckId,
  FEED_OPERATIONS,
  MAY_BE_ABSENT,
  contentOf,
  feedGet,
  feedUrl,
  once,
  operationProbe,
  pause,
  type FeedOperation,
  type OperationProbe as Probe,
} from '../../src/feed.js';
import { ENTITY_TAG, isWeak, sMaxAge, weakMatch } from '../../src/caching.js';
import { kebab } from '../../src/spec.js';
import { rawGet } from '../../src/raw-http.js';
import { http } from '../../src/context.js';
import type { HttpResponse } from '../../src/http.js';

async function ok200(op: FeedOperation, cite: (...r: HttpResponse[]) => void): Promise<Probe> {
  const p = await operationProbe(op);
  cite(...p.evidence);
  if (p.first.status === 404 && MAY_BE_ABSENT.has(op.operationId)) {
    throw new PreconditionFailed(`${op.operationId} answered 404, which the document allows; nothing to check`);
  }
  // Whether the operation answers 200 at all is the anonymous-access check's requirement; these check its headers.
  if (p.first.status !== 200) throw new PreconditionFailed(`${op.operationId} answered ${p.first.status}, not 200`, ['feed-anonymous-access']);
  return p;
}

/**
 * Conditional requests after the probe's own while the content moves on between requests. Each follows the answer
 * that gave its entity-tag at once, so on a live feed (an edit a second) nearly every one meets unchanged content.
 */
const EXTRA_REVALIDATIONS = 4;
/**
 * When the content moved before each of those, the series goes on after a pause, PATIENT_TRIES more: a feed
 * that changes in bursts (a writer's batch, another client's walk that edits as it reads) is quiet again by then.
 */
const PATIENT_PAUSE_MS = 1000;
const PATIENT_TRIES = 2;

/** One conditional request: the entity-tag sent, the response that gave it, and what came back. */
interface Step {
  sent: string;
  from: HttpResponse;
  res: HttpResponse;
}

interface Revalidation {
  /** Every response of the series in order (the probe's two plain GETs, then each conditional GET). */
  responses: HttpResponse[];
  steps: Step[];
  /** The first 304, if any. */
  notModified?: Step;
  /** A 200 that carried the very entity-tag it was asked about: the server says unchanged, yet sent it again. */
  unchangedButFull?: Step;
  /** A 200 with a new entity-tag whose content is that of the response the sent tag came from: nothing changed. */
  newTagSameContent?: Step;
}

/**
 * The probe's conditional GET and, while the answer is a 200 with a new ETag and new content (the content moved
 * on), up to EXTRA_REVALIDATIONS more with the newest ETag, then PATIENT_TRIES after a pause: what a polling cache
 * would do. A new ETag on the same content (see contentOf: the envelope, such as a per-request asOf, is not content)
 * ends the series: the resource did not change, so that answer should have been a 304. Shared by the checks below.
 */
function revalidation(op: FeedOperation, p: Probe): Promise<Revalidation> {
  return once(`revalidation:${op.operationId}`, async () => {
    const out: Revalidation = { responses: [p.first, p.again], steps: [] };
    const etag = p.first.header('etag');
    if (!etag || !p.conditional) return out;
    const { path, query } = await op.resolve();
    let step: Step = { sent: etag, from: p.first, res: p.conditional };
    for (let extra = 0; ; extra++) {
      out.steps.push(step);
      out.responses.push(step.res);
      if (step.res.status === 304) {
        out.notModified = step;
        return out;
      }
      const next = step.res.header('etag');
      if (step.res.status !== 200 || !next) return out;
      if (weakMatch(next, step.sent)) {
        out.unchangedButFull = step;
        return out;
      }
      if (contentOf(op, step.res) === contentOf(op, step.from)) {
        out.newTagSameContent = step;
        return out;
      }
      if (extra >= EXTRA_REVALIDATIONS + PATIENT_TRIES) return out;
      if (extra === EXTRA_REVALIDATIONS) await pause(PATIENT_PAUSE_MS);
      step = { sent: next, from: step.res, res: await feedGet(path, { query, headers: { 'if-none-match': next }, continuation: true, again: true }) };
    }
  });
}

/**
 * The series ended because the content moved on before each conditional GET (every answer a 200 with a new ETag and
 * new content): a live feed that changes faster than a revalidation finishes. Nothing about 304s can be seen there,
 * so the checks that need one are not exercised, as on every other place (places.checks.ts), never undecided.
 */
function keptMoving(r: Revalidation): boolean {
  if (r.notModified || r.unchangedButFull || r.newTagSameContent) return false;
  const last = r.steps[r.steps.length - 1];
  return !!last && last.res.status === 200 && !!last.res.header('etag') && !weakMatch(last.res.header('etag')!, last.sent);
}

checkGroup('conditional requests on every operation', () => {
  for (const op of FEED_OPERATIONS) {
    const name = op.operationId;
    check(
      { id: cachingCheckId('etag-cache-control', name), title: `${name}: a 200 carries ETag and Cache-Control`, requirements: ['feed-200-etag-cache-control'] },
      async (t) => {
        const p = await ok200(op, t.cite);
        const etag = expectEntityTag(p.first.header('etag'), 'ETag');
        expect(p.first.header('cache-control'), 'Cache-Control header').toBeTruthy();
        t.observe('etag strength', isWeak(etag) ? 'weak' : 'strong');
      },
    );

    check(
      {
        id: cachingCheckId('s-maxage', name),
        title: `${name}: Cache-Control carries s-maxage, the minimum polling interval`,
        requirements: ['feed-cache-control-s-maxage'],
      },
      async (t) => {
        const p = await ok200(op, t.cite);
        const cc = p.first.header('cache-control');
        precondition(cc, 'the 200 has no Cache-Control', 'feed-200-etag-cache-control');
        expect(sMaxAge(cc), `s-maxage in "${cc}"`).toBeTypeOf('number');
      },
    );

    check(
      {
        id: cachingCheckId('conditional-304', name),
        title: `${name}: If-None-Match with the current ETag answers 304`,
        requirements: ['feed-conditional-304'],
      },
      async (t) => {
        const p = await ok200(op, t.cite);
        precondition(p.conditional, 'the 200 carried no ETag to send back', 'feed-200-etag-cache-control');
        const r = await revalidation(op, p);
        t.cite(...r.responses);
        t.observe('bodies of the two plain GETs', p.again.body === p.first.body ? 'identical' : 'different (per-request fields or new content)');
        if (r.notModified) {
          t.observe('conditional GETs until a 304', String(r.steps.indexOf(r.notModified) + 1));
          return;
        }
        if (r.unchangedButFull)
          fail(
            `If-None-Match: ${r.unchangedButFull.sent} answered ${r.unchangedButFull.res.status} with that same ETag: the server says the representation is unchanged, so the answer must be 304`,
          );
        if (r.newTagSameContent)
          fail(
            `If-None-Match: ${r.newTagSameContent.sent} answered 200 with another ETag (${r.newTagSameContent.res.header('etag')}) and the same content as the response that ETag came from: ` +
              'the resource did not change, so the answer must be 304 (a polling client never sees a 304 when every response gets a new ETag)',
          );
        const last = r.steps[r.steps.length - 1]!;
        if (last.res.status !== 200) fail(`If-None-Match: ${last.sent} answered ${last.res.status}, where 304 (or 200 with new content) is required`);
        if (!last.res.header('etag')) fail(`If-None-Match: ${last.sent} answered 200 without an ETag to revalidate with`);
        t.notApplicable(
          `the content changed before each of ${r.steps.length} conditional GETs, each sent at once after the response whose ETag it carried (the last ${PATIENT_TRIES} after a pause of ${PATIENT_PAUSE_MS} ms): ` +
            'the feed changes faster than a revalidation can finish, so whether an unchanged resource answers 304 could not be seen',
        );
      },
    );

    check(
      {
        id: cachingCheckId('304-headers', name),
        title: `${name}: a 304 carries ETag and Cache-Control and no body`,
        requirements: ['feed-304-headers-empty-body'],
      },
      async (t) => {
        const p = await ok200(op, t.cite);
        const r = await revalidation(op, p);
        t.cite(...r.responses);
        if (keptMoving(r)) t.notApplicable('the content changed before each conditional GET: no 304 to read');
        precondition(r.notModified, 'no 304 was obtained', 'feed-conditional-304');
        const nm = r.notModified.res;
        expectEntityTag(nm.header('etag'), '304 ETag');
        expect(nm.header('cache-control'), '304 Cache-Control').toBeTruthy();
        // No HTTP client shows a body on a 304 (it ends at its header section, RFC 9112 6.3): read the wire. Each
        // request follows the answer whose ETag it carries at once; a 200 means the content moved on meanwhile.
        const { path, query } = await op.resolve();
        const url = http().buildUrl(feedUrl(path), query);
        let sent = nm.header('etag')!;
        for (let attempt = 0; attempt <= EXTRA_REVALIDATIONS; attempt++) {
          const raw = await rawGet(url, { 'if-none-match': sent }, 'feed', { continuation: true });
          if (raw.status === 304) {
            t.observe('bytes after the 304 header section', String(raw.after.length));
            if (raw.after.length > 0)
              fail(
                `a 304 (read from its own connection) was followed by ${raw.after.length} byte(s) after its header section: ` +
                  `${JSON.stringify(raw.after.subarray(0, 160).toString('utf8'))}; a 304 has an empty body`,
              );
            return;
          }
          const next = raw.headers.etag;
          if (raw.status !== 200 || !next || weakMatch(next, sent))
            throw new PreconditionFailed(
              `If-None-Match: ${sent} on a connection of its own answered ${raw.status}${next ? ` with ETag ${next}` : ' without an ETag'}, where the client's connection had a 304 (feed-conditional-304 judges the conditional answer)`,
              ['feed-conditional-304'],
            );
          sent = next;
        }
        // Every answer a 200 with a new ETag: the content kept changing (a 304 was seen above, through the client).
        t.notApplicable(
          `no conditional GET on a connection of its own gave a 304 in ${EXTRA_REVALIDATIONS + 1} tries, each sent at once with the newest ETag (the content kept changing)`,
        );
      },
    );

    check(
      { id: cachingCheckId('etag-stable', name), title: `${name}: the ETag stays the same while the content does`, requirements: ['feed-etag-stable'] },
      async (t) => {
        const p = await ok200(op, t.cite);
        precondition(p.first.header('etag'), 'the 200 carried no ETag', 'feed-200-etag-cache-control');
        const r = await revalidation(op, p);
        t.cite(...r.responses);
        // What a client can observe of "unchanged": the same content (contentOf: the resource's fields, not its
        // envelope), or the server's own 304.
        const full = r.responses.filter((x) => x.status === 200 && x.header('etag'));
        let observed = 0;
        for (let i = 0; i < full.length; i++)
          for (let j = i + 1; j < full.length; j++) {
            const [a, b] = [full[i]!, full[j]!];
            if (contentOf(op, a) !== contentOf(op, b)) continue;
            observed++;
            if (!weakMatch(a.header('etag')!, b.header('etag')!))
              t.violation(
                `the same content got two ETags: ${a.header('etag')} then ${b.header('etag')}${a.body === b.body ? ' (identical bodies)' : ' (the bodies differ only outside the content fields, e.g. a per-request asOf)'}`,
              );
          }
        if (r.notModified) {
          observed++;
          const tag = r.notModified.res.header('etag');
          if (tag && !weakMatch(tag, r.notModified.sent))
            t.violation(`a 304 to If-None-Match: ${r.notModified.sent} (content unchanged) carried another ETag: ${tag}`);
        }
        if (observed === 0 && keptMoving(r))
          t.notApplicable('the content changed between every two requests and no 304 came back: no unchanged content to compare ETags over');
        precondition(
          observed > 0,
          'no two responses showed unchanged content (the content changed between every two requests and no 304 came back; the If-None-Match check says why)',
        );
      },
    );
  }
});

/**
 * RFC 9110 13.1.2: If-None-Match is a list of entity-tags compared weakly, or "*". "Every operation accepts the
 * shared parameters: header `If-None-Match`": each form is sent to every operation (one request per form each).
 */
checkGroup('If-None-Match is read as HTTP defines it', () => {
  for (const op of FEED_OPERATIONS) {
    const name = op.operationId;
    check(
      {
        id: `feed-if-none-match-forms-${kebab(name)}`,
        title: `${name}: If-None-Match as a list, in weak form or "*" answers 304; a tag that does not match answers 200`,
        requirements: ['feed-shared-params'],
      },
      async (t) => {
        const p = await ok200(op, t.cite);
        const r = await revalidation(op, p);
        t.cite(...r.responses);
        if (keptMoving(r)) t.notApplicable('the content changed before each conditional GET: no 304 to compare the other forms with');
        precondition(r.notModified, 'If-None-Match with the exact current ETag gave no 304', 'feed-conditional-304');
        let current = r.notModified.res.header('etag') ?? r.notModified.sent;
        const { path, query } = await op.resolve();
        const other = () => `"not-current-${randomBytes(6).toString('hex')}"`;
        const opaque = (tag: string) => tag.replace(/^W\//, '');
        const forms: [string, (tag: string) => string][] = [
          ['a list that contains the current ETag', (tag) => `${other()}, ${tag}, ${other()}`],
          [
            isWeak(current) ? 'the strong form of the current weak ETag' : 'the weak form W/"…" of the current ETag',
            (tag) => (isWeak(tag) ? opaque(tag) : `W/${tag}`),
          ],
          ['"*"', () => '*'],
        ];
        const failures: string[] = [];
        const moving: string[] = [];
        for (const [label, value] of forms) {
          for (let attempt = 0; ; attempt++) {
            const sent = value(current);
            // At once after the answer that gave the current ETag: on a live feed, the content rarely moves in between.
            const res = await feedGet(path, { query, headers: { 'if-none-match': sent }, continuation: true, again: attempt > 0 });
            if (res.status === 304) break;
            const tag = res.header('etag');
            if (res.status === 200 && tag && !weakMatch(tag, current) && attempt < EXTRA_REVALIDATIONS) {
              current = tag; // the content moved on: ask again with the new tag
              continue;
            }
            if (res.status === 200 && tag && !weakMatch(tag, current)) {
              moving.push(label);
              break;
            }
            failures.push(`${label} (If-None-Match: ${sent}) answered ${res.status}, where 304 is required`);
            break;
          }
        }
        const miss = other();
        const res = await feedGet(path, { query, headers: { 'if-none-match': miss } });
        if (res.status !== 200) failures.push(`an entity-tag that does not match (If-None-Match: ${miss}) answered ${res.status}, where 200 is required`);
        if (failures.length) fail(failures.join('; '));
        if (moving.length)
          t.notApplicable(
            `the content changed before each of ${EXTRA_REVALIDATIONS + 1} tries of ${moving.join(' and of ')}, each sent at once with the newest ETag: that form could not be judged`,
          );
      },
    );
  }
});

function expectEntityTag(value: string | undefined, label: string): string {
  expect(value, `${label} header`).toBeTypeOf('string');
  expect(value, `${label} header`).toMatch(ENTITY_TAG, 'an entity-tag, [W/]"…"');
  return value!;
}
