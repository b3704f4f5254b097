import { describe, expect, it } from 'vitest';
import { dailySame, type Seen } from './between.js';
import type { Exchange } from './http.js';

const PATHS = { root: 'report', date: 'date', list: 'dates', entryDate: 'date' };
let clock = Date.parse('2026-11-27T06:00:00Z');
/** A GET 200 of a report by date, as the run-wide rules read it: whole (`body`) or past the recorder's bound (`digest`). */
function seen(path: string, read: { body?: unknown; digest?: string }): Seen {
  const sent = (clock += 100);
  const x = {
    method: 'GET',
    url: `https://feed.example${path}`,
    startedAt: new Date(sent).toISOString(),
    status: 200,
    requestHeaders: {},
  } as unknown as Exchange;
  return { x, path, key: path, sent, received: sent + 10, status: 200, cached: false, ...read };
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
