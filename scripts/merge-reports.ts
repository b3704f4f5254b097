/**
 * `npm run merge-reports -- --out DIR SHARD_DIR [...]`: one report from the report dirs of shards (CI jobs that
 * ran `npm run conformance -- --shard I/N`): summary.json, junit.xml, ctrf.json, exchanges, Allure results, HTML
 * and the clause matrix. Exit status is the merged run's, as for a single run. Shards run against different
 * targets are refused unless --allow-different-targets is given.
 */
import { parseArgs } from 'node:util';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mergeSummaries, type Summary } from '../src/verdicts.js';
import { writeResults } from '../src/outputs/files.js';
import { writePages } from '../src/outputs/pages.js';
import { loadCatalogue } from '../src/spec.js';

const USAGE = `Usage: npm run merge-reports -- --out DIR [options] SHARD_DIR [SHARD_DIR ...]

Merges the report dirs of shards (CI jobs that each ran \`npm run conformance -- --shard I/N\`) into one report:
summary.json, junit.xml, ctrf.json, exchanges, Allure results, the HTML report and the clause matrix.

  --out DIR                    where the merged report goes (replaced)
  --no-html                    skip the HTML report
  --allow-different-targets    merge shards run against different targets (refused by default: one shard against
                               the embedded references and one against staging are not one run)
  --help                       this text

Exit status: that of the merged run, as for a single run (0 conformant · 1 nonconformant · 3 error · 4 incomplete);
2 usage error, a shard dir without summary.json, or shards run against different targets.`;

function usageError(message: string): never {
  console.error(`merge-reports: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { out: { type: 'string' }, 'no-html': { type: 'boolean' }, 'allow-different-targets': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
} catch (e) {
  usageError((e as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.out) usageError('--out DIR is required');
if (positionals.length === 0) usageError('no shard dir given');
const out = path.resolve(values.out);
const shards = positionals.map((dir) => {
  const file = path.join(dir, 'summary.json');
  if (!existsSync(file)) usageError(`${file} does not exist`);
  try {
    return { dir, summary: JSON.parse(readFileSync(file, 'utf8')) as Summary };
  } catch (e) {
    usageError(`${file} is not a summary.json: ${(e as Error).message}`);
  }
});

// One run has one target per service. The embedded references listen on a new port in every shard, so shards that
// all ran against them count as one target.
const describeTarget = (s: Summary, k: 'feed' | 'gateway') => (s.targets.embedded ? 'the embedded reference deployments' : s.targets[k]);
const conflicts = (['feed', 'gateway'] as const)
  .map((k) => ({ k, seen: [...new Set(shards.map((s) => describeTarget(s.summary, k)).filter((t): t is string => !!t))] }))
  .filter((c) => c.seen.length > 1);
if (conflicts.length > 0) {
  const what = conflicts.map((c) => `${c.k}: ${c.seen.join(' vs ')}`).join('; ');
  if (!values['allow-different-targets']) {
    console.error(
      `merge-reports: the shards were run against different targets (${what}); merging them would report one verdict for two deployments. Give --allow-different-targets to merge anyway.`,
    );
    process.exit(2);
  }
  console.error(`merge-reports: merging shards run against different targets (${what}) because of --allow-different-targets`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'allure-results'), { recursive: true });
const exchanges: string[] = [];
for (const { dir } of shards) {
  const results = path.join(dir, 'allure-results');
  if (existsSync(results)) for (const f of readdirSync(results)) cpSync(path.join(results, f), path.join(out, 'allure-results', f));
  const ex = path.join(dir, 'exchanges.jsonl');
  if (existsSync(ex)) exchanges.push(readFileSync(ex, 'utf8'));
}
writeFileSync(path.join(out, 'exchanges.jsonl'), exchanges.join(''));

// The verdict model over every shard's checks and facts (the declared-unchecked list, known deviations, the services
// each shard was to check, --allow-incomplete, what ended a shard early): the verdict one run would have given.
const merged = mergeSummaries(
  shards.map((s) => s.summary),
  loadCatalogue().values(),
);
writeResults(out, merged);
const pages = await writePages(out, merged, { html: !values['no-html'] });
if (pages.htmlError) console.error(`merge-reports: the HTML report could not be generated: ${pages.htmlError}`);
console.log(`merged ${shards.length} shard(s) into ${out}: ${merged.verdict} — ${merged.message}`);
process.exitCode = merged.exitCode;
