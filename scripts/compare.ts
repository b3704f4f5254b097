/**
 * `npm run compare -- [--out FILE] [--names A,B,...] RUN1 RUN2 [...]`: runs side by side, requirement by
 * requirement (a run is a report dir or its summary.json). What newly fails in the last run is highlighted.
 */
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compareHtml } from '../src/pages.js';
import type { Summary } from '../src/results.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' }, names: { type: 'string' } } });
if (positionals.length < 2) {
  console.error('usage: npm run compare -- [--out FILE] [--names A,B,...] RUN1 RUN2 [...]   (a run: a report dir or its summary.json)');
  process.exit(2);
}
const names = values.names?.split(',') ?? [];
const runs = positionals.map((p, i) => {
  const file = existsSync(p) && statSync(p).isDirectory() ? path.join(p, 'summary.json') : p;
  if (!existsSync(file)) {
    console.error(`compare: ${file} does not exist`);
    process.exit(2);
  }
  const summary = JSON.parse(readFileSync(file, 'utf8')) as Summary;
  if (!Array.isArray(summary.requirements)) {
    console.error(`compare: ${file} has no requirement verdicts (written by an older version?)`);
    process.exit(2);
  }
  return { name: names[i] ?? path.basename(path.dirname(path.resolve(file))), summary };
});
const { html, newlyFailing, fixed } = compareHtml(runs);
const out = path.resolve(values.out ?? 'reports/compare.html');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, html);
console.log(`comparison of ${runs.length} runs: ${out}`);
console.log(`newly failing in ${runs[runs.length - 1]!.name}: ${newlyFailing.length ? newlyFailing.join(', ') : 'none'}`);
console.log(`fixed: ${fixed.length ? fixed.join(', ') : 'none'}`);
