/**
 * `npm run compare -- [--out FILE] [--names A,B,...] [--no-gate] RUN1 RUN2 [...]`: runs side by side, requirement
 * by requirement (a run is a report dir or its summary.json). What newly fails in the last run is highlighted, and
 * is a gate: the command exits 1 when a requirement fails in the last run that did not fail in the one before it.
 */
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compareHtml } from '../src/outputs/compare-page.js';
import type { Summary } from '../src/verdicts.js';

const USAGE = `Usage: npm run compare -- [options] RUN1 RUN2 [RUN3 ...]

Compares runs requirement by requirement (a run is a report dir or its summary.json; the last is the newest) and
writes a page with the requirements side by side, what newly fails in the last run and what it fixed.

  --out FILE        where the page goes (default reports/compare.html)
  --names A,B,...   names of the runs on the page (default: the report dirs' names)
  --no-gate         exit 0 even when requirements newly fail (report only)
  --help            this text

Exit status: 0 nothing newly failing (or --no-gate) · 1 a requirement fails in the last run that did not fail in
the run before it (a regression gate for CI) · 2 usage error or a run that cannot be read.`;

function usageError(message: string): never {
  console.error(`compare: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { out: { type: 'string' }, names: { type: 'string' }, 'no-gate': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
} catch (e) {
  usageError((e as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (positionals.length < 2) usageError('two or more runs are needed');
const names = values.names?.split(',') ?? [];
const runs = positionals.map((p, i) => {
  const file = existsSync(p) && statSync(p).isDirectory() ? path.join(p, 'summary.json') : p;
  if (!existsSync(file)) usageError(`${file} does not exist`);
  let summary: Summary;
  try {
    summary = JSON.parse(readFileSync(file, 'utf8')) as Summary;
  } catch (e) {
    usageError(`${file} is not a summary.json: ${(e as Error).message}`);
  }
  if (!Array.isArray(summary.requirements)) usageError(`${file} has no requirement verdicts (written by an older version?)`);
  return { name: names[i] ?? path.basename(path.dirname(path.resolve(file))), summary };
});
const { html, newlyFailing, fixed } = compareHtml(runs);
const out = path.resolve(values.out ?? 'reports/compare.html');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, html);
const last = runs[runs.length - 1]!.name;
console.log(`comparison of ${runs.length} runs: ${out}`);
console.log(`newly failing in ${last}: ${newlyFailing.length ? newlyFailing.join(', ') : 'none'}`);
console.log(`fixed: ${fixed.length ? fixed.join(', ') : 'none'}`);
if (newlyFailing.length > 0) {
  console.log(
    values['no-gate']
      ? `gate off (--no-gate): ${newlyFailing.length} requirement(s) newly failing, exit 0`
      : `GATE: ${newlyFailing.length} requirement(s) newly failing in ${last}: exit 1 (--no-gate to report only)`,
  );
  if (!values['no-gate']) process.exitCode = 1;
}
