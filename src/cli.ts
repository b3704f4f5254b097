/**
 * `npm run conformance -- [options]`: check a deployment against the documents and write the reports.
 * Exit status: 0 no MUST failure · 1 a MUST failure · 2 usage or configuration error · 3 target unreachable,
 * unavailable, or the run could not decide (interrupted, harness error).
 */
import { accessSync, constants, readFileSync, rmSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { AllureResultsReporter } from './outputs/allure-results.js';
import { startVitest } from 'vitest/node';
import { ConfigError, USAGE, describeConfig, parseConfig, type RunConfig } from './config.js';
import { CONTEXT_VAR, EXCHANGES_FILE, type RunContext } from './context.js';
import { summarize, type Summary } from './verdicts.js';
import { ResultCollector } from './collector.js';
import { ProgressReporter } from './outputs/console.js';
import { writeResults } from './outputs/files.js';
import { generateHtml, reportPages } from './outputs/html.js';
import { matrixHtml } from './outputs/matrix.js';
import type { Exchange } from './http.js';
import { loadCatalogue, SERVICES } from './spec.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const OUTPUTS = ['summary.json', 'junit.xml', 'ctrf.json', 'html', 'allure-results', EXCHANGES_FILE];

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/**
 * vitest's fsModuleCache: the suite modules as transformed for the runner are kept on disk, keyed by each file's
 * content, and reused by the next run (about 0.4 s of CPU less per run of a service). Kept beside the suite's own
 * dependencies when that folder can be written (a clone, a local install); a copy installed where it cannot write
 * runs without it rather than failing at vitest's start.
 */
export function moduleCache(root: string = ROOT): { fsModuleCache: boolean; fsModuleCachePath?: string } {
  const dir = path.join(root, 'node_modules');
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return { fsModuleCache: false };
  }
  return { fsModuleCache: true, fsModuleCachePath: path.join(dir, '.experimental-vitest-cache') };
}

/** Can we talk HTTP to the target at all? Any HTTP answer counts; connection, DNS or TLS failures do not. */
async function reachable(url: string, timeoutMs: number): Promise<string | undefined> {
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const res = await request(`${url}/`, { method: 'GET', dispatcher: agent, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return undefined;
  } catch (e) {
    const err = e as { name?: string; code?: string | number; message?: string; cause?: { name?: string; code?: string; message?: string } };
    // The time bound (the abort signal's TimeoutError, or undici's own connect and header timeouts) is named as such.
    const timedOut =
      [err.name, err.cause?.name].includes('TimeoutError') ||
      ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].includes(String(err.cause?.code ?? err.code));
    const cause = timedOut ? `no response within ${timeoutMs / 1000} s` : (err.cause?.code ?? err.code ?? err.cause?.message ?? err.message ?? String(e));
    const hint = /CERT|SSL|TLS|SELF_SIGNED/i.test(String(cause)) ? ' (for a private CA, point NODE_EXTRA_CA_CERTS at its certificate)' : '';
    return `${url} is unreachable: ${cause}${hint}`;
  } finally {
    await agent.close();
  }
}

/**
 * Is the URL the service at all? One documented, anonymous request: the feed's items list, the gateway's model
 * listing without a credential (401 by the document). A 404 or an HTML page there means the URL is not the
 * service (a missing or extra path prefix), which is a configuration error, not 90 requirement failures. No answer
 * in time, or any other status, is left to the checks to judge.
 */
async function notTheService(service: 'feed' | 'gateway', url: string, timeoutMs: number, count: () => void): Promise<string | undefined> {
  const probe = service === 'feed' ? '/api/v1/items' : '/v1/models';
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const get = async (p: string) => {
      count();
      const res = await request(`${url}${p}`, { method: 'GET', dispatcher: agent, signal: AbortSignal.timeout(timeoutMs) });
      res.body.on('error', () => undefined);
      res.body.destroy();
      return { status: res.statusCode, type: String(res.headers['content-type'] ?? '') };
    };
    const html = (t: string) => /text\/html/i.test(t);
    const res = await get(probe);
    const type = res.type;
    if (res.status !== 404 && !html(type)) return undefined;
    // An HTML page on the feed's items list: a web site answering every path, or one HTML operation? A second
    // documented operation decides (one operation serving HTML is a defect the checks report).
    if (service === 'feed' && res.status !== 404) {
      const second = await get('/api/v1/hot-topics');
      if (second.status !== 404 && !html(second.type)) return undefined;
    }
    const what = service === 'feed' ? 'a content feed' : 'a model gateway';
    const flag = service === 'feed' ? '--feed-url / FEED_BASE_URL' : '--gateway-url / GATEWAY_URL';
    const hint =
      service === 'gateway' && /\/v1\/?$/.test(url)
        ? ' (the gateway URL is the bare root: drop the /v1 segment)'
        : ` (a missing or extra path prefix? ${probe} must be at ${url}${probe})`;
    return `this does not look like ${what}: GET ${url}${probe} answered ${res.status}${type ? ` ${type.split(';')[0]}` : ''}; check ${flag}${hint}`;
  } catch {
    return undefined;
  } finally {
    await agent.close().catch(() => undefined);
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
  const {
    html: _h,
    verbose: _v,
    profileSource: _p,
    knownDeviations: _k,
    knownDeviationsSource: _s,
    shard: _sh,
    runTimeoutMs: _r,
    unchecked: _u,
    allowIncomplete: _a,
    ...context
  } = c;
  return context;
}

/** The verdict, with how much was verified: always the last line of a run's output. */
export function verdictLine(s: Summary): string {
  const allowed = s.verdict === 'incomplete' && s.allowIncomplete ? ' (allowed by --allow-incomplete: exit 0)' : '';
  const embedded = s.targets.embedded ? ' [the EMBEDDED REFERENCE deployments were checked, not yours]' : '';
  return `verdict: ${s.verdict.toUpperCase()}${allowed} — ${s.message}${embedded}`;
}

/** What a run prints at its end: failures, what was left undecided and why, the evidence per service, the verdict. */
export function closingLines(summary: Summary, deviationsSource?: string): string[] {
  const out: string[] = [''];
  const c = summary.counts;
  const whole = (m: string) => m.trim().replace(/\n+/g, '\n      ');
  for (const f of summary.failures) out.push(`  FAIL ${f.id} [${f.requirement}]: ${whole(f.message)}`);
  for (const w of summary.warnings) out.push(`  WARNING ${w.id} [${w.requirement}] (${w.level}): ${whole(w.message)}`);
  for (const d of summary.knownDeviations) {
    if (d.status === 'seen') out.push(`  KNOWN DEVIATION ${d.id}: ${d.reason}${d.link ? ` (${d.link})` : ''}`);
    if (d.status === 'no longer seen')
      out.push(`  NO LONGER SEEN ${d.id}: every check it covers passed; remove it from ${deviationsSource ?? 'the known deviations file'}`);
    if (d.status === 'not run') out.push(`  UNUSED ENTRY ${d.id}: no check it covers ran (unknown id, or filtered out)`);
  }
  const undecidedMust = summary.undecided.filter((u) => u.level === 'MUST');
  if (undecidedMust.length) {
    out.push('  MUST requirements not verified, and what would decide them:');
    // Requirements undecided for the same reason (one missing key, say) are listed together, the reason once.
    const byReason = new Map<string, typeof undecidedMust>();
    for (const u of undecidedMust) byReason.set(u.toDecide, [...(byReason.get(u.toDecide) ?? []), u]);
    for (const [reason, us] of byReason)
      out.push(
        us.length === 1
          ? `    UNDECIDED ${us[0]!.id} (${us[0]!.verdict}): ${whole(reason)}`
          : `    UNDECIDED ${us.length} requirements (${us.map((u) => u.id).join(', ')}): ${whole(reason)}`,
      );
  }
  for (const u of summary.notExercised) out.push(`  NOT EXERCISED ${u.id} (${u.level}): ${whole(u.why)}`);
  for (const u of summary.declaredUnchecked) out.push(`  DECLARED UNCHECKED ${u.id}: ${u.reason} (${u.status})`);
  out.push(
    `  checks: ${c.passed} passed, ${c.failed} failed (MUST), ${c.knownDeviations} known deviations, ${c.warnings} warnings (SHOULD/MAY), ${c.skipped} skipped, ` +
      `${c.setupErrors} setup errors, ${c.unavailable} target unavailable, ${c.errors} harness errors; ` +
      `${summary.requests} requests sent (budget ${summary.budget}), ${summary.billableCalls} billable`,
  );
  for (const e of summary.evidence) {
    out.push(
      `  ${e.service}: ${e.verified} of ${e.must} MUST requirements verified, ${e.failed} failed, ${e.undecided} undecided` +
        `${e.knownDeviations ? `, ${e.knownDeviations} known deviations` : ''}${e.notExercised ? `, ${e.notExercised} not exercised` : ''}` +
        `${e.declaredUnchecked ? `, ${e.declaredUnchecked} declared unchecked` : ''} (${e.unverifiable} cannot be observed from outside)`,
    );
  }
  if (summary.grep) out.push(`  --grep ${summary.grep}: only the requirements of the selected checks are counted`);
  out.push(verdictLine(summary));
  return out;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config: RunConfig;
  try {
    const parsed = parseConfig(argv, env);
    if (parsed.help) {
      log(parsed.version ? VERSION : USAGE);
      return 0;
    }
    config = parsed.config;
    // --shard I/N: whole services go to shards (feed to the first, gateway to the second of two); more shards than
    // services leave the extra shards empty. Run-wide checks stay with the traffic they inspect.
    if (config.shard) {
      const [i, n] = config.shard.split('/').map(Number) as [number, number];
      config = { ...config, services: config.services.filter((s) => SERVICES.indexOf(s) % n === i - 1) };
    }
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

  try {
    for (const o of OUTPUTS) rmSync(path.join(config.reportDir, o), { recursive: true, force: true });
    mkdirSync(config.reportDir, { recursive: true });
    writeFileSync(path.join(config.reportDir, '.write-test'), '');
    rmSync(path.join(config.reportDir, '.write-test'));
  } catch (e) {
    await closeEmbedded?.();
    process.stderr.write(`conformance: configuration error: --report-dir ${config.reportDir} cannot be written: ${(e as Error).message}\n`);
    return 2;
  }
  const targets: Summary['targets'] = {
    feed: config.services.includes('feed') ? (config.feedUrl ?? null) : null,
    gateway: config.services.includes('gateway') ? (config.gatewayUrl ?? null) : null,
    embedded: config.embedded,
    ...(config.embedded ? { description: 'the embedded reference deployments of this suite, not a deployment of yours (no URL was configured)' } : {}),
  };
  const collector = new ResultCollector();
  let interrupted: string | undefined;
  let vitest: Awaited<ReturnType<typeof startVitest>> | undefined;
  let probes = 0;

  const finish = async (unreachable?: string): Promise<Summary> => {
    const exchanges = readExchanges(config.reportDir);
    const summary = summarize(collector.ordered(), {
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
      unchecked: config.unchecked,
      allowIncomplete: config.allowIncomplete,
      grep: config.grep,
      catalogue: loadCatalogue().values(),
      finishedAt: Date.now(),
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
    // The probes of every service at once, one request at a time to each origin (two services at one origin are
    // probed one after the other), as the checks' requests will be at --concurrency 1; what they found is read in
    // service order.
    const urlOf = (s: (typeof config.services)[number]) => (s === 'feed' ? config.feedUrl! : config.gatewayUrl!);
    const probe = async (s: (typeof config.services)[number]) => {
      const url = urlOf(s);
      probes++;
      const problem = await reachable(url, config.timeoutMs);
      return { problem, wrong: problem ? undefined : await notTheService(s, url, config.timeoutMs, () => probes++) };
    };
    const origins = new Set(config.services.map((s) => new URL(urlOf(s)).origin));
    const found: Awaited<ReturnType<typeof probe>>[] = [];
    if (origins.size === config.services.length) found.push(...(await Promise.all(config.services.map(probe))));
    else for (const s of config.services) found.push(await probe(s));
    for (const { problem, wrong } of found) {
      if (wrong) {
        process.stderr.write(`conformance: configuration error: ${wrong}\n`);
        rmSync(path.join(config.reportDir, 'summary.json'), { force: true });
        return 2;
      }
      if (problem) {
        const summary = await finish(problem);
        process.stderr.write(`conformance: ${problem}\n`);
        log(verdictLine(summary));
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
        // The config is imported as the command's own modules are (tsx is loaded), not bundled again on every run.
        configLoader: 'native',
        project: ['conformance'],
        experimental: moduleCache(),
        watch: false,
        passWithNoTests: true,
        // --concurrency: the checks run concurrently (the HTTP client bounds requests in flight per origin).
        sequence: { concurrent: config.concurrency > 1 },
        reporters: [collector, new AllureResultsReporter(resultsDir), config.verbose ? 'default' : new ProgressReporter(log)],
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
        const title = config.embedded ? 'Service conformance — the embedded reference deployments (not yours)' : 'Service conformance';
        const file = await generateHtml(resultsDir, htmlDir, title, summary);
        log(`HTML report: ${file}`);
      } catch (e) {
        process.stderr.write(`conformance: the HTML report could not be generated: ${(e as Error).message}\n`);
      }
    }
    mkdirSync(htmlDir, { recursive: true });
    // The facets under their requirements (loaded here, at the end: they read the suites' helpers and the descriptions).
    const facets = [...(await (await import('./facets.js')).facetsByKey()).values()];
    writeFileSync(path.join(htmlDir, 'matrix.html'), matrixHtml(summary, reportPages(htmlDir), facets));
    log(`matrix:      ${path.join(htmlDir, 'matrix.html')}`);
    log(`summary:     ${path.join(config.reportDir, 'summary.json')}`);
    log(`junit:       ${path.join(config.reportDir, 'junit.xml')}`);
    log(`ctrf:        ${path.join(config.reportDir, 'ctrf.json')}`);
    for (const line of closingLines(summary, config.knownDeviationsSource)) log(line);
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
