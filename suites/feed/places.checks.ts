/**
 * content-feed-service.md — What the service does / Endpoints: "Every response carries `ETag` and
 * `Cache-Control`", s-maxage, "an unchanged resource answers 304 with an empty body", "Every 304 carries `ETag` and
 * `Cache-Control` and an empty body", at every place (src/places.ts: each parameter value, a search, a continuation
 * page, HEAD), not only on the one request per operation conditional-requests.checks.ts makes. Each place is probed
 * once: a request, then at once the same request with If-None-Match: the ETag it gave (a GET's read off the wire,
 * so a body after a 304 shows).
 */
import { check, expect, fail, precondition, PreconditionFailed, checkGroup, type CheckTools } from '../../src/harness.js';
import { FEED_OPERATIONS, MAY_BE_ABSENT, feedGet, feedUrl, idOf, listOf, once, profile, sharedGet } from '../../src/feed.js';
import { ENTITY_TAG, sMaxAge, weakMatch } from '../../src/caching.js';
import { AGAIN_REQUIREMENT, againCheckId, feedPlaces, nextOf, placeCheckId, placeRequirement, type FeedPlace } from '../../src/places.js';
import { rawGet } from '../../src/raw-http.js';
import { http } from '../../src/context.js';
import type { HttpResponse } from '../../src/http.js';

/** A conditional answer: status, headers, and the bytes after its header section (a HEAD's: none). */
interface Conditional {
  status: number;
  headers: Record<string, string | undefined>;
  bodyBytes: number;
  /** A GET's bytes after its header section, as they came off the wire. */
  after?: Buffer;
  sent: string;
}

interface PlaceProbe {
  first: HttpResponse;
  /** The request the place makes (a continuation place's with the value its first page gave). */
  path: string;
  query?: Record<string, string>;
  conditional?: Conditional;
  /** Every conditional request of the probe, in order: each one after the first sent the ETag of the one before. */
  conditionals: Conditional[];
  /** Conditional requests that met new content (a 200 with another ETag) before the last. */
  moved: number;
  /** When the conditional answered neither 200 nor 304: the status of the same request without If-None-Match, sent right after. */
  plainAfter?: number;
}

/** How soon after a page's first answer a second ask still counts as "at once". */
const AT_ONCE_MS = 2_000;

/** Tries while the content moves on (a 200 with a new ETag): each conditional request follows the answer it revalidates at once. */
const TRIES = 3;

async function target(place: FeedPlace): Promise<{ path: string; query?: Record<string, string>; evidence: HttpResponse[] }> {
  if (place.method === 'HEAD') {
    const { path, query } = await FEED_OPERATIONS.find((o) => o.operationId === place.operationId)!.resolve();
    return { path, query: query as Record<string, string> | undefined, evidence: [] };
  }
  if (!place.follows) return { path: place.path!, query: place.query, evidence: [] };
  const first = await feedGet(place.path!, { query: place.query });
  const next = first.status === 200 ? nextOf(place, first.body) : undefined;
  if (!next) throw new PreconditionFailed(`${place.path} answered ${first.status} with no next page to continue to`);
  return { path: place.path!, query: { ...place.query, [place.follows.param]: next }, evidence: [first] };
}

async function conditional(place: FeedPlace, path: string, query: Record<string, string> | undefined, etag: string): Promise<Conditional> {
  if (place.method === 'HEAD') {
    const res = await feedGet(path, { query, method: 'HEAD', headers: { 'if-none-match': etag }, continuation: true });
    return { status: res.status, headers: res.headers, bodyBytes: 0, sent: etag };
  }
  const raw = await rawGet(http().buildUrl(feedUrl(path), query), { 'if-none-match': etag }, 'feed', { continuation: true });
  return { status: raw.status, headers: raw.headers, bodyBytes: raw.after.length, after: raw.after, sent: etag };
}

function probe(place: FeedPlace): Promise<PlaceProbe & { evidence: HttpResponse[] }> {
  return once(`place:${place.slug}`, async () => {
    const { path, query, evidence } = await target(place);
    // A GET place's first request is the default checks' context request too (the same query, asked once).
    const first =
      place.method === 'GET' && !place.follows
        ? await sharedGet(path, query)
        : await feedGet(path, { query, method: place.method, continuation: evidence.length > 0 });
    evidence.push(first);
    let etag = first.header('etag');
    const conditionals: Conditional[] = [];
    if (first.status !== 200 || !etag) return { first, path, query, conditionals, moved: 0, evidence };
    let moved = 0;
    for (;;) {
      const c = await conditional(place, path, query, etag);
      conditionals.push(c);
      const next = c.headers.etag;
      if (c.status !== 200 && c.status !== 304) {
        const plain = await feedGet(path, { query, method: place.method, continuation: true });
        evidence.push(plain);
        return { first, path, query, conditional: c, conditionals, moved, evidence, plainAfter: plain.status };
      }
      if (c.status !== 200 || !next || weakMatch(next, etag) || moved + 1 >= TRIES)
        return { first, path, query, conditional: c, conditionals, moved, evidence };
      moved++;
      etag = next;
    }
  });
}

/** The place's 200, or undecided: whether it answers 200 at all is judged by the checks of its parameter and of access. */
async function ok(place: FeedPlace, t: CheckTools): Promise<PlaceProbe> {
  const p = await probe(place);
  t.cite(...p.evidence);
  // Neither is a finding and neither leaves a 200 to judge here: HTTP lets a GET resource refuse HEAD and the document
  // asks for none (specs/feed/requirements.json, feed-get-only), and the document allows this operation's 404.
  if (place.method === 'HEAD' && (p.first.status === 405 || p.first.status === 501))
    return t.notApplicable(`HEAD answered ${p.first.status}: the deployment serves no HEAD here, so no HEAD response is there to judge`);
  if (p.first.status === 404 && MAY_BE_ABSENT.has(place.operationId))
    return t.notApplicable(`${place.text} answered 404, which the document allows: no 200 here to judge`);
  precondition(p.first.status === 200, `${place.text} answered ${p.first.status}, not 200`, ...place.dependsOn);
  return p;
}

const cc = (h: Record<string, string | undefined>) => h['cache-control'];

/**
 * Two conditional 200s of the probe in a row, the second sent at once with the first's ETag, that came with another
 * ETag and the very same bytes after the header section: nothing in the representation changed, yet its ETag did.
 * Bytes as they came off the wire (the probe's conditional requests are read whole on connections of their own), so
 * only two answers framed and encoded alike compare; a body with a per-request field (a snapshot's asOf) differs at
 * each request, and a new ETag for it is the deployment's to give.
 */
function newTagSameBytes(p: PlaceProbe): { sent: string; tag: string } | undefined {
  for (let i = 1; i < p.conditionals.length; i++) {
    const [a, b] = [p.conditionals[i - 1]!, p.conditionals[i]!];
    const tag = b.headers.etag;
    if (a.status !== 200 || b.status !== 200 || !tag || !a.after?.length || !b.after) continue;
    if (!weakMatch(tag, b.sent) && a.after.equals(b.after)) return { sent: b.sent, tag };
  }
  return undefined;
}

const RULES: Record<string, (place: FeedPlace, t: CheckTools) => Promise<void>> = {
  'etag-cache-control': async (place, t) => {
    const p = await ok(place, t);
    expect(p.first.header('etag'), `${place.text}: ETag`).toMatch(ENTITY_TAG, 'an entity-tag, [W/]"…"');
    expect(p.first.header('cache-control'), `${place.text}: Cache-Control`).toBeTruthy();
  },
  's-maxage': async (place, t) => {
    const p = await ok(place, t);
    const answers: [string, string | undefined][] = [[`the ${p.first.status}`, p.first.header('cache-control')]];
    if (p.conditional?.status === 304) answers.push(['the 304', cc(p.conditional.headers)]);
    const present = answers.filter(([, v]) => v !== undefined);
    precondition(present.length > 0, 'no Cache-Control to read', 'feed-200-etag-cache-control');
    const bad = present.filter(([, v]) => sMaxAge(v) === undefined);
    if (bad.length) fail(`${place.text}: ${bad.map(([w, v]) => `${w} has Cache-Control "${v}" without s-maxage in seconds`).join('; ')}`);
  },
  'conditional-304': async (place, t) => {
    const p = await ok(place, t);
    precondition(p.conditional, 'the 200 carried no ETag to send back', 'feed-200-etag-cache-control');
    const c = p.conditional;
    t.observe('conditional requests', String(p.moved + 1));
    if (c.status === 304) return;
    precondition(
      p.plainAfter === undefined || p.plainAfter === 200,
      `${place.text}: If-None-Match answered ${c.status}, and the same request without it ${p.plainAfter} right after: the place no longer answers 200`,
      ...place.dependsOn,
    );
    if (c.status === 200 && c.headers.etag && !weakMatch(c.headers.etag, c.sent) && p.moved + 1 >= TRIES) {
      // A new ETag at every answer: new content each time (a live snapshot page never stays unchanged: nothing to
      // revalidate), or an ETag that changes while the content does not: two answers in a row with the same bytes.
      const same = place.method === 'GET' ? newTagSameBytes(p) : undefined;
      if (same)
        fail(
          `${place.text}: If-None-Match: ${same.sent} (the ETag of the answer just before) answered 200 with another ETag (${same.tag}) and the same bytes: ` +
            'the resource did not change, so the answer must be 304 (a polling client never sees a 304 when every answer gets a new ETag)',
        );
      return t.notApplicable(`the content changed before each of ${TRIES} conditional requests, each sent at once after the answer it revalidated`);
    }
    fail(
      `${place.text}: If-None-Match: ${c.sent} (the ETag it had just given) answered ${c.status}${c.headers.etag ? ` with ETag ${c.headers.etag}` : ''}, where 304 is required`,
    );
  },
  '304-headers': async (place, t) => {
    const p = await ok(place, t);
    if (p.conditional?.status === 200 && p.moved + 1 >= TRIES) return t.notApplicable('the content changed at every request: no 304 to read');
    precondition(p.conditional?.status === 304, 'no 304 was obtained', 'feed-conditional-304');
    const c = p.conditional!;
    const missing = ['etag', 'cache-control'].filter((h) => !c.headers[h]);
    if (missing.length) fail(`${place.text}: the 304 lacks ${missing.join(' and ')}`);
    t.observe('bytes after the 304 header section', String(c.bodyBytes));
    if (c.bodyBytes > 0) fail(`${place.text}: the 304 (read off its own connection) was followed by ${c.bodyBytes} byte(s); a 304 has an empty body`);
  },
};

/**
 * A continuation value served once serves again when asked for again at once (the conditional request of the probe,
 * and the same request without If-None-Match right after): a client retries a page, or revalidates it.
 */
async function servedAgain(place: FeedPlace, t: CheckTools): Promise<void> {
  const p = await ok(place, t);
  precondition(p.conditional, 'the 200 carried no ETag, so the probe asked for the page only once', 'feed-200-etag-cache-control');
  const c = p.conditional;
  t.observe('asked again', `${c.status} (with If-None-Match)${p.plainAfter === undefined ? '' : `, then ${p.plainAfter} (without)`}`);
  if (c.status === 200 || c.status === 304 || p.plainAfter === 200) return samePage(place, p, t);
  // A 429 or 503 says the service is busy now, not that the value is spent.
  if (c.status === 429 || c.status === 503 || p.plainAfter === 429 || p.plainAfter === 503)
    throw new PreconditionFailed(`${place.text}: asked again, the page answered ${c.status} and ${String(p.plainAfter)} (busy): nothing to judge`);
  fail(
    `${place.text}: the ${place.follows!.param} value that had just been served answered ${c.status}, and ${String(p.plainAfter)} without If-None-Match, when asked for again at once: a retry or a revalidation of the page is refused`,
  );
}

/**
 * A snapshot page value asked for again at once serves that page again: the rows after the same point of the walk.
 * Its first answer and the same request sent once more (plainly, read whole) must share a row when both hold rows: a
 * live set changes a few rows at a time, never every row of a page between two requests sent back to back (an answer
 * that is another page, the next one say, shares none).
 */
async function samePage(place: FeedPlace, p: PlaceProbe, t: CheckTools): Promise<void> {
  if (place.operationId !== 'selectedSnapshot' || place.method !== 'GET') return;
  const again = await once(`place-again:${place.slug}`, () => feedGet(p.path, { query: p.query, continuation: true }));
  if (again.status !== 200) return;
  // At once: asked again within two seconds of the first answer (a later ask may meet a set that moved on).
  const started = (r: HttpResponse) => Date.parse(r.attempts[0]?.startedAt ?? '');
  const firstDone = started(p.first) + (p.first.attempts.at(-1)?.durationMs ?? 0);
  if (!(started(again) - firstDone <= AT_ONCE_MS)) return;
  t.cite(again);
  const sp = profile().snapshot;
  const ids = (r: HttpResponse) => {
    try {
      return listOf(JSON.parse(r.body), sp.list!).map((i) => idOf(i, sp.id!));
    } catch {
      return [];
    }
  };
  const [a, b] = [ids(p.first), ids(again)];
  const inBoth = a.filter((id) => b.includes(id)).length;
  t.observe('rows', `${a.length} first, ${b.length} asked again; ${inBoth} in both`);
  if (a.length && b.length && inBoth === 0)
    fail(
      `${place.text}: asked for again at once, the ${place.follows!.param} value served other rows (${b.slice(0, 3).join(', ')}) than the first time (${a.slice(0, 3).join(', ')}): not the same page`,
    );
}

const places = await feedPlaces();
checkGroup('the caching rules at every place', () => {
  for (const place of places)
    for (const [rule, run] of Object.entries(RULES)) {
      const r = rule as keyof typeof RULES & Parameters<typeof placeCheckId>[0];
      check({ id: placeCheckId(r, place.slug), title: `${place.text}: ${rule}`, requirements: [placeRequirement(r)] }, (t) => run(place, t));
    }
  for (const place of places.filter((x) => x.follows && AGAIN_REQUIREMENT[x.operationId]))
    check(
      {
        id: againCheckId(place.slug),
        title: `${place.text}: asked for again at once, it is served again`,
        requirements: [AGAIN_REQUIREMENT[place.operationId]!],
      },
      (t) => servedAgain(place, t),
    );
});
