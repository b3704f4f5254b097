/**
 * A JSON value as a comparable string: object keys sorted at every depth, the keys `omit` names left out wherever they
 * are. The text JSON.stringify gives the value with its keys so sorted (src/canonical.test.ts holds the two equal on
 * generated values), written directly: the run-wide checks and the recorder take it of every body a run reads, and a
 * replacer that builds a sorted copy of every object cost about 0.5 CPU-s of a zero-config feed run.
 */
export const canonical = (v: unknown, omit: readonly string[] = []): string => {
  const out = write(v, omit.length ? new Set(omit) : undefined);
  return out as string;
};

/** A key as JSON writes it; the same few names recur in every row of every body. */
const QUOTED = new Map<string, string>();
const quoted = (k: string): string => {
  let q = QUOTED.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (QUOTED.size < 10_000) QUOTED.set(k, q);
  }
  return q;
};
const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** An array index, which an object lists before its other keys (ECMA-262 OrdinaryOwnPropertyKeys). */
const isIndex = (k: string) => /^(?:0|[1-9]\d*)$/.test(k) && Number(k) < 4294967295;

/** JSON.stringify's text of `v` with sorted keys; undefined where JSON.stringify gives undefined (nothing to write). */
function write(v: unknown, omit: Set<string> | undefined): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      // A Date, a Buffer, anything with toJSON: what JSON.stringify would write of it.
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return write((v as { toJSON: () => unknown }).toJSON(), omit);
      if (Array.isArray(v)) {
        let s = '[';
        for (let i = 0; i < v.length; i++) s += `${i ? ',' : ''}${write(v[i], omit) ?? 'null'}`;
        return `${s}]`;
      }
      // An object lists its integer keys first, in numeric order, whatever order they were made in (as the sorted copy
      // JSON.stringify wrote did): the other keys sorted after them.
      const all = Object.keys(v);
      let n = 0;
      while (n < all.length && isIndex(all[n]!)) n++;
      const keys = n === 0 ? all.sort(byCode) : [...all.slice(0, n), ...all.slice(n).sort(byCode)];
      let s = '{';
      let first = true;
      for (const k of keys) {
        if (omit?.has(k)) continue;
        const w = write((v as Record<string, unknown>)[k], omit);
        if (w === undefined) continue;
        s += `${first ? '' : ','}${quoted(k)}:${w}`;
        first = false;
      }
      return `${s}}`;
    }
    case 'bigint':
      // JSON.stringify throws on a BigInt: so does this.
      return JSON.stringify(v);
    default:
      // undefined, a function, a symbol: nothing (JSON.stringify leaves such a property out, writes null in a list).
      return undefined;
  }
}
