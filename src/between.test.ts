import { describe, expect, it } from 'vitest';
import {
  apiLinksUnderV1,
  matchingEtagAnsweredFull,
  changesCursorMoves,
  cursorPagesLeadOn,
  dailySame,
  filteredRowsHold,
  firstListings,
  moreHasNext,
  pagesWithinLimit,
  filteredPagesComplete,
  snapshotWalkCursors,
  versionsNeverReturn,
  nextPagesAccepted,
  referenceLinksNameTheirIds,
  refusedCursorsStayRefused,
  smallSnapshotPagesHaveMore,
  snapshotWalkFields,
  noStaleHead,
  notModifiedCachedAsOk,
  replacedVersionForCurrent,
  viewLacks,
  type Seen,
} from './between.js';
import { outline, type Exchange } from './http.js';

const PATHS = { root: 'report', date: 'date', list: 'dates', entryDate: 'date' };
let clock = Date.parse('2026-11-27T06:00:00Z');
/** A GET 200 of a report by date, as the run-wide rules read it: whole (`body`) or past the recorder's bound (`digest`). */
function seen(
  path: string,
  read: { body?: unknown; digest?: string; status?: number; responseBody?: string; etag?: string; requestHeaders?: Record<string, string> },
): Seen {
  const sent = (clock += 100);
  const status = read.status ?? 200;
  const x = {
    method: 'GET',
    url: `https://feed.example${path}`,
    startedAt: new Date(sent).toISOString(),
    status,
    requestHeaders: read.requestHeaders ?? {},
    responseBody: read.responseBody,
  } as unknown as Exchange;
  return { x, path: path.split('?')[0]!, key: path, sent, received: sent + 10, status, cached: false, body: read.body, digest: read.digest, etag: read.etag };
}

describe('dailySame: a past report does not change across the run', () => {
  const path = '/api/v1/dailies/2026-11-20';
  it('compares two reports longer than the recorder keeps by their digests', () => {
    const r = dailySame([seen(path, { digest: 'aaaa' }), seen(path, { digest: 'bbbb' })], PATHS);
    expect(r.judged).toBe(1);
    expect(r.bad).toHaveLength(1);
    expect(r.bad[0]).toContain('their digests differ');
  });
  it('finds nothing when the digests agree', () => {
    expect(dailySame([seen(path, { digest: 'aaaa' }), seen(path, { digest: 'aaaa' })], PATHS)).toEqual({ judged: 1, bad: [] });
  });
  it('does not compare a report read whole with one read past the bound', () => {
    const whole = seen(path, { body: { report: { date: '2026-11-20', sections: [] } } });
    expect(dailySame([whole, seen(path, { digest: 'aaaa' })], PATHS)).toEqual({ judged: 0, bad: [] });
  });
  it('compares two whole reports by content', () => {
    const a = seen(path, { body: { report: { date: '2026-11-20', sections: ['a'] } } });
    const b = seen(path, { body: { report: { date: '2026-11-20', sections: ['b'] } } });
    expect(dailySame([a, b], PATHS).bad).toHaveLength(1);
  });
});

/** An item whose timeline time follows its id's last letter (a later letter, an older item). */
const item = (id: string, full = true) => {
  const discoveredAt = new Date(Date.parse('2026-11-27T05:00:00Z') - id.charCodeAt(id.length - 1) * 60_000).toISOString();
  return full ? { id, discoveredAt, publishedAt: discoveredAt, summary: 's', links: { original: 'https://news.example/a' } } : { id, discoveredAt };
};
const list = (b: unknown) => ((b as { items?: unknown[] }).items ?? []) as unknown[];
const id = (i: unknown) => (i as { id: string }).id;

describe('the run-wide rules between pages', () => {
  it('snapshotWalkFields: a continuation page of a default walk that drops summary and the original link', () => {
    const first = seen('/api/v1/selected/snapshot?limit=1', { body: { items: [item('a')], hasMore: true, nextPage: 'p2', cursor: 'c' } });
    const cont = seen('/api/v1/selected/snapshot?page=p2', { body: { items: [item('b', false)], hasMore: false, cursor: 'c' } });
    const dropped = (i: unknown) => ['summary', 'links'].filter((f) => (i as Record<string, unknown>)[f] !== undefined);
    expect(snapshotWalkFields([first, cont], { list, dropped, all: 2 }).bad).toHaveLength(1);
    const minimal = seen('/api/v1/selected/snapshot?fields=minimal&limit=1', { body: { items: [item('a', false)], hasMore: true, nextPage: 'm2' } });
    const mcont = seen('/api/v1/selected/snapshot?page=m2', { body: { items: [item('b', false)], hasMore: false } });
    // The first page asked with fields=minimal is judged too, its rows with nothing minimal drops.
    expect(snapshotWalkFields([minimal, mcont], { list, dropped, all: 2 })).toEqual({ judged: 2, bad: [] });
    const keeps = seen('/api/v1/selected/snapshot?fields=minimal&limit=1', { body: { items: [item('a')], hasMore: false } });
    expect(snapshotWalkFields([keeps], { list, dropped, all: 2 }).bad).toHaveLength(1);
  });
  it('refusedCursorsStayRefused: a cursor refused, then served with the same query (its limit aside)', () => {
    const refused = seen('/api/v1/items?cursor=k1', { status: 400, responseBody: '{"code":"invalid_cursor"}' });
    const served = seen('/api/v1/items?cursor=k1', { body: { items: [] } });
    const code = (s: Seen) => (JSON.parse(s.x.responseBody ?? '{}') as { code?: string }).code;
    const o = { code, list, next: 'page.nextCursor' };
    const fresh = new Date(clock).toISOString();
    const issuer = seen('/api/v1/items?limit=5', { body: { items: [{ id: 'a', discoveredAt: fresh, publishedAt: fresh }], page: { nextCursor: 'k1' } } });
    expect(refusedCursorsStayRefused([issuer, refused, served], o).bad).toHaveLength(1);
    const other = seen('/api/v1/items?cursor=k1&window=24h', { body: { items: [] } });
    expect(refusedCursorsStayRefused([issuer, refused, other], o).bad).toHaveLength(0);
    // A cursor the run did not read the page of: judged in the 7d window, not in the 24h one (its edge cursors).
    expect(refusedCursorsStayRefused([refused, served], o).bad).toHaveLength(1);
    const refused24 = seen('/api/v1/items?cursor=k2&window=24h', { status: 400, responseBody: '{"code":"invalid_cursor"}' });
    const served24 = seen('/api/v1/items?cursor=k2&window=24h', { body: { items: [] } });
    expect(refusedCursorsStayRefused([refused24, served24], o).judged).toBe(0);
  });
  it('cursorPagesLeadOn: a page its cursor led to repeats a row of the page that gave it', () => {
    const p1 = seen('/api/v1/items', { body: { items: [item('a'), item('b')], page: { nextCursor: 'n1' } } });
    const p2 = seen('/api/v1/items?cursor=n1', { body: { items: [item('b'), item('c')], page: {} } });
    expect(cursorPagesLeadOn([p1, p2], { list: 'items', id, next: 'page.nextCursor' }).bad).toHaveLength(1);
    // The row before the anchor repeated too, as an offset cursor does.
    const offset = seen('/api/v1/items?cursor=n1', { body: { items: [item('a'), item('c')], page: {} } });
    expect(cursorPagesLeadOn([p1, offset], { list: 'items', id, next: 'page.nextCursor' }).bad).toHaveLength(1);
    const ok = seen('/api/v1/items?cursor=n1', { body: { items: [item('c')], page: {} } });
    expect(cursorPagesLeadOn([p1, ok], { list: 'items', id, next: 'page.nextCursor' })).toEqual({ judged: 1, bad: [] });
    const search = seen('/api/v1/items?q=ab&cursor=n1', { body: { items: [item('b')], page: {} } });
    expect(cursorPagesLeadOn([p1, search], { list: 'items', id, next: 'page.nextCursor' }).judged).toBe(0);
  });
  it('moreHasNext: a page that says there is more and gives no cursor', () => {
    const bad = seen('/api/v1/selected/snapshot', { body: { items: [], hasMore: true, nextPage: null } });
    const good = seen('/api/v1/selected/snapshot', { body: { items: [], hasMore: true, nextPage: 'x' } });
    const pages = [{ path: '/api/v1/selected/snapshot', hasMore: 'hasMore', next: 'nextPage' }];
    expect(moreHasNext([bad, good], pages)).toEqual({ judged: 2, bad: [expect.stringContaining('nextPage null') as string] });
  });
  it('moreHasNext reads a page longer than the recorder keeps from its outline', () => {
    const body = { items: Array.from({ length: 50 }, (_, i) => item(`i${i}`)), page: { hasMore: true, nextCursor: null } };
    const long: Seen = { ...seen('/api/v1/items?q=ab', {}), outline: outline(body) };
    expect((outline(body) as { items: unknown[] }).items).toHaveLength(2);
    const pages = [{ path: '/api/v1/items', hasMore: 'page.hasMore', next: 'page.nextCursor' }];
    expect(moreHasNext([long], pages).bad).toHaveLength(1);
  });
  it('smallSnapshotPagesHaveMore: a first page of 1 says no more while the run saw more items', () => {
    const items = Array.from({ length: 12 }, (_, i) => item(`i${i}`));
    const walk = seen('/api/v1/selected/snapshot?limit=500', { body: { items, hasMore: false } });
    const one = seen('/api/v1/selected/snapshot?limit=1', { body: { items: [items[0]], hasMore: false, nextPage: 'x' } });
    expect(smallSnapshotPagesHaveMore([walk, one], { list, id }).bad).toHaveLength(1);
  });
  it('apiLinksUnderV1 and referenceLinksNameTheirIds: links into the API', () => {
    const pathOf = (u: string) => new URL(u).pathname;
    const story = seen('/api/v1/stories/s1', {
      body: {
        story: {
          storyline: [
            { publicId: 's2', links: { api: '/api/v2/stories/s2' } },
            { publicId: 's3', links: { api: '/api/v1/stories/other' } },
          ],
        },
      },
    });
    expect(apiLinksUnderV1([story], pathOf)).toEqual({ judged: 2, bad: [expect.stringContaining('/api/v2/stories/s2') as string] });
    const refs = (b: unknown) => (b as { story: { storyline: unknown[] } }).story.storyline;
    const r = referenceLinksNameTheirIds([story], { refs, id: (x) => (x as { publicId: string }).publicId, pathOf });
    expect(r).toEqual({ judged: 1, bad: [expect.stringContaining('to the story other') as string] });
  });
});

describe('the run-wide rules: long pages, filters, limits and first listings', () => {
  it('cursorPagesLeadOn: by=published walks (the by of their first page), and pages read from the row index', () => {
    const p1 = seen('/api/v1/items?by=published', { body: { items: [item('a'), item('b')], page: { nextCursor: 'n2' } } });
    const again = seen('/api/v1/items?cursor=n2', { body: { items: [item('b'), item('c')], page: {} } });
    expect(cursorPagesLeadOn([p1, again], { list: 'items', id, next: 'page.nextCursor' }).bad).toHaveLength(1);
    // A first page longer than the recorder keeps: its rows from the row index, its cursor from the outline.
    const long = { ...seen('/api/v1/items', {}), rows: { items: [item('a'), item('b')] }, outline: { page: { nextCursor: 'n3' } } };
    const repeat = seen('/api/v1/items?cursor=n3', { body: { items: [item('b')], page: {} } });
    expect(cursorPagesLeadOn([long, repeat], { list: 'items', id, next: 'page.nextCursor' }).bad).toHaveLength(1);
  });
  it('filteredRowsHold: a mode=selected row not selected, a category=X row of another category', () => {
    const o = { list: 'items', id: 'id', selected: 'selected', category: 'category', categories: ['review', 'practice'] };
    const selected = seen('/api/v1/items?category=Review', { body: { items: [{ id: 'a', selected: true, category: 'review' }] } });
    expect(filteredRowsHold([selected], o)).toEqual({ judged: 1, bad: [] });
    const unselected = seen('/api/v1/items?mode=selected', { body: { items: [{ id: 'a', selected: false }] } });
    expect(filteredRowsHold([unselected], o).bad).toHaveLength(1);
    const other = seen('/api/v1/items?mode=all&category=review', { body: { items: [{ id: 'a', selected: false, category: 'practice' }] } });
    expect(filteredRowsHold([other], o).bad).toHaveLength(1);
    // A label outside the document's current values (a translated one) is not judged.
    const label = seen('/api/v1/items?mode=all&category=review', { body: { items: [{ id: 'a', category: '评测' }] } });
    expect(filteredRowsHold([label], o)).toEqual({ judged: 1, bad: [] });
    // A continuation page's filter is its cursor's: not judged unless the page that gave the cursor had the same filter.
    expect(filteredRowsHold([seen('/api/v1/items?cursor=c', { body: { items: [{ id: 'a', selected: false }] } })], o).judged).toBe(0);
    const first = seen('/api/v1/items?category=review&limit=2', { body: { items: [{ id: 'a', category: 'review' }], page: { nextCursor: 'c2' } } });
    const cont = seen('/api/v1/items?category=review&limit=2&cursor=c2', { body: { items: [{ id: 'b', category: 'practice' }], page: {} } });
    const withNext = { ...o, next: 'page.nextCursor' };
    expect(filteredRowsHold([first, cont], withNext).bad).toHaveLength(1);
    // The same cursor sent with another filter (the cursor rules' to judge): not judged.
    const otherQuery = seen('/api/v1/items?category=practice&limit=2&cursor=c2', { body: { items: [{ id: 'b', category: 'review' }], page: {} } });
    expect(filteredRowsHold([first, otherQuery], withNext)).toEqual({ judged: 1, bad: [] });
  });
  it('pagesWithinLimit: a page holding more rows than its limit, counted whole or by its recorded length', () => {
    const page = { path: '/api/v1/selected/snapshot', list: 'items', max: 1000 };
    const over = seen('/api/v1/selected/snapshot?fields=minimal&limit=2', { body: { items: [{}, {}, {}] } });
    expect(pagesWithinLimit([over], page).bad).toHaveLength(1);
    const long = { ...seen('/api/v1/selected/snapshot?limit=2', {}), lengths: { items: 500 } };
    expect(pagesWithinLimit([long], page).bad).toHaveLength(1);
    const within = seen('/api/v1/selected/snapshot?limit=2', { body: { items: [{}, {}] } });
    expect(pagesWithinLimit([within], page)).toEqual({ judged: 1, bad: [] });
  });
  it('firstListings: one first page per set of parameter names, earliest first, none with a cursor', () => {
    const a = { ...seen('/api/v1/items?category=review', { body: { items: [] } }), etag: '"a"' };
    const b = { ...seen('/api/v1/items?category=practice', { body: { items: [] } }), etag: '"b"' };
    const c = { ...seen('/api/v1/items?mode=all', { body: { items: [] } }), etag: '"c"' };
    const d = { ...seen('/api/v1/items?cursor=x', { body: { items: [] } }), etag: '"d"' };
    const e = { ...seen('/api/v1/items', { body: { items: [] } }), etag: '"e"' };
    expect(firstListings([a, b, c, d, e], { path: '/api/v1/items', skip: ['cursor'], max: 5, before: Infinity }).map((s) => s.key)).toEqual([a.key, c.key]);
  });
});

describe("the run-wide rules across listings: what a filter holds, a version replaced, a walk's cursor", () => {
  it('filteredPagesComplete (window): a window=24h page lacking a row of the last 24 hours that listings of its query show before and after it', () => {
    const o = { kind: 'window' as const, list: 'items', id: 'id', hasMore: 'page.hasMore', changed: new Set<string>() };
    const date = new Date(Date.parse('2026-11-27T06:00:00Z')).toUTCString();
    const dated = (s: Seen) => ({ ...s, x: { ...s.x, responseHeaders: { date } } });
    const u1 = dated(seen('/api/v1/items?limit=100', { body: { items: [item('a'), item('b'), item('c')] } }));
    const f = dated(seen('/api/v1/items?window=24h&limit=5', { body: { items: [item('a'), item('b')], page: { hasMore: false } } }));
    const u2 = dated(seen('/api/v1/items?limit=50', { body: { items: [item('a'), item('b'), item('c')] } }));
    expect(filteredPagesComplete([u1, f, u2], o).bad).toHaveLength(1);
    // A copy older than the listing before it (a cache's, with the origin's Date): not judged.
    const stale = { ...f, x: { ...f.x, responseHeaders: { date: new Date(Date.parse('2026-11-27T05:59:00Z')).toUTCString() } } };
    expect(filteredPagesComplete([u1, stale, u2], o).judged).toBe(0);
    // A row the change feed listed may have left and come back in between: not judged.
    expect(filteredPagesComplete([u1, f, u2], { ...o, changed: new Set(['c']) })).toEqual({ judged: 2, bad: [] });
    // Beyond the page's reach (it says there is more, and the row is older than its last): not judged.
    const more = dated(seen('/api/v1/items?window=24h&limit=2', { body: { items: [item('a'), item('b')], page: { hasMore: true } } }));
    expect(filteredPagesComplete([u1, more, u2], o)).toEqual({ judged: 0, bad: [] });
    // Listings of another query (a mode sent on one side only) are not compared.
    const other = seen('/api/v1/items?mode=all', { body: { items: [item('a'), item('b'), item('c')] } });
    expect(filteredPagesComplete([other, f, other], o).judged).toBe(0);
  });
  it('filteredPagesComplete (mode): a mode=all page lacking a row that mode=selected listings of its query show before and after it', () => {
    const o = { kind: 'mode' as const, list: 'items', id: 'id', hasMore: 'page.hasMore', changed: new Set<string>() };
    const date = new Date(Date.parse('2026-11-27T06:00:00Z')).toUTCString();
    const dated = (s: Seen) => ({ ...s, x: { ...s.x, responseHeaders: { date } } });
    const u1 = dated(seen('/api/v1/items', { body: { items: [item('a'), item('b'), item('c')] } }));
    const all = dated(seen('/api/v1/items?mode=all', { body: { items: [item('a'), item('c')], page: { hasMore: false } } }));
    const u2 = dated(seen('/api/v1/items?mode=selected&window=24h', { body: { items: [item('a'), item('b'), item('c')] } }));
    expect(filteredPagesComplete([u1, all, u2], o).bad).toHaveLength(1);
    // A page of mode=selected is not judged against listings without mode (mode=all ones are the pages judged).
    const sel = dated(seen('/api/v1/items?mode=selected', { body: { items: [item('a')], page: { hasMore: false } } }));
    expect(filteredPagesComplete([u1, sel, u1], o).judged).toBe(0);
  });
  it('versionsNeverReturn: a hot-topics 200 showing a ranking an earlier answer had replaced', () => {
    const hot = '/api/v1/hot-topics';
    const tagged = (s: Seen, etag: string) => ({ ...s, etag });
    const a = tagged(seen(hot, { body: { items: ['x'] } }), 'W/"a"');
    const b = tagged(seen(hot, { body: { items: ['y'] } }), 'W/"b"');
    const a2 = tagged(seen(hot, { body: { items: ['x'] } }), 'W/"a"');
    expect(versionsNeverReturn([a, b, a2], hot).bad).toHaveLength(1);
    // A 304 confirming the replaced ETag is feed-changed-resource-200's: not judged here.
    const back304 = tagged(seen(hot, { status: 304 }), '"a"');
    expect(versionsNeverReturn([a, b, back304], hot).bad).toHaveLength(0);
    // Forward only: judged, nothing back.
    const [f1, f2, f3] = [['x'], ['x'], ['y']].map((items, i) => tagged(seen(hot, { body: { items } }), `"f${i === 2 ? 2 : 1}"`));
    expect(versionsNeverReturn([f1!, f2!, f3!], hot)).toEqual({ judged: 2, bad: [] });
    // From a cache (Age above 0): not judged.
    expect(versionsNeverReturn([a, b, { ...a2, cached: true }], hot).bad).toHaveLength(0);
  });
  it("nextPagesAccepted: a nextPage sent back with its page's limit refused with 400", () => {
    const first = seen('/api/v1/selected/snapshot?fields=minimal&limit=2', { body: { cursor: 'c', hasMore: true, nextPage: 'p2' } });
    const refused = seen('/api/v1/selected/snapshot?page=p2&limit=2', { status: 400 });
    expect(nextPagesAccepted([first, refused]).bad).toHaveLength(1);
    // Sent with another limit (a token bound to its query may refuse it), or from a page that said no more: not judged.
    expect(nextPagesAccepted([first, seen('/api/v1/selected/snapshot?page=p2', { status: 400 })]).judged).toBe(0);
    const last = seen('/api/v1/selected/snapshot?limit=2', { body: { cursor: 'c', hasMore: false, nextPage: 'p9' } });
    expect(nextPagesAccepted([last, seen('/api/v1/selected/snapshot?page=p9&limit=2', { status: 400 })]).judged).toBe(0);
    // Another fields value beside it may be refused (the lock): not judged.
    const other = seen('/api/v1/selected/snapshot?fields=default&page=p2', { status: 400 });
    expect(nextPagesAccepted([first, other]).judged).toBe(0);
    expect(nextPagesAccepted([first, seen('/api/v1/selected/snapshot?limit=2&page=p2', { body: { hasMore: false } })])).toEqual({ judged: 1, bad: [] });
  });
  it('snapshotWalkCursors: a continuation page read from its outline (longer than the recorder keeps) gives another cursor', () => {
    const first = { ...seen('/api/v1/selected/snapshot?limit=300', {}), outline: { cursor: 'c1', hasMore: true, nextPage: 'p2', items: [] } };
    const next = { ...seen('/api/v1/selected/snapshot?page=p2', {}), outline: { cursor: 'c2', hasMore: false, nextPage: null, items: [] } };
    expect(snapshotWalkCursors([first, next]).bad).toHaveLength(1);
    expect(snapshotWalkCursors([first, { ...next, outline: { ...next.outline, cursor: 'c1' } }])).toEqual({ judged: 1, bad: [] });
  });
});

describe('the run-wide rules across requests: a HEAD after its URL moved on', () => {
  it('noStaleHead: a HEAD carrying an ETag its URL had left, between two GETs that carry the newer one', () => {
    const url = '/api/v1/hot-topics';
    const date = new Date(Date.parse('2026-11-27T06:00:00Z')).toUTCString();
    const as = (s: Seen, method: string, etag: string) => ({ ...s, etag, x: { ...s.x, method, responseHeaders: { date } } });
    const a = as(seen(url, { body: {} }), 'GET', 'W/"a"');
    const b = as(seen(url, { body: {} }), 'GET', 'W/"b"');
    const head = as(seen(url, {}), 'HEAD', 'W/"a"');
    const b2 = as(seen(url, { body: {} }), 'GET', 'W/"b"');
    expect(noStaleHead([a, b, head, b2]).bad).toHaveLength(1);
    // The content came back to A (a later GET carries it): not judged; nor without a GET after the HEAD.
    const a2 = as(seen(url, { body: {} }), 'GET', 'W/"a"');
    expect(noStaleHead([a, b, head, a2]).bad).toHaveLength(0);
    expect(noStaleHead([a, b, head]).judged).toBe(0);
    // The content moved on again after the HEAD (C): A had still been left.
    expect(noStaleHead([a, b, head, as(seen(url, { body: {} }), 'GET', 'W/"c"')]).bad).toHaveLength(1);
    // A HEAD whose Date is older than the GET's before it (a cache's copy without Age): not judged.
    const old = { ...head, x: { ...head.x, responseHeaders: { date: new Date(Date.parse('2026-11-27T05:59:00Z')).toUTCString() } } };
    expect(noStaleHead([a, b, old, b2]).judged).toBe(0);
    // A HEAD with the newer ETag: nothing to judge.
    expect(noStaleHead([a, b, as(seen(url, {}), 'HEAD', 'W/"b"'), b2])).toEqual({ judged: 0, bad: [] });
  });
});

describe('the run-wide rules across requests: a 304 between two 200s of its ETag', () => {
  it('notModifiedCachedAsOk: a 304 whose Cache-Control differs from the 200s around it, where they agree', () => {
    const url = '/api/v1/dailies/latest';
    const as = (s: Seen, status: number, cacheControl: string, method = 'GET') => ({ ...s, status, etag: '"r1"', cacheControl, x: { ...s.x, method } });
    const ok = 'public, max-age=300, s-maxage=300';
    const [a, nm, b] = [as(seen(url, {}), 200, ok), as(seen(url, {}), 304, 'public, max-age=0, s-maxage=0'), as(seen(url, {}), 200, ok)];
    expect(notModifiedCachedAsOk([a, nm, b]).bad).toHaveLength(1);
    // The same directives in another order and spacing: nothing wrong.
    expect(notModifiedCachedAsOk([a, { ...nm, cacheControl: 's-maxage=300,public, max-age=300' }, b])).toEqual({ judged: 1, bad: [] });
    // A 200 on one side only, 200s that disagree (a policy that moved), a HEAD's 304, or 200s more than 5 s apart: not judged.
    expect(notModifiedCachedAsOk([a, nm]).judged).toBe(0);
    expect(notModifiedCachedAsOk([a, nm, { ...b, cacheControl: 'public, max-age=31536000, immutable' }]).judged).toBe(0);
    expect(notModifiedCachedAsOk([a, { ...nm, x: { ...nm.x, method: 'HEAD' } }, b]).judged).toBe(0);
    expect(notModifiedCachedAsOk([a, nm, { ...b, sent: a.received + 6000, received: a.received + 6010 }]).judged).toBe(0);
  });
});

describe('a view of the listing against plain listings read around it', () => {
  const now = Date.parse('2026-11-27T12:00:00Z');
  const row = (id: string, hoursAgo: number, category: string, title = id) => {
    const at = new Date(now - hoursAgo * 3_600_000).toISOString();
    return { id, title, category, publishedAt: at, discoveredAt: at };
  };
  const a = row('a', 1, 'review');
  const b = row('b', 2, 'platform');
  const c = row('c', 3, 'review');
  const d = row('d', 30, 'review');
  const judge = (
    view: Record<string, unknown>[],
    hasMore: boolean,
    bases = [
      [a, b, c, d],
      [a, b, c, d],
    ],
  ) => viewLacks({ bases, view: { rows: view, hasMore, date: now }, spec: { kind: 'category', category: 'review' }, id: 'id', category: 'category' });
  it('expects each unchanged row of its category within its reach, and names the one it lacks', () => {
    expect(judge([a, c, d], false)).toEqual({ expected: ['a', 'c', 'd'], missing: [] });
    expect(judge([a, d], false)).toEqual({ expected: ['a', 'c', 'd'], missing: ['c'] });
  });
  it('judges no row at or past its last row when it has more pages, nor a row that changed between the plain listings', () => {
    expect(judge([a, c], true)).toEqual({ expected: ['a'], missing: [] });
    expect(
      judge([d], false, [
        [a, b, c, d],
        [row('a', 1, 'review', 'a (edited)'), b, c, d],
      ]),
    ).toEqual({ expected: ['c', 'd'], missing: ['c'] });
  });
  it('reads a view that lists oldest first by its own direction: the rows older than its last one are within its reach', () => {
    expect(judge([d, c], true)).toEqual({ expected: ['d'], missing: [] });
    expect(judge([c, a], true)).toEqual({ expected: ['c', 'd'], missing: ['d'] });
  });
  it('takes the last 24 hours for window=24h, and the publication time for by=published', () => {
    const w = viewLacks({
      bases: [
        [a, b, c, d],
        [a, b, c, d],
      ],
      view: { rows: [a, b], hasMore: false, date: now },
      spec: { kind: 'window' },
      id: 'id',
    });
    expect(w).toEqual({ expected: ['a', 'b', 'c'], missing: ['c'] });
    const late = { ...b, publishedAt: new Date(now - 100 * 3_600_000).toISOString() };
    const p = viewLacks({
      bases: [
        [a, late, c],
        [a, late, c],
      ],
      view: { rows: [a, c], hasMore: true, date: now },
      spec: { kind: 'published' },
      id: 'id',
    });
    expect(p).toEqual({ expected: ['a'], missing: [] });
  });
});

describe('changesCursorMoves: an answer listing changes hands out a cursor past them', () => {
  const P = { list: 'changes', cursorParam: 'cursor', nextCursor: 'cursor', hasMore: 'hasMore' };
  const change = { op: 'upsert', changedAt: '2026-11-27T05:00:00Z', item: { id: 'a' } };
  const later = { op: 'upsert', changedAt: '2026-11-27T05:00:01Z', item: { id: 'b' } };
  it('names an answer that listed changes of two instants and returned the cursor it was asked with', () => {
    const r = changesCursorMoves([seen('/api/v1/selected/changes?cursor=c1', { body: { cursor: 'c1', changes: [change, later] } })], P);
    expect(r.judged).toBe(1);
    expect(r.bad[0]).toContain('handed out the cursor it was asked with');
  });
  it('names one that said more pages follow, and not one listing one instant again (an inclusive boundary)', () => {
    const more = seen('/api/v1/selected/changes?cursor=c1', { body: { cursor: 'c1', hasMore: true, changes: [change] } });
    const boundary = seen('/api/v1/selected/changes?cursor=c1', { body: { cursor: 'c1', hasMore: false, changes: [change] } });
    expect(changesCursorMoves([more], P).bad).toHaveLength(1);
    expect(changesCursorMoves([boundary], P)).toEqual({ judged: 1, bad: [] });
  });
  it('passes a cursor that moved, and does not judge an answer listing no change (a caught-up cursor may stay)', () => {
    const moved = seen('/api/v1/selected/changes?cursor=c1', { body: { cursor: 'c2', changes: [change] } });
    const empty = seen('/api/v1/selected/changes?cursor=c2', { body: { cursor: 'c2', changes: [] } });
    expect(changesCursorMoves([moved, empty], P)).toEqual({ judged: 1, bad: [] });
  });
  it('does not judge an answer from a cache', () => {
    const cached = { ...seen('/api/v1/selected/changes?cursor=c1', { body: { cursor: 'c1', changes: [change] } }), cached: true };
    expect(changesCursorMoves([cached], P).judged).toBe(0);
  });
});

describe('replacedVersionForCurrent: a conditional GET naming the current version is not answered with one it replaced', () => {
  const path = '/api/v1/stories/st-1';
  /** An answer of the story with ETag `etag` (a 200, or a 304 when status says so), sent with If-None-Match `asked`. */
  const answer = (etag: string, o: { status?: number; asked?: string; date?: string } = {}) => {
    const s = seen(path, { status: o.status ?? 200 });
    s.etag = etag;
    s.x.requestHeaders = o.asked ? { 'if-none-match': o.asked } : {};
    s.x.responseHeaders = { etag, ...(o.date ? { date: o.date } : {}) };
    return s;
  };
  it('names a 200 with the replaced version between two answers showing the current one', () => {
    const r = replacedVersionForCurrent([answer('"a"'), answer('"b"'), answer('"a"', { asked: '"b"' }), answer('"b"', { status: 304, asked: '"b"' })]);
    expect(r.judged).toBe(1);
    expect(r.bad).toHaveLength(1);
    expect(r.bad[0]).toContain('the version');
  });
  it('finds nothing when the answer after it shows another version (the resource moved on), or a 304 answers', () => {
    expect(replacedVersionForCurrent([answer('"a"'), answer('"b"'), answer('"a"', { asked: '"b"' }), answer('"c"')]).bad).toEqual([]);
    expect(replacedVersionForCurrent([answer('"a"'), answer('"b"'), answer('"b"', { status: 304, asked: '"b"' }), answer('"b"')])).toEqual({
      judged: 1,
      bad: [],
    });
  });
  it('does not judge a copy dated before the answer that showed the current version (a cache without Age)', () => {
    const r = replacedVersionForCurrent([
      answer('"a"', { date: 'Sun, 29 Nov 2026 04:00:00 GMT' }),
      answer('"b"', { date: 'Sun, 29 Nov 2026 04:00:05 GMT' }),
      answer('"a"', { asked: '"b"', date: 'Sun, 29 Nov 2026 04:00:00 GMT' }),
      answer('"b"', { date: 'Sun, 29 Nov 2026 04:00:06 GMT' }),
    ]);
    expect(r.bad).toEqual([]);
  });
});

describe('the run-wide rules between a conditional GET and its answer', () => {
  it('matchingEtagAnsweredFull: a 200 carrying the one ETag its If-None-Match sent', () => {
    const req = (inm: string) => ({ 'if-none-match': inm });
    const full = seen('/api/v1/stories/s1', { etag: 'W/"a"', requestHeaders: req('W/"a"') });
    const otherForm = seen('/api/v1/stories/s1', { etag: 'W/"a"', requestHeaders: req('"a"') });
    const list = seen('/api/v1/stories/s1', { etag: '"a"', requestHeaders: req('"x", "a"') });
    const fresh = seen('/api/v1/stories/s1', { etag: '"b"', requestHeaders: req('"a"') });
    const star = seen('/api/v1/stories/s1', { etag: '"a"', requestHeaders: req('*') });
    expect(matchingEtagAnsweredFull([full, otherForm, list, fresh, star])).toEqual({
      judged: 3,
      bad: [expect.stringContaining('If-None-Match W/"a" answered 200 carrying that same ETag') as string],
    });
  });
});
