/** A JSON value as a comparable string: object keys sorted at every depth, the keys `omit` names left out wherever they are. */
export const canonical = (v: unknown, omit: readonly string[] = []): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'object' && x !== null && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>)
            .filter(([k]) => !omit.includes(k))
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : x,
  );
