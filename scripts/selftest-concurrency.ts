/**
 * `npm run selftest:concurrency`: the self-test twice, with --concurrency 1 and with the default, then the verdict
 * of every check on every reference configuration and faulty variant compared between the two. Exit 1 when either
 * self-test fails or any verdict differs. `--compare-only` compares the verdict files the last two self-tests wrote
 * (reports/selftest-verdicts.1.json and reports/selftest-verdicts.default.json) without running them again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { 'compare-only': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  console.log('Usage: npm run selftest:concurrency [-- --compare-only]');
  process.exit(0);
}

type Verdicts = Record<string, Record<string, string>>;
const file = (c: string) => path.join(ROOT, 'reports', `selftest-verdicts.${c}.json`);

let failed = false;
if (!values['compare-only']) {
  for (const c of ['1', 'default']) {
    const started = Date.now();
    const env = { ...process.env };
    if (c === 'default') delete env.SELFTEST_CONCURRENCY;
    else env.SELFTEST_CONCURRENCY = c;
    const r = spawnSync('npx', ['vitest', 'run', '--project', 'project', 'fixtures/selftest.test.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    console.log(`self-test at concurrency ${c}: ${r.status === 0 ? 'passed' : `FAILED (exit ${r.status})`} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    if (r.status !== 0) failed = true;
  }
}

for (const c of ['1', 'default'])
  if (!existsSync(file(c))) {
    console.error(`no ${path.relative(ROOT, file(c))}: run the self-test at that concurrency first`);
    process.exit(2);
  }
const one = JSON.parse(readFileSync(file('1'), 'utf8')) as Verdicts;
const dflt = JSON.parse(readFileSync(file('default'), 'utf8')) as Verdicts;
const runs = [...new Set([...Object.keys(one), ...Object.keys(dflt)])].sort();
const differences: string[] = [];
let checks = 0;
for (const run of runs) {
  const a = one[run];
  const b = dflt[run];
  if (!a || !b) {
    differences.push(`${run}: only in the run at concurrency ${a ? '1' : 'default'}`);
    continue;
  }
  for (const id of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    checks++;
    if (a[id] !== b[id]) differences.push(`${run}: ${id} is ${a[id] ?? '(absent)'} at concurrency 1, ${b[id] ?? '(absent)'} at the default`);
  }
}
console.log(`${runs.length} runs, ${checks} check verdicts compared: ${differences.length} differ`);
for (const d of differences) console.log(`  ${d}`);
process.exit(failed || differences.length > 0 ? 1 : 0);
