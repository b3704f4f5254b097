/**
 * `npm run merge-reports -- --out DIR SHARD_DIR [...]`: one report from the report dirs of shards (CI jobs that
 * ran `npm run conformance -- --shard I/N`): every output of src/outputs/index.ts's list, as one run writes them.
 * Exit status is the merged run's, as for a single run. Shards run against different targets are refused unless
 * --allow-different-targets is given.
 */
import { parseArgs } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EXIT_STATUS_TEXT, mergeSummaries, USAGE_EXIT, type Summary } from '../src/verdicts.js';
import { failedOutputs, OUTPUTS, prepareReportDir, reportLines, writeReport } from '../src/outputs/index.js';
import { reportTitle } from '../src/outputs/pages.js';
import { closingLines } from '../src/outputs/console.js';

const USAGE = `Usage: npm run merge-reports -- --out DIR [options] SHARD_DIR [SHARD_DIR ...]

Merges the report dirs of shards (CI jobs that each ran \`npm run conformance -- --shard I/N\`) into one report:
${OUTPUTS.map((o) => o.name).join(', ')}.

  --out DIR                    where the merged report goes (the outputs of an earlier report there are replaced)
  --no-html                    skip the HTML report
  --allow-different-targets    merge shards run against different targets (refused by default: one shard against
                               the embedded references and one against staging are not one run)
  --help                       this text

${EXIT_STATUS_TEXT}
The merged run's, as for a single run; ${USAGE_EXIT} also for a shard dir without summary.json, or shards run against
different targets.`;

function usageError(message: string): never {
  console.error(`merge-reports: ${message}\n\n${USAGE}`);
  process.exit(USAGE_EXIT);
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
    process.exit(USAGE_EXIT);
  }
  console.error(`merge-reports: merging shards run against different targets (${what}) because of --allow-different-targets`);
}

const unwritable = prepareReportDir(out);
if (unwritable) usageError(`--out ${out} cannot be written: ${unwritable}`);
// Each shard's summary holds its verdicts and the facts they rest on: the merge joins them (verdicts.mergeSummaries)
// and writes every output of the list (src/outputs/index.ts) as one run does, the recorded ones from the shards'.
const merged = mergeSummaries(shards.map((s) => s.summary));
const written = await writeReport({
  dir: out,
  summary: merged,
  title: reportTitle(merged),
  html: !values['no-html'],
  shards: shards.map((s) => s.dir),
});
console.log(`merged ${shards.length} shard(s) into ${out}`);
for (const line of reportLines(written)) console.log(line);
for (const problem of failedOutputs(written)) console.error(`merge-reports: ${problem}`);
for (const line of closingLines(merged)) console.log(line);
process.exitCode = merged.exitCode;
