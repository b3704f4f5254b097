/**
 * `npm run bench`: a full conformance run against the embedded reference deployments, timed end to end as a user
 * runs it (a child process), then once per service, then against each imperfect reference configuration (outage,
 * rate limit, busy writer, behind a proxy). Prints wall time, requests sent and billable calls.
 *
 * `npm run bench -- --latency 50` (several: `--latency 50,150` or `--latency 50 --latency 150`): the same check of
 * both reference deployments, each behind a loopback proxy that holds every request that long before forwarding it
 * (scripts/latency-proxy.ts), once with `--concurrency 1` and once with the default; per row the proxies' peak of
 * requests in flight per origin.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runCli, type CliRun } from '../fixtures/run-cli.js';
import { randomInt } from 'node:crypto';
import { startFeedReference } from '../fixtures/feed/reference.js';
import { keyEnv, startGatewayReference } from '../fixtures/gateway/reference.js';
import { startLatencyProxy, type LatencyProxyStats } from './latency-proxy.js';
import { REFERENCE_CONFIGURATIONS, type ReferenceConfiguration } from '../fixtures/variants.js';

const HELP = `npm run bench [-- options]

  (no option)        full run with and without the HTML report, then each service alone, against the embedded
                     reference deployments; then the full run and the feed alone against each imperfect reference
                     configuration (outage, rate-limit, busy-writer, proxy)
  --latency MS       both reference deployments behind a loopback proxy holding each request MS milliseconds
                     before forwarding it; full run (no HTML) with --concurrency 1, then with the default.
                     Repeat it or give a list: --latency 50,150
  --help             this text
`;

let values: { latency?: string[]; help?: boolean };
try {
  ({ values } = parseArgs({ options: { latency: { type: 'string', multiple: true }, help: { type: 'boolean', default: false } } }));
} catch (e) {
  console.error(`bench: ${(e as Error).message}\n\n${HELP}`);
  process.exit(2);
}
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const latencies = (values.latency ?? []).flatMap((v) => v.split(',')).map((v) => v.trim());
for (const v of latencies) {
  if (!/^\d+$/.test(v) || Number(v) > 60_000) {
    console.error(`bench: --latency takes whole milliseconds 0..60000, got ${JSON.stringify(v)}`);
    process.exit(2);
  }
}

/** The reference configurations a live service resembles: each refuses, moves or wraps what the suite reads. */
const IMPERFECT = ['outage', 'rate-limit', 'busy-writer', 'proxy'];

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
/** Time an origin had requests in flight, and how many on average while it had. */
const busy = (p: LatencyProxyStats) => `${secs(p.busyMs)} at ${p.busyMs > 0 ? (p.inFlightMs / p.busyMs).toFixed(1) : '0'} on average`;

if (latencies.length === 0) await loopbackRows();
else for (const ms of latencies.map(Number)) await latencyTable(ms);

async function loopbackRows() {
  const runs: { name: string; args: string[] }[] = [
    { name: 'full run, HTML report included', args: [] },
    { name: 'full run, no HTML', args: ['--no-html'] },
    { name: 'feed only, no HTML', args: ['--service', 'feed', '--no-html'] },
    { name: 'gateway only, no HTML', args: ['--service', 'gateway', '--no-html'] },
  ];

  console.log('benchmark: npm run conformance against the embedded reference deployments\n');
  console.log(
    `${'run'.padEnd(36)}${'wall'.padStart(8)}${'suite'.padStart(8)}${'checks'.padStart(8)}${'requests'.padStart(10)}${'feed'.padStart(7)}${'gateway'.padStart(9)}${'billable'.padStart(10)}  verdict`,
  );
  const rows: { name: string; run: () => Promise<CliRun> }[] = runs.map((r) => ({ name: r.name, run: () => runCli(r.args) }));
  // The imperfect reference configurations (a live service's outages, rate limits, writes and proxy), each beside
  // the plain run: what a rude target costs in time and requests (as remote targets: 15 runs per property).
  for (const conf of REFERENCE_CONFIGURATIONS.filter((c) => IMPERFECT.includes(c.id))) {
    rows.push({ name: `full run, ${conf.id}, no HTML`, run: () => throughConfiguration(conf, ['--no-html']) });
    rows.push({ name: `feed only, ${conf.id}, no HTML`, run: () => throughConfiguration(conf, ['--service', 'feed', '--no-html']) });
  }
  for (const r of rows) {
    const run = await r.run();
    // The summary is read: the run's report directory goes (a bench left a few in the temporary directory each time).
    rmSync(run.reportDir, { recursive: true, force: true });
    const s = run.summary;
    if (!s) {
      console.log(`${r.name}: no summary (exit ${run.code})\n${run.stderr.slice(-1000)}`);
      process.exitCode = 1;
      continue;
    }
    const cells = [
      r.name.padEnd(36),
      secs(run.durationMs).padStart(8),
      secs(s.durationMs).padStart(8),
      String(s.counts.total).padStart(8),
      String(s.requests).padStart(10),
      String(s.requestsByService.feed ?? '-').padStart(7),
      String(s.requestsByService.gateway ?? '-').padStart(9),
      String(s.billableCalls).padStart(10),
      `  ${s.verdict}`,
    ];
    console.log(cells.join(''));
  }
  console.log(
    '\nwall: the whole command (process start, vitest, reports); suite: from the start of checking to the summary. The embedded runs take 50 runs per property, the runs against an imperfect configuration 15, as against any remote target.',
  );
}

/**
 * One run against fresh deployments of a reference configuration, as a run against a remote deployment goes (its
 * URLs given, so 15 runs per property): these configurations stand for live services.
 */
async function throughConfiguration(conf: ReferenceConfiguration, args: string[]): Promise<CliRun> {
  const feed = await startFeedReference({ options: conf.feed });
  const gateway = await startGatewayReference({ options: conf.gateway });
  try {
    return await runCli(['--feed-url', feed.url, '--gateway-url', gateway.url, ...args], {
      env: { ...keyEnv(gateway.keys), ...conf.env },
      reportDir: mkdtempSync(path.join(tmpdir(), `bench-${conf.id}-`)),
      timeoutMs: 1_200_000,
    });
  } finally {
    await Promise.all([feed.close(), gateway.close()]);
  }
}

interface LatencyRow {
  name: string;
  run: CliRun;
  feed: LatencyProxyStats;
  gateway: LatencyProxyStats;
}

/**
 * One full run through fresh reference deployments (a gateway's key states and rate windows start clean) and fresh
 * proxies (their counts are this run's). `--runs 50` as in the zero-config run (a URL alone would mean 15).
 */
async function throughProxies(delayMs: number, args: string[]): Promise<Omit<LatencyRow, 'name'>> {
  const feed = await startFeedReference();
  const gateway = await startGatewayReference();
  const feedProxy = await startLatencyProxy({ upstream: feed.url, delayMs });
  const gatewayProxy = await startLatencyProxy({ upstream: gateway.url, delayMs });
  try {
    const run = await runCli(['--feed-url', feedProxy.url, '--gateway-url', gatewayProxy.url, '--no-html', '--runs', '50', ...args], {
      env: keyEnv(gateway.keys),
      reportDir: mkdtempSync(path.join(tmpdir(), 'bench-latency-')),
      timeoutMs: 1_200_000,
    });
    rmSync(run.reportDir, { recursive: true, force: true });
    return { run, feed: { ...feedProxy.stats }, gateway: { ...gatewayProxy.stats } };
  } finally {
    await Promise.all([feedProxy.close(), gatewayProxy.close()]);
    await Promise.all([feed.close(), gateway.close()]);
  }
}

async function latencyTable(delayMs: number) {
  console.log(`\nbenchmark: both reference deployments behind a loopback proxy holding each request ${delayMs} ms (full run, no HTML, 50 runs per property)\n`);
  // One fast-check seed for both runs: the values the properties generate, and so the requests they send, are the
  // same; what differs is the concurrency alone.
  const seed = randomInt(2 ** 31);
  console.log(`fast-check seed ${seed} for both runs\n`);
  const modes = [
    { name: 'concurrency 1', args: ['--concurrency', '1', `--seed=${seed}`] },
    { name: 'default concurrency', args: [`--seed=${seed}`] },
  ];
  const rows: LatencyRow[] = [];
  for (const m of modes) rows.push({ name: m.name, ...(await throughProxies(delayMs, m.args)) });

  console.log(
    [
      'run'.padEnd(22),
      'wall'.padStart(8),
      'suite'.padStart(8),
      'checks'.padStart(8),
      'requests'.padStart(10),
      'feed'.padStart(7),
      'gateway'.padStart(9),
      'peak feed'.padStart(11),
      'peak gw'.padStart(9),
      'billable'.padStart(10),
      '  verdict',
    ].join(''),
  );
  for (const r of rows) {
    const s = r.run.summary;
    if (!s) {
      console.log(`${r.name.padEnd(22)}no summary (exit ${r.run.code})\n${r.run.stderr.slice(-1000)}`);
      process.exitCode = 1;
      continue;
    }
    console.log(
      [
        r.name.padEnd(22),
        secs(r.run.durationMs).padStart(8),
        secs(s.durationMs).padStart(8),
        String(s.counts.total).padStart(8),
        String(s.requests).padStart(10),
        String(s.requestsByService.feed ?? '-').padStart(7),
        String(s.requestsByService.gateway ?? '-').padStart(9),
        String(r.feed.peakInFlight).padStart(11),
        String(r.gateway.peakInFlight).padStart(9),
        String(s.billableCalls).padStart(10),
        `  ${s.verdict}`,
      ].join(''),
    );
  }
  console.log(
    `\nwall: the whole command; suite: from the start of checking to the summary; requests: as the suite counted them; peak: most requests in flight at once at each proxy (arrival to response end).`,
  );
  for (const r of rows) {
    console.log(
      `${r.name}: the proxies saw ${r.feed.requests} feed and ${r.gateway.requests} gateway requests (${r.gateway.upgrades} WebSocket upgrades), shortest hold ${r.feed.minHeldMs?.toFixed(1) ?? '-'} / ${r.gateway.minHeldMs?.toFixed(1) ?? '-'} ms, ${r.feed.upstreamErrors + r.gateway.upstreamErrors} not forwarded; busy (at least one request in flight) feed ${busy(r.feed)}, gateway ${busy(r.gateway)}`,
    );
  }
  const [one, dflt] = rows.map((r) => r.run.summary);
  if (one && dflt && one.requests > 0) {
    const diff = ((dflt.requests - one.requests) / one.requests) * 100;
    console.log(`requests, default vs concurrency 1: ${diff >= 0 ? '+' : ''}${diff.toFixed(1)}%`);
  }
}
