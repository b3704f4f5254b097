/**
 * Parameter values generated from the rules in specs/ (never restated here): in-range values with their
 * boundaries, and out-of-range values just past them. Properties run with the run's --runs and --seed; a failure
 * reports fast-check's seed, path and shrunk counterexample, so `--grep <check> --seed <seed>` replays it.
 */
import fc from 'fast-check';
import { runContext } from './context.js';
import type { JsonSchema } from './spec.js';
import { AssertionViolation, PreconditionFailed } from './harness.js';
import { BudgetExhaustedError, TargetUnavailableError } from './http.js';

/** Code points used to build strings: ASCII, CJK, and astral characters (emoji) that count once each. */
const CODE_POINTS = ['a', 'Z', '7', '-', '中', '文', 'é', '🚀', '🙂', '𝄞'];

function integerBounds(s: JsonSchema): { min: number; max: number } {
  if (s.type !== 'integer' || s.minimum === undefined || s.maximum === undefined) throw new Error(`not a bounded integer schema: ${JSON.stringify(s)}`);
  return { min: s.minimum, max: s.maximum };
}

/**
 * The values at a rule's edges, always tried first (fast-check `examples`): generation then explores between them.
 * valid: both boundaries; invalid: one step past each.
 */
export function boundaries(s: JsonSchema, kind: 'valid' | 'invalid'): string[] | number[] {
  if (s.type === 'integer' && s.minimum !== undefined && s.maximum !== undefined) {
    // An empty value is no integer either (`limit=`).
    return kind === 'valid' ? [s.minimum, s.maximum] : [String(s.minimum - 1), String(s.maximum + 1), ''];
  }
  if (s.minLength !== undefined && s.maxLength !== undefined) return stringBoundaries(s.minLength, s.maxLength, !!s['x-trim'], kind);
  return [];
}

/**
 * The input forms at each edge of a length in code points: astral characters (two UTF-16 units, one code point) and
 * combining marks (two code points, one grapheme cluster), so a length counted in UTF-16 units or in grapheme
 * clusters shows at one edge or the other; where the rule trims, padding of the whitespace Unicode names beyond
 * ASCII (U+3000 ideographic space, U+00A0 no-break space, U+2003 em space), and values blank once trimmed.
 */
function stringBoundaries(min: number, max: number, trim: boolean, kind: 'valid' | 'invalid'): string[] {
  const str = (n: number, unit: string) => unit.repeat(n);
  const marks = (n: number) => 'e\u0301'.repeat(Math.floor(n / 2)) + (n % 2 ? 'e' : '');
  if (kind === 'valid') {
    const out = [str(min, 'a'), str(max, '🚀'), marks(Math.max(min, 2)), marks(max)];
    if (trim) out.push(`\u3000${str(min, 'a')}\u3000`, `\u00a0${str(max, 'a')}\u2003`);
    return out;
  }
  const out = [...(min > 1 ? [str(min - 1, 'a'), str(min - 1, '🚀')] : []), str(max + 1, 'a'), marks(max + 1)];
  if (trim && min > 0) out.push('', '   ', '\u3000\u00a0', `\u3000${str(Math.max(min - 1, 0), 'a')}\u3000`);
  return [...new Set(out)];
}

/** Integers the rule accepts, always including both boundaries. */
export function validIntegers(s: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = integerBounds(s);
  return fc.oneof(fc.constantFrom(min, max), fc.integer({ min, max }));
}

/** Values the integer rule rejects: just past each boundary, further out, and non-integers. */
export function invalidIntegers(s: JsonSchema): fc.Arbitrary<string> {
  const { min, max } = integerBounds(s);
  return fc.oneof(
    fc.constantFrom(String(min - 1), String(max + 1)),
    fc.integer({ min: max + 1, max: max + 10_000 }).map(String),
    fc.integer({ min: -10_000, max: min - 1 }).map(String),
    fc.integer({ min, max: max - 1 }).map((n) => `${n}.5`),
    fc.constantFrom('abc', 'ten', `${min}x`),
  );
}

function codePointString(min: number, max: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...CODE_POINTS), { minLength: min, maxLength: max }).map((a) => a.join(''));
}

function stringBounds(s: JsonSchema): { min: number; max: number } {
  if (s.minLength === undefined || s.maxLength === undefined) throw new Error(`not a bounded string schema: ${JSON.stringify(s)}`);
  return { min: s.minLength, max: s.maxLength };
}

const padding = fc.constantFrom('', ' ', '  ', '\t ');

/** Strings the rule accepts: lengths in code points, boundaries included; padded with whitespace when the rule trims. */
export function validStrings(s: JsonSchema): fc.Arbitrary<string> {
  const { min, max } = stringBounds(s);
  const core = fc.oneof(codePointString(min, min), codePointString(max, max), codePointString(min, max));
  if (!s['x-trim']) return core;
  return fc.tuple(padding, core, padding).map(([a, b, c]) => `${a}${b}${c}`);
}

/** Strings the rule rejects: one code point short or long; when it trims, short strings padded to look long enough. */
export function invalidStrings(s: JsonSchema): fc.Arbitrary<string> {
  const { min, max } = stringBounds(s);
  const arbs: fc.Arbitrary<string>[] = [codePointString(max + 1, max + 1)];
  if (min > 1) arbs.push(codePointString(min - 1, min - 1));
  if (s['x-trim'] && min > 1) {
    arbs.push(fc.tuple(fc.constantFrom(' ', '  ', '   '), codePointString(1, min - 1), fc.constantFrom(' ', '  ', '   ')).map(([a, b, c]) => `${a}${b}${c}`));
  }
  return fc.oneof(...arbs);
}

/** A value outside an enum rule (none of the allowed ones, nor a case variant of one). */
export function invalidEnumValues(s: JsonSchema): fc.Arbitrary<string> {
  const allowed = (s.enum ?? []).map(String);
  if (allowed.length === 0) throw new Error('not an enum schema');
  const lower = allowed.map((a) => a.toLowerCase());
  return fc
    .oneof(
      fc.constantFrom('none', 'other', 'ALL-X', '1'),
      fc.constantFrom(...allowed).map((a) => `${a}x`),
    )
    .filter((v) => !lower.includes(v.toLowerCase()));
}

const DURATION = /^(\d+)([a-z]+)$/i;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * The values next to an enum rule's allowed ones, which a server that accepts one extra value lets through:
 * the empty value; each allowed value in other case and padded with a space; for a duration (`24h`, `7d`) the
 * neighbouring amount in the same unit, the same span in another unit, double the amount, one unit and 30d; for a
 * word, its plural and the word cut short, and for an enum of words any, none and both. Always tried
 * in full (not sampled), and never one of the allowed values.
 */
export function nearMissEnumValues(s: JsonSchema): string[] {
  const allowed = (s.enum ?? []).map(String);
  if (allowed.length === 0) throw new Error('not an enum schema');
  const out: string[] = [''];
  allowed.forEach((v, i) => {
    const upper = v.toUpperCase();
    out.push(upper !== v ? upper : v.toLowerCase(), i % 2 === 0 ? ` ${v}` : `${v} `);
    const d = DURATION.exec(v);
    if (d && UNIT_MS[d[2]!.toLowerCase()]) {
      const [n, unit] = [Number(d[1]), d[2]!.toLowerCase()];
      out.push(`${n + 1}${unit}`);
      const span = n * UNIT_MS[unit]!;
      const other = Object.entries(UNIT_MS).find(([u, ms]) => u !== unit && u !== 'm' && span % ms === 0 && allowed.every((a) => a !== `${span / ms}${u}`));
      out.push(other ? `${span / other[1]}${other[0]}` : `${Math.max(1, n - 1)}${unit}`);
      // Other durations of the same shape: double, one unit, a month.
      out.push(`${n * 2}${unit}`, `1${unit}`, '30d');
    } else {
      // Other words of the same shape: the plural, the word cut short.
      out.push(`${v}s`, v.slice(0, -1));
    }
  });
  // For an enum of words, the words a server might take as one more choice: any, none, both.
  if (!allowed.some((v) => DURATION.test(v))) out.push('any', 'none', 'both');
  return [...new Set(out)].filter((v) => !allowed.includes(v));
}

/**
 * Check `predicate` for generated values. The predicate asserts with expect (or throws a verdict error); the
 * first failure ends the check with fast-check's report: seed, path and the shrunk counterexample.
 */
export async function property<T>(arb: fc.Arbitrary<T>, predicate: (v: T) => Promise<void>, o: { runs?: number; examples?: T[] } = {}): Promise<void> {
  const ctx = runContext();
  let passthrough: unknown;
  // Generators repeat values (boundaries above all); each distinct value costs one request, once.
  const checked = new Set<string>();
  // The examples (a rule's boundaries) are always tried, whatever --runs says: fast-check would count them inside
  // numRuns, so --runs 1 would drop all but the first.
  for (const e of o.examples ?? []) {
    const key = fc.stringify(e);
    if (checked.has(key)) continue;
    try {
      await predicate(e);
    } catch (err) {
      if (err instanceof TargetUnavailableError || err instanceof BudgetExhaustedError || err instanceof PreconditionFailed) throw err;
      const cause = err instanceof Error ? err.message : String(err);
      throw new AssertionViolation(`${cause.slice(0, 600)} (the boundary value ${brief(e)}, always tried)`);
    }
    checked.add(key);
  }
  const result = await fc.check(
    fc.asyncProperty(arb, async (v) => {
      if (passthrough) return true;
      const key = fc.stringify(v);
      if (checked.has(key)) return true;
      try {
        await predicate(v);
        checked.add(key);
      } catch (e) {
        // Not a counterexample: the target or the data stopped the property; end it with that verdict.
        if (e instanceof TargetUnavailableError || e instanceof BudgetExhaustedError || e instanceof PreconditionFailed) {
          passthrough = e;
          return true;
        }
        throw e;
      }
      return true;
    }),
    { numRuns: Math.min(o.runs ?? ctx.runs, ctx.runs), seed: ctx.seed, endOnFailure: !ctx.embedded },
  );
  if (passthrough) throw passthrough;
  if (!result.failed) return;
  const cause = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
  throw new AssertionViolation(
    `${cause.slice(0, 600)} (a counterexample fast-check found: ${brief(result.counterexample?.[0])}; seed ${result.seed}, path "${result.counterexamplePath}"; replay: --grep <this check> --seed=${result.seed})`,
  );
}

/** A value as shown in a failure: long strings cut, with their length in code points. */
function brief(value: unknown): string {
  const shown = fc.stringify(value);
  return shown.length > 120 ? `${[...shown].slice(0, 40).join('')}…" (${typeof value === 'string' ? [...value].length : shown.length} code points)` : shown;
}

/** A request body that breaks its documented payload, and how. */
export interface BrokenBody {
  label: string;
  body: unknown;
}

/** A value of another JSON type than `type` (what a field of that type must not be). */
function wrongTypeValues(type: string): unknown[] {
  // A value of each other JSON kind an implementation may coerce or let through: a string where a structure is due
  // (wrapped into one element, say), a structure where a scalar is due, null (read as "absent"), a number as text.
  switch (type) {
    case 'string':
      return [42, null, {}];
    case 'integer':
      return ['16', 1.5, null];
    case 'number':
      return ['16', null];
    case 'array':
      return ['text', {}, null];
    case 'object':
      return ['text', [], null];
    case 'boolean':
      return ['true', null];
    default:
      return [];
  }
}

/**
 * Every way to break a valid request body against its schema, one defect each: a required field left out, or a field
 * given a value of another type than the one the schema states, at every depth (the first item of each array stands
 * for all). Only what the schema says: a field without a stated type is only ever left out, never retyped.
 */
export function brokenBodies(schema: JsonSchema, valid: unknown): { fixed: BrokenBody[]; generated: fc.Arbitrary<BrokenBody> } {
  const out: BrokenBody[] = [];
  const targets: { at: (string | number)[]; type: string }[] = [];
  const set = (root: unknown, at: (string | number)[], f: (parent: Record<string | number, unknown>, key: string | number) => void): unknown => {
    const copy = structuredClone(root);
    let cur = copy as Record<string | number, unknown>;
    for (const k of at.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
    f(cur, at[at.length - 1]!);
    return copy;
  };
  const walk = (s: JsonSchema, value: unknown, at: (string | number)[]) => {
    const name = at.length
      ? at
          .map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`))
          .join('')
          .replace(/^\./, '')
      : 'the body';
    if (at.length && typeof s.type === 'string') {
      const type = s.type;
      targets.push({ at, type });
      // An array's own first item, not wrapped: a gateway that wraps a lone item into an array (a coercion) serves it.
      const wrong = wrongTypeValues(type).map((w) =>
        type === 'array' && jsonTypeIs(w, 'object') && Array.isArray(value) && jsonTypeIs(value[0], 'object') ? value[0] : w,
      );
      for (const w of wrong)
        out.push({ label: `${name} as ${JSON.stringify(w)} (not ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type})`, body: set(valid, at, (p, k) => (p[k] = w)) });
    }
    if (s.type === 'object' || s.properties) {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      for (const r of (s.required ?? []) as string[]) {
        if (value && typeof value === 'object' && r in (value as object))
          out.push({ label: `without ${at.length ? `${name}.` : ''}${r}`, body: set(valid, [...at, r], (p, k) => delete p[k]) });
      }
      for (const [k, ps] of Object.entries(props))
        if (value && typeof value === 'object' && k in (value as object)) walk(ps, (value as Record<string, unknown>)[k], [...at, k]);
    }
    if (s.type === 'array' && s.items && Array.isArray(value) && value.length > 0) walk(s.items as JsonSchema, value[0], [...at, 0]);
  };
  walk(schema, valid, []);
  // Beyond the fixed ones: any JSON value of another type, at any typed field.
  const generated = fc.constantFrom(...targets).chain((t) =>
    fc
      .jsonValue({ maxDepth: 2 })
      .filter((v) => !jsonTypeIs(v, t.type))
      .map((v) => ({ label: `${t.at.join('.')} as ${JSON.stringify(v).slice(0, 60)} (not ${t.type})`, body: set(valid, t.at, (p, k) => (p[k] = v)) })),
  );
  return { fixed: out, generated };
}

function jsonTypeIs(v: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    default:
      return true;
  }
}
