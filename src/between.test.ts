import { describe, expect, it } from 'vitest';
import {
  apiLinksUnderV1,
  cursorPagesLeadOn,
  dailySame,
  moreHasNext,
  referenceLinksNameTheirIds,
  refusedCursorsStayRefused,
  smallSnapshotPagesHaveMore,
  snapshotWalkFields,
  type Seen,
} from './between.js';
import { outline, type Exchange } from './http.js';

const PATHS = { root: 'report', date: 'date', list: 'dates', entryDate: 'date' };
let clock = Date.parse('2026-11-27T06:00:00Z');
/** A GET 200 of a report by date, as the run-wide rules read it: whole (`body`) or past the recorder's bound (`digest`). */
function seen(path: string, read: { body?: unknown; digest?: string; status?: number; responseBody?: string }): Seen {
  const sent = (clock += 100);
  const status = read.status ?? 200;
  const x = {
    method: 'GET',
    url: `https://feed.example${path}`,
    startedAt: new Date(sent).toISOString(),
    status,
    requestHeaders: {},
    responseBody: read.responseBody,
  } as unknown as Exchange;
  return { x, path: path.split('?')[0]!, key: path, sent, received: sent + 10, status, cached: false, body: read.body, digest: read.digest };
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
    expect(snapshotWalkFields([minimal, mcont], { list, dropped, all: 2 })).toEqual({ judged: 1, bad: [] });
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
    expect(cursorPagesLeadOn([p1, p2], { list, id, next: 'page.nextCursor' }).bad).toHaveLength(1);
    // The row before the anchor repeated too, as an offset cursor does.
    const offset = seen('/api/v1/items?cursor=n1', { body: { items: [item('a'), item('c')], page: {} } });
    expect(cursorPagesLeadOn([p1, offset], { list, id, next: 'page.nextCursor' }).bad).toHaveLength(1);
    const ok = seen('/api/v1/items?cursor=n1', { body: { items: [item('c')], page: {} } });
    expect(cursorPagesLeadOn([p1, ok], { list, id, next: 'page.nextCursor' })).toEqual({ judged: 1, bad: [] });
    const search = seen('/api/v1/items?q=ab&cursor=n1', { body: { items: [item('b')], page: {} } });
    expect(cursorPagesLeadOn([p1, search], { list, id, next: 'page.nextCursor' }).judged).toBe(0);
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
