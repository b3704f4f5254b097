import { describe, expect, test } from 'vitest';
import { directiveValues, sMaxAge, staleForADay, weakMatch } from './caching.js';

describe('Cache-Control as the feed checks read it (RFC 9111)', () => {
  test('s-maxage is one non-negative integer of delta-seconds', () => {
    expect(sMaxAge('public, s-maxage=60')).toBe(60);
    expect(sMaxAge('public, S-MAXAGE = 60')).toBe(60);
    expect(sMaxAge('s-maxage="60"')).toBe(60);
    expect(sMaxAge('public, max-age=60')).toBeUndefined();
    expect(sMaxAge('s-maxage=60s')).toBeUndefined();
    expect(sMaxAge('s-maxage=-1')).toBeUndefined();
    expect(sMaxAge(undefined)).toBeUndefined();
  });

  test('s-maxage given twice: the same value is one freshness, two values are none (4.2.1)', () => {
    expect(sMaxAge('public, s-maxage=60, s-maxage=60')).toBe(60);
    expect(sMaxAge('public, s-maxage=60, s-maxage=0')).toBeUndefined();
    expect(directiveValues('public, s-maxage=60, no-transform, s-maxage=0', 's-maxage')).toEqual(['60', '0']);
  });

  test('what keeps a cache from asking again within a day', () => {
    expect(staleForADay('public, max-age=31536000, immutable')).toHaveLength(2);
    expect(staleForADay('public, s-maxage=300')).toEqual([]);
  });

  test('weak comparison ignores W/ on either side', () => {
    expect(weakMatch('W/"a"', '"a"')).toBe(true);
    expect(weakMatch('"a"', '"b"')).toBe(false);
  });
});
