/**
 * `npm run conformance -- [options]`: check a deployment against the documents and write the reports.
 * Exit status: 0 no MUST failure · 1 a MUST failure · 2 usage or configuration error · 3 target unreachable,
 * unavailable, or the run could not decide (interrupted, harness error).
 */
import { readFileSync, rmSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { startVitest } from 'vitest/node';
import { ConfigError, USAGE, describeConfig, parseConfig, type RunConfig } from './config.js';
import { CONTEXT_VAR, EXCHANGES_FILE, type RunContext } from './context.js';
import { ResultCollector, summarize, writeResults, type Summary } from './results.js';
import { generateHtml, reportPages } from './html.js';
import { matrixHtml } from './pages.js';
import type { Exchange } from './http.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUTPUTS = ['summary.json', 'junit.xml', 'html', 'allure-results', EXCHANGES_FILE];

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Can we talk HTTP to the target at all? Any HTTP answer counts; connection, DNS or TLS failures do not. */
async function reachable(url: string, timeoutMs: number): Promise<string | undefined> {
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const res = await request(`${url}/`, { method: 'GET', dispatcher: agent, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return undefined;
  } catch (e) {
    const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
    const cause = err.cause?.code ?? err.code ?? err.cause?.message ?? err.message ?? String(e);
    const hint = /CERT|SSL|TLS|SELF_SIGNED/i.test(String(cause)) ? ' (for a private CA, point NODE_EXTRA_CA_CERTS at its certificate)' : '';
    return `${url} is unreachable: ${cause}${hint}`;
  } finally {
    await agent.close();
  }
}

function readExchanges(reportDir: string): Exchange[] {
  const file = path.join(reportDir, EXCHANGES_FILE);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Exchange);
}

function contextOf(c: RunConfig): RunContext {
  const { html: _h, profileSource: _p, knownDeviations: _k, knownDeviationsSource: _s, shard: _sh, runTimeoutMs: _r, ...context } = c;
  return context;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config: RunConfig;
  try {
    const parsed = parseConfig(argv, env);
    if (parsed.help) {
      log(USAGE);
      return 0;
    }
    config = parsed.config;
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`conformance: configuration error: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  const startedAt = Date.now();
  let closeEmbedded: (() => Promise<void>) | undefined;
  if (config.embedded) {
    const { startEmbedded } = await import('../fixtures/embedded.js');
    const embedded = await startEmbedded({ gateway: { profile: config.profile } });
    closeEmbedded = embedded.close;
    config = { ...config, feedUrl: embedded.feedUrl, gatewayUrl: embedded.gatewayUrl };
    Object.assign(env, embedded.env);
  }
  log('Conformance run');
  log(describeConfig(config, env).replace(/^/gm, '  '));
  log();

  for (const o of OUTPUTS) rmSync(path.join(config.reportDir, o), { recursive: true, force: true });
  mkdirSync(config.reportDir, { recursive: true });
  const targets: Summary['targets'] = {
    feed: config.services.includes('feed') ? (config.feedUrl ?? null) : null,
    gateway: config.services.includes('gateway') ? (config.gatewayUrl ?? null) : null,
    embedded: config.embedded,
  };
  const collector = new ResultCollector();
  let interrupted: string | undefined;
  let vitest: Awaited<ReturnType<typeof startVitest>> | undefined;
  let probes = 0;

  const finish = async (unreachable?: string): Promise<Summary> => {
    const exchanges = readExchanges(config.reportDir);
    const summary = summarize(collector.results, {
      harnessErrors: collector.harnessErrors,
      startedAt,
      targets,
      requests: exchanges.length + probes,
      requestsByService: Object.fromEntries(config.services.map((s) => [s, exchanges.filter((x) => x.service === s).length])),
      billableCalls: exchanges.filter((x) => x.billable).length,
      budget: config.budget,
      complete: !interrupted && !unreachable,
      unreachable,
      interruption: interrupted,
      services: config.services,
      knownDeviations: config.knownDeviations,
    });
    writeResults(config.reportDir, summary);
    return summary;
  };

  /** Stop the run: write what was collected as a partial summary (marked incomplete) and exit non-zero. */
  const interrupt = (why: string, exitCode: number) => {
    if (interrupted) return;
    interrupted = why;
    process.stderr.write(`\nconformance: ${why}; writing a partial summary\n`);
    void (async () => {
      const s = await finish();
      process.stderr.write(`conformance: partial results in ${config.reportDir} (verdict ${s.verdict}, ${s.counts.total} checks finished)\n`);
      await vitest?.close().catch(() => undefined);
      await closeEmbedded?.().catch(() => undefined);
      process.exit(exitCode);
    })();
  };
  const onSignal = (signal: NodeJS.Signals) => interrupt(`${signal} received`, signal === 'SIGINT' ? 130 : 143);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const runBound = setTimeout(() => interrupt(`the run exceeded its bound of ${config.runTimeoutMs / 1000} s (--run-timeout)`, 3), config.runTimeoutMs);
  runBound.unref();

  try {
    for (const s of config.services) {
      const url = s === 'feed' ? config.feedUrl! : config.gatewayUrl!;
      probes++;
      const problem = await reachable(url, config.timeoutMs);
      if (problem) {
        const summary = await finish(problem);
        process.stderr.write(`conformance: ${problem}\n`);
        log(`verdict: ${summary.verdict} — ${summary.message}; reports in ${config.reportDir}`);
        return summary.exitCode;
      }
    }

    env[CONTEXT_VAR] = JSON.stringify(contextOf(config));
    const resultsDir = path.join(config.reportDir, 'allure-results');
    vitest = await startVitest(
      'test',
      [],
      {
        root: ROOT,
        config: path.join(ROOT, 'vitest.config.ts'),
        project: ['conformance'],
        watch: false,
        passWithNoTests: true,
        ...(config.shard ? { shard: config.shard } : {}),
        reporters: [collector, ['allure-vitest/reporter', { resultsDir, reportMatchers: false }], 'default'],
      },
      {},
      { stdout: process.stdout, stderr: process.stderr },
    );
    await vitest.close();
    vitest = undefined;
    if (interrupted) return 130;

    const summary = await finish();
    const htmlDir = path.join(config.reportDir, 'html');
    if (config.html) {
      try {
        const file = await generateHtml(resultsDir, htmlDir, 'Service conformance', summary);
        log(`HTML report: ${file}`);
      } catch (e) {
        process.stderr.write(`conformance: the HTML report could not be generated: ${(e as Error).message}\n`);
      }
    }
    mkdirSync(htmlDir, { recursive: true });
    writeFileSync(path.join(htmlDir, 'matrix.html'), matrixHtml(summary, reportPages(htmlDir)));
    log(`matrix:      ${path.join(htmlDir, 'matrix.html')}`);
    log(`summary:     ${path.join(config.reportDir, 'summary.json')}`);
    log(`junit:       ${path.join(config.reportDir, 'junit.xml')}`);
    const c = summary.counts;
    log(
      `\nverdict: ${summary.verdict.toUpperCase()} — ${summary.message}\n` +
        `  ${c.passed} passed, ${c.failed} failed (MUST), ${c.knownDeviations} known deviations, ${c.warnings} warnings (SHOULD/MAY), ${c.skipped} skipped (not configured), ` +
        `${c.setupErrors} setup errors, ${c.unavailable} target unavailable, ${c.errors} harness errors; ` +
        `${summary.requests} requests sent (budget ${summary.budget}), ${summary.billableCalls} billable`,
    );
    for (const f of summary.failures) log(`  FAIL ${f.id} [${f.requirement}]: ${f.message.split('\n')[0]}`);
    for (const d of summary.knownDeviations) {
      if (d.status === 'seen') log(`  KNOWN DEVIATION ${d.id}: ${d.reason}${d.link ? ` (${d.link})` : ''}`);
      if (d.status === 'no longer seen')
        log(`  NO LONGER SEEN ${d.id}: every check it covers passed; remove it from ${config.knownDeviationsSource ?? 'the known deviations file'}`);
      if (d.status === 'not run') log(`  UNUSED ENTRY ${d.id}: no check it covers ran (unknown id, or filtered out)`);
    }
    return summary.exitCode;
  } finally {
    clearTimeout(runBound);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!interrupted) await closeEmbedded?.();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`conformance: internal error: ${(e as Error).stack ?? String(e)}\n`);
      process.exit(3);
    },
  );
}
