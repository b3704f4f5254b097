/**
 * `npm run conformance -- [options]`: check a deployment against the documents and write the reports.
 * Exit status: src/verdicts.ts (EXIT_CODES, USAGE_EXIT, SIGNAL_EXIT), the same for client conformance and the merge.
 */
import { lstatSync, readFileSync, rmSync, existsSync, mkdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AllureResultsReporter } from './outputs/allure-results.js';
import { startVitest } from 'vitest/node';
import { ConfigError, USAGE, describeConfig, parseConfig, type RunConfig } from './config.js';
import { CONTEXT_VAR, EXCHANGES_FILE, FIRST_ITEMS_VAR, type RunContext } from './context.js';
import { applyDeviation, SIGNAL_EXIT, summarize, USAGE_EXIT, type Summary } from './verdicts.js';
import { ResultCollector } from './collector.js';
import { closingLines, ProgressReporter, verdictLine } from './outputs/console.js';
import { failedOutputs, prepareReportDir, reportLines, warmOutputs, writeReport, type Report } from './outputs/index.js';
import { reportTitle } from './outputs/pages.js';
import { publishable, publishableCheck } from './outputs/publishable.js';
import { progressChannelName, type Exchange } from './http.js';
import { loadCatalogue, SERVICES } from './spec.js';
import { firstAnswer, notTheService, reachable, schemeMismatch } from './target-probes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/**
 * vitest's fsModuleCache: the suite modules as transformed for the runner are kept on disk, keyed by each file's
 * content, and reused by the next run (a zero-config run: 3.5 s with it, 4.1 s without; 3.4 and 3.8 CPU-s; medians
 * of six alternating runs). Never inside node_modules, where two runs from one checkout broke each other's writes:
 * in the temporary directory, in a folder of this user only (not used when another user could write it or owns
 * it), one per checkout and dependency set (vitest clears its whole cache when the lockfile changes: a run of other
 * dependencies never clears it under a run writing it). Runs of one checkout share it: vitest writes each entry to
 * a file of its own and renames it into place, so a reader sees a whole entry or none.
 */
export function moduleCache(root: string = ROOT, tmp: string = tmpdir()): { fsModuleCache: boolean; fsModuleCachePath?: string } {
  const uid = process.getuid?.();
  const base = path.join(tmp, `service-conformance-${uid ?? userInfo().username}`);
  try {
    mkdirSync(base, { recursive: true, mode: 0o700 });
    const st = lstatSync(base);
    if (!st.isDirectory() || (st.mode & 0o022) !== 0 || (uid !== undefined && st.uid !== uid)) return { fsModuleCache: false };
  } catch {
    return { fsModuleCache: false };
  }
  const key = createHash('sha256').update(`${VERSION}\0${root}\0`);
  // The lockfile vitest itself looks for, from the suite's root up: a clone's, or the project that installed it.
  for (let dir = root; ; dir = path.dirname(dir)) {
    const lock = path.join(dir, 'node_modules', '.package-lock.json');
    if (existsSync(lock)) {
      key.update(readFileSync(lock));
      break;
    }
    if (path.dirname(dir) === dir) break;
  }
  return { fsModuleCache: true, fsModuleCachePath: path.join(base, `${VERSION}-${key.digest('hex').slice(0, 16)}`) };
}

/** The caches vitest keeps for a run: the module cache above; not its results cache (in node_modules/.vite, for --changed and --sequence.shuffle). */
export function runnerCaches(): { cache: false; experimental: ReturnType<typeof moduleCache> } {
  return { cache: false, experimental: moduleCache() };
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

/** A run under way: what its phases share. */
interface Run {
  config: RunConfig;
  env: NodeJS.ProcessEnv;
  startedAt: number;
  targets: Summary['targets'];
  collector: ResultCollector;
  resultsDir: string;
  /** The Allure results of the run, written in the background (flush() before reading them). */
  allure: AllureResultsReporter;
  probes: number;
  interrupted?: string;
  vitest?: Awaited<ReturnType<typeof startVitest>>;
  closeEmbedded?: () => Promise<void>;
}

/**
 * The command's lifecycle: configuration → targets → report directory → probes → the checks → outputs → exit
 * status. Each phase is a function below; an interruption (a signal, the run's time bound) writes what was collected.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const configured = configure(argv, env);
  if (typeof configured === 'number') return configured;
  const run = await startTargets(configured, env);
  log('Conformance run');
  log(describeConfig(run.config, env).replace(/^/gm, '  '));
  log();
  const unwritable = prepareReportDir(run.config.reportDir);
  if (unwritable) {
    await run.closeEmbedded?.();
    process.stderr.write(`conformance: configuration error: --report-dir ${run.config.reportDir} cannot be written: ${unwritable}\n`);
    return USAGE_EXIT;
  }
  const onSignal = (signal: NodeJS.Signals) => interrupt(run, `${signal} received`, SIGNAL_EXIT[signal as keyof typeof SIGNAL_EXIT]);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const runBound = setTimeout(
    () => interrupt(run, `the run exceeded its bound of ${run.config.runTimeoutMs / 1000} s (--run-timeout)`, 3),
    run.config.runTimeoutMs,
  );
  runBound.unref();
  try {
    const stopped = await probeTargets(run);
    if (stopped !== undefined) return stopped;
    await runChecks(run);
    if (run.interrupted) return SIGNAL_EXIT.SIGINT;
    const summary = finish(run);
    await writeOutputs(run, summary);
    return summary.exitCode;
  } finally {
    clearTimeout(runBound);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!run.interrupted) await run.closeEmbedded?.();
  }
}

/** The configuration from the arguments and the environment, or the exit status of --help, --version or an error. */
function configure(argv: string[], env: NodeJS.ProcessEnv): RunConfig | number {
  try {
    const parsed = parseConfig(argv, env);
    if (parsed.help) {
      log(parsed.version ? VERSION : USAGE);
      return 0;
    }
    for (const w of parsed.warnings) process.stderr.write(`conformance: warning: ${w}\n`);
    const config = parsed.config;
    if (!config.shard) return config;
    // --shard I/N: whole services go to shards (feed to the first, gateway to the second of two); more shards than
    // services leave the extra shards empty. Run-wide checks stay with the traffic they inspect.
    const [i, n] = config.shard.split('/').map(Number) as [number, number];
    return { ...config, services: config.services.filter((s) => SERVICES.indexOf(s) % n === i - 1) };
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`conformance: configuration error: ${e.message}\n`);
    return USAGE_EXIT;
  }
}

/** The targets: the configured URLs, or the embedded reference deployments started here when none is configured. */
async function startTargets(configured: RunConfig, env: NodeJS.ProcessEnv): Promise<Run> {
  const startedAt = Date.now();
  let config = configured;
  let closeEmbedded: (() => Promise<void>) | undefined;
  if (config.embedded) {
    const { startEmbedded } = await import('../fixtures/embedded.js');
    const embedded = await startEmbedded({ gateway: { profile: config.profile } });
    closeEmbedded = embedded.close;
    config = { ...config, feedUrl: embedded.feedUrl, gatewayUrl: embedded.gatewayUrl };
    Object.assign(env, embedded.env);
  }
  const targets: Summary['targets'] = {
    feed: config.services.includes('feed') ? (config.feedUrl ?? null) : null,
    gateway: config.services.includes('gateway') ? (config.gatewayUrl ?? null) : null,
    embedded: config.embedded,
    ...(config.embedded ? { description: 'the embedded reference deployments of this suite, not a deployment of yours (no URL was configured)' } : {}),
  };
  const resultsDir = path.join(config.reportDir, 'allure-results');
  const collector = new ResultCollector();
  // Each result is written as the HTML report shows it, with the verdict the summary will give its check (the
  // collector has it by then: it is the reporter before Allure's), so the report's process can read it at once.
  const shownAs = (id: string) => {
    const r = collector.latest(id);
    return r && applyDeviation(publishableCheck(r), config.knownDeviations);
  };
  return {
    config,
    env,
    startedAt,
    targets,
    collector,
    resultsDir,
    allure: new AllureResultsReporter(resultsDir, shownAs),
    probes: 0,
    closeEmbedded,
  };
}

/** The summary of what was collected so far (the verdict model's, src/verdicts.ts). */
function finish(run: Run, unreachable?: string): Summary {
  const { config, collector } = run;
  const exchanges = readExchanges(config.reportDir);
  // Every message as published: no stack frame, framework class or runner path (src/outputs/publishable.ts).
  const summary = summarize(collector.ordered().map(publishableCheck), {
    harnessErrors: collector.harnessErrors.map(publishable),
    startedAt: run.startedAt,
    targets: run.targets,
    requests: exchanges.length + run.probes,
    requestsByService: Object.fromEntries(config.services.map((s) => [s, exchanges.filter((x) => x.service === s).length])),
    billableCalls: exchanges.filter((x) => x.billable).length,
    budget: config.budget,
    complete: !run.interrupted && !unreachable,
    unreachable,
    interruption: run.interrupted,
    services: config.services,
    knownDeviations: config.knownDeviations,
    unchecked: config.unchecked,
    allowIncomplete: config.allowIncomplete,
    grep: config.grep,
    catalogue: loadCatalogue().values(),
    finishedAt: Date.now(),
  });
  return summary;
}

/** Stop the run: write what was collected as a partial summary (marked incomplete) and exit non-zero. */
function interrupt(run: Run, why: string, exitCode: number): void {
  if (run.interrupted) return;
  run.interrupted = why;
  process.stderr.write(`\nconformance: ${why}; writing a partial summary\n`);
  void (async () => {
    const s = finish(run);
    await run.allure.flush().catch(() => undefined);
    await writeReport(reportOf(run, s), { partial: true });
    process.stderr.write(`conformance: partial results in ${run.config.reportDir} (verdict ${s.verdict}, ${s.counts.total} checks finished)\n`);
    await run.vitest?.close().catch(() => undefined);
    await run.closeEmbedded?.().catch(() => undefined);
    process.exit(exitCode);
  })();
}

/**
 * The probes of every service at once, one request at a time to each origin (two services at one origin are
 * probed one after the other), as the checks' requests will be at --concurrency 1; what they found is read in
 * service order. The exit status when a target is unreachable or is not the service; undefined to go on.
 */
async function probeTargets(run: Run): Promise<number | undefined> {
  const { config } = run;
  const urlOf = (s: (typeof config.services)[number]) => (s === 'feed' ? config.feedUrl! : config.gatewayUrl!);
  const probe = async (s: (typeof config.services)[number]) => {
    const url = urlOf(s);
    const count = () => run.probes++;
    count();
    const problem = await reachable(url, config.timeoutMs);
    const key = s === 'gateway' ? run.env.GATEWAY_API_KEY : undefined;
    const wrong = problem ? undefined : await notTheService(s, url, config.timeoutMs, config.maxBodyBytes, count, key);
    // The wrong scheme for its port explains either (http:// to a TLS port may answer an HTML 400, as nginx does).
    const scheme = problem || wrong ? await schemeMismatch(s, url, problem ?? wrong!, config.timeoutMs, count) : undefined;
    return { problem: scheme ? undefined : problem, wrong: scheme ?? wrong };
  };
  const origins = new Set(config.services.map((s) => new URL(urlOf(s)).origin));
  const found: Awaited<ReturnType<typeof probe>>[] = [];
  if (origins.size === config.services.length) found.push(...(await Promise.all(config.services.map(probe))));
  else for (const s of config.services) found.push(await probe(s));
  for (const { problem, wrong } of found) {
    if (wrong) {
      process.stderr.write(`conformance: configuration error: ${wrong}\n`);
      rmSync(path.join(config.reportDir, 'summary.json'), { force: true });
      return USAGE_EXIT;
    }
    if (problem) {
      const summary = finish(run, problem);
      await writeReport(reportOf(run, summary), { partial: true });
      process.stderr.write(`conformance: ${problem}\n`);
      log(verdictLine(summary));
      return summary.exitCode;
    }
  }
  return undefined;
}

/** The checks: the conformance project of vitest, in this process, its reporters collecting the results. */
async function runChecks(run: Run): Promise<void> {
  const { config } = run;
  // What the outputs take long to load loads while the checks run (the HTML report's Allure process, the facets).
  warmOutputs({ html: config.html, dir: config.reportDir });
  run.env[CONTEXT_VAR] = JSON.stringify(contextOf(config));
  const first = config.feedUrl ? firstAnswer(config.feedUrl) : undefined;
  if (first) run.env[FIRST_ITEMS_VAR] = JSON.stringify(first);
  else delete run.env[FIRST_ITEMS_VAR];
  run.vitest = await startVitest(
    'test',
    [],
    {
      root: ROOT,
      config: path.join(ROOT, 'vitest.config.ts'),
      // The config is imported as the command's own modules are (tsx is loaded), not bundled again on every run.
      configLoader: 'native',
      project: ['conformance'],
      ...runnerCaches(),
      watch: false,
      passWithNoTests: true,
      // --concurrency: the checks run concurrently (the HTTP client bounds requests in flight per origin).
      sequence: { concurrent: config.concurrency > 1 },
      reporters: [run.collector, run.allure, config.verbose ? 'default' : progressReporter(config)],
    },
    {},
    { stdout: process.stdout, stderr: process.stderr },
  );
  await run.vitest.close();
  run.vitest = undefined;
  // The report's outputs read the results: every file written first (a write that failed is said, not fatal: the other
  // outputs do not read these files).
  await run.allure.flush().catch((e: unknown) => process.stderr.write(`conformance: an Allure result could not be written: ${(e as Error).message}\n`));
}

/** The console's reporter: its progress lines ask the run's HTTP client (in the checks' worker thread) what it waits for. */
function progressReporter(config: RunConfig): ProgressReporter {
  const services: Record<string, string> = {};
  for (const [service, url] of [
    ['gateway', config.gatewayUrl],
    ['feed', config.feedUrl],
  ] as const)
    if (url) services[new URL(url).origin] = service;
  return new ProgressReporter(log, { channel: progressChannelName(config.reportDir), services });
}

/** The report a run writes through the outputs list (src/outputs/index.ts). */
function reportOf(run: Run, summary: Summary): Report {
  return { dir: run.config.reportDir, summary, title: reportTitle(summary), html: run.config.html };
}

/** Every output of the list (src/outputs/index.ts), where each went, and the closing lines. */
async function writeOutputs(run: Run, summary: Summary): Promise<void> {
  const written = await writeReport(reportOf(run, summary));
  for (const line of reportLines(written)) log(line);
  for (const problem of failedOutputs(written)) process.stderr.write(`conformance: ${problem}\n`);
  for (const line of closingLines(summary, run.config.knownDeviationsSource)) log(line);
}
