import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { canonical } from './canonical.js';

/** The definition: JSON.stringify with a replacer that sorts every object's keys (and leaves out `omit`'s). */
const reference = (v: unknown, omit: readonly string[] = []): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'object' && x !== null && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>)
            .filter(([k]) => !omit.includes(k))
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : x,
  );

describe('canonical', () => {
  test('writes what JSON.stringify writes with sorted keys, on any JSON value and omitted keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }), (v, omit) => {
        expect(canonical(v, omit)).toBe(reference(v, omit));
      }),
      { numRuns: 500 },
    );
  });

  test('and on values JSON.parse never gives: undefined members, -0, NaN, a Date, nested lists of them', () => {
    const d = new Date(0);
    for (const v of [{ b: undefined, a: 1 }, [undefined, () => 1], -0, Number.NaN, { z: [d, { y: Infinity, x: null }] }, 'é"\\\n'])
      expect(canonical(v)).toBe(reference(v));
    expect(canonical({ asOf: 1, b: { asOf: 2, c: 3 } }, ['asOf'])).toBe('{"b":{"c":3}}');
  });
});
