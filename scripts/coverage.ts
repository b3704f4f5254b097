/**
 * `npm run coverage [-- --json]`: requirement → facet → check(s) → faulty variant(s), for both catalogues (src/coverage.ts),
 * with the faulty variants of fixtures/. Exits 1 when a facet has neither a check nor a stated reason, or names a check
 * that does not exist or does not cite its requirement.
 */
import { coverage, coverageText, facetProblems } from '../src/coverage.js';
import { VARIANTS } from '../fixtures/variants.js';

const rows = await coverage(VARIANTS.map((v) => ({ name: v.modifier.name, breaks: v.modifier.breaks, facets: v.modifier.facets })));
process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(rows, null, 2)}\n` : coverageText(rows));
const problems = facetProblems(rows);
if (problems.length) {
  process.stderr.write(`\n${problems.length} facet(s) fail the gate:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  process.exitCode = 1;
}
