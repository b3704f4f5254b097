/**
 * `npm run coverage [-- --json | --ledger-json]`: sentence → requirement → facet → check(s) → faulty variant(s), for both
 * documents (specs/<service>/ledger.json, src/ledger.ts) and both catalogues (src/coverage.ts), with the faulty variants
 * of fixtures/; then every gap of the ledgers. --json prints the requirement rows, --ledger-json the ledger rows. Exits 1
 * when a facet has neither a check nor a stated reason, or names a check that does not exist or does not cite its
 * requirement.
 */
import { coverage, coverageText, facetProblems, ledgerRows, ledgerText } from '../src/coverage.js';
import { VARIANTS } from '../fixtures/variants.js';

const rows = await coverage(VARIANTS.map((v) => ({ name: v.modifier.name, breaks: v.modifier.breaks, facets: v.modifier.facets })));
const json = process.argv.includes('--json');
const ledgerJson = process.argv.includes('--ledger-json');
process.stdout.write(
  json
    ? `${JSON.stringify(rows, null, 2)}\n`
    : ledgerJson
      ? `${JSON.stringify(ledgerRows(rows), null, 2)}\n`
      : coverageText(rows) + ledgerText(ledgerRows(rows)),
);
const problems = facetProblems(rows);
if (problems.length) {
  process.stderr.write(`\n${problems.length} facet(s) fail the gate:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  process.exitCode = 1;
}
