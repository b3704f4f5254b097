/**
 * `npm run bench`: a full conformance run against the embedded reference deployments, timed end to end as a user
 * runs it (a child process), then once per service. Prints wall time, requests sent and billable calls.
 */
import { runCli } from '../fixtures/run-cli.js';

const runs: { name: string; args: string[] }[] = [
  { name: 'full run, HTML report included', args: [] },
  { name: 'full run, no HTML', args: ['--no-html'] },
  { name: 'feed only, no HTML', args: ['--service', 'feed', '--no-html'] },
  { name: 'gateway only, no HTML', args: ['--service', 'gateway', '--no-html'] },
];

console.log('benchmark: npm run conformance against the embedded reference deployments\n');
console.log(
  `${'run'.padEnd(34)}${'wall'.padStart(8)}${'suite'.padStart(8)}${'checks'.padStart(8)}${'requests'.padStart(10)}${'feed'.padStart(7)}${'gateway'.padStart(9)}${'billable'.padStart(10)}  verdict`,
);
for (const r of runs) {
  const run = await runCli(r.args);
  const s = run.summary;
  if (!s) {
    console.log(`${r.name}: no summary (exit ${run.code})\n${run.stderr.slice(-1000)}`);
    process.exitCode = 1;
    continue;
  }
  const cells = [
    r.name.padEnd(34),
    `${(run.durationMs / 1000).toFixed(1)}s`.padStart(8),
    `${(s.durationMs / 1000).toFixed(1)}s`.padStart(8),
    String(s.counts.total).padStart(8),
    String(s.requests).padStart(10),
    String(s.requestsByService.feed ?? '-').padStart(7),
    String(s.requestsByService.gateway ?? '-').padStart(9),
    String(s.billableCalls).padStart(10),
    `  ${s.verdict}`,
  ];
  console.log(cells.join(''));
}
console.log('\nwall: the whole command (process start, vitest, reports); suite: from the start of checking to the summary.');
