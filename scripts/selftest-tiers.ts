/**
 * The self-test's quick tier (what `npm test` and CI run) from a full self-test's findings, within a bound of runs:
 * per service, the variants that declare facets, then (a greedy cover) the variant that shows the most not yet shown,
 * each requirement it breaks and each check it showed failing counting one, until the bound. The others are written
 * to fixtures/selftest-redundant.json with the checks each showed: the quick tier holds a check no variant it runs
 * shows to that record of the full self-test, which runs them all and shows every requirement some variant breaks.
 *
 *   npm run selftest:all                      # every variant (SELFTEST_ALL=1): writes reports/selftest-findings.json
 *   npx tsx scripts/selftest-tiers.ts [FULL_FINDINGS [MORE_FINDINGS ...]]
 *
 * The first file must come from a full self-test; more files (other runs, full or quick) are evidence of timing: a
 * variant shows a check reliably only if it showed it in every run it took part in, and a variant over a writer (the
 * living or busy references) never counts as reliable. A check that some variant shows reliably is covered once; a
 * check that only timing shows is covered by every variant that showed it (up to three), so that one run missing it
 * does not leave it unseen. A variant that declares facets always runs.
 *
 * The bound (QUICK_RUNS, 40; the environment variable of that name tries another): a feed variant's run is the whole
 * suite of both services, about 7 CPU-s with its servers; a gateway variant shares a feed variant's run
 * (fixtures/selftest.test.ts), so the gateway's bound is the feed's. CI has 10 minutes on two cores for everything
 * (install, type-check, lint, every test file, the self-test's reference configurations): at 56 runs, with every
 * requirement first, a fresh-clone CI took 10 min 22 s on this project's 2-core machine and 663 s on CI's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { fileURLToPath } from 'node:url';
import { TIMING_ONLY, VARIANTS, type Variant } from '../fixtures/variants.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const files = process.argv.length > 2 ? process.argv.slice(2).map((f) => path.resolve(f)) : [path.join(ROOT, 'reports', 'selftest-findings.json')];
const findingsFile = files[0]!;
const read = (f: string) => {
  const m = new Map<string, Set<string>>();
  for (const x of JSON.parse(readFileSync(f, 'utf8')) as { variant: string; check: string }[]) m.set(x.variant, (m.get(x.variant) ?? new Set()).add(x.check));
  return m;
};
const runs = files.map(read);
const shows = runs[0]!;
/** Whether the variant showed the check in every run it took part in. */
const reliably = (variant: string, check: string) => runs.every((r) => !r.has(variant) || r.get(variant)!.has(check));

const key = (v: Variant) => `${v.service} ${v.modifier.name}`;
const missing = VARIANTS.filter((v) => !shows.has(key(v))).map(key);
if (missing.length > 0) {
  console.error(`${findingsFile} is not from a full self-test (npm run selftest:all): no finding of\n  ${missing.join('\n  ')}`);
  process.exit(2);
}

const timed = (v: Variant) => {
  const o = v.modifier.options as { writer?: unknown; living?: unknown } | undefined;
  return Boolean(o?.writer ?? o?.living);
};
const cost = (v: Variant) => (timed(v) ? 3 : v.modifier.runsAlone || v.modifier.args || v.modifier.env ? 2 : 1);

/** Variants the quick tier never runs, whatever they show (fixtures/variants.ts, TIMING_ONLY: their catch is timing). */
const FULL_TIER_ONLY = new Set(Object.keys(TIMING_ONLY));
for (const name of FULL_TIER_ONLY)
  if (!VARIANTS.some((v) => key(v) === name)) {
    console.error(`FULL_TIER_ONLY names ${name}, which is no self-test variant`);
    process.exit(2);
  }

/** The most variants of each service the quick tier runs (see the bound above). */
const QUICK_RUNS = Number(process.env.QUICK_RUNS ?? 40);

const redundant: Record<string, string[]> = {};
for (const service of ['feed', 'gateway'] as const) {
  const candidates = VARIANTS.filter((v) => v.service === service);
  // How many runs must show each check: one where a variant shows it reliably, else every variant that showed it (three at most).
  const need = new Map<string, number>();
  const once = new Set<string>();
  const counts = (v: Variant, c: string) => !once.has(c) || (!timed(v) && reliably(key(v), c));
  for (const v of candidates) for (const c of shows.get(key(v))!) need.set(c, 0);
  for (const c of need.keys()) {
    const by = candidates.filter((v) => shows.get(key(v))!.has(c));
    if (by.some((v) => !timed(v) && reliably(key(v), c))) once.add(c);
    need.set(c, once.has(c) ? 1 : Math.min(3, by.length));
  }
  // A variant declaring the facets it breaks always runs: it is the proof that each facet's check can fail.
  const chosen = new Set<Variant>();
  const choose = (v: Variant) => {
    chosen.add(v);
    for (const c of shows.get(key(v))!) if (counts(v, c)) need.set(c, need.get(c)! - 1);
  };
  for (const v of candidates) if (v.modifier.facets?.length && !FULL_TIER_ONLY.has(key(v))) choose(v);
  const runnable = candidates.filter((v) => !FULL_TIER_ONLY.has(key(v)));
  /** How many checks not yet covered the variant shows (a check covered once counts only where it shows it reliably). */
  const checkGain = (v: Variant) => [...shows.get(key(v))!].filter((c) => need.get(c)! > 0 && counts(v, c)).length;
  /** The variant not yet chosen with the highest positive score; ties go to the one listed first (the hand-written faults come first in VARIANTS). */
  const bestBy = (score: (v: Variant) => number): Variant | undefined => {
    let best: Variant | undefined;
    let bestScore = 0;
    for (const v of runnable) {
      const s = chosen.has(v) ? 0 : score(v);
      if (s > bestScore) [best, bestScore] = [v, s];
    }
    return best;
  };
  // Within the bound, the variant that shows the most not yet shown (each requirement it breaks and each check it shows
  // failing count one), reliably caught (not over a writer) before timed ones, the cheaper first.
  const shown = new Set([...chosen].flatMap((v) => v.modifier.breaks));
  const newRequirements = (v: Variant) => v.modifier.breaks.filter((r) => !shown.has(r)).length;
  const gain = (v: Variant) => (newRequirements(v) + checkGain(v)) / cost(v);
  for (let best = bestBy(gain); best && chosen.size < QUICK_RUNS; best = bestBy(gain)) {
    choose(best);
    for (const r of best.modifier.breaks) shown.add(r);
  }
  const unseen = [...need].filter(([, n]) => n > 0).length;
  const broken = new Set(candidates.flatMap((v) => v.modifier.breaks));
  console.log(
    `${service}: ${chosen.size} of ${candidates.length} variants run in the quick tier; of ${broken.size} requirements some variant breaks, ` +
      `${[...broken].filter((r) => !shown.has(r)).length} and of ${need.size} checks shown failing in the full self-test, ${unseen} are left to its record`,
  );
  for (const v of candidates) if (!chosen.has(v)) redundant[key(v)] = [...shows.get(key(v))!].sort();
}

const out = path.join(ROOT, 'fixtures', 'selftest-redundant.json');
const text = JSON.stringify({
  about:
    'Faulty variants the quick self-test (npm test, CI) does not run, each with the checks it showed failing in the full self-test these were chosen from: the quick tier holds a check that no variant it runs shows to this record. SELFTEST_ALL=1 (npm run selftest:all) runs them all and holds every check to being seen failing. Written by scripts/selftest-tiers.ts; a variant not listed here always runs.',
  variants: redundant,
});
// In the project's format (npm run lint checks it), as prettier writes it with the project's options.
const options = (await prettier.resolveConfig(out)) ?? {};
writeFileSync(out, await prettier.format(text, { ...options, filepath: out }));
console.log(`${Object.keys(redundant).length} variants listed in ${path.relative(ROOT, out)}`);
