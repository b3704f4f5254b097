/**
 * `npm run client-conformance -- --service feed|gateway [options] -- <command ...>`
 *
 * Starts the reference deployment of the service behind an observing target (or, with --target-url, puts the
 * observer in front of a real deployment), runs the client command with the target's address and keys in its
 * environment, records every request, and judges the traffic against the client rules of the catalogue.
 * Exit status: 0 every rule exercised and none failed; 1 a MUST rule failed; 2 usage; 3 the command could not
 * run; 4 no rule failed but some were not exercised (incomplete).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startFeedReference } from '../../fixtures/feed/reference.js';
import { keyEnv, startGatewayReference } from '../../fixtures/gateway/reference.js';
import { Redactor } from '../redact.js';
import { loadProfile, SPECS_DIR, type Profile, type Service } from '../spec.js';
import { judgeRounds } from './judge.js';
import { startObserver, type Decision, type ObservedExchange, type ObservedRequest } from './observer.js';
import { failedOutputs, prepareReportDir, reportLines, warmOutputs, writeReport } from '../outputs/index.js';
import { EXIT_CODES, EXIT_STATUS_TEXT, SIGNAL_EXIT, USAGE_EXIT } from '../verdicts.js';
import { asCheckResults, clientExitCode, decide, recordClientRun, REFUSED_FOR_GOOD, reportSummary, requirementsOf, type ClientSummary } from './report.js';
import {
  DEFAULT_RETRY_CEILING,
  FEED_SCENARIOS,
  feedScenario,
  GATEWAY_SCENARIOS,
  gatewayScenario,
  nextFeedRound,
  nextGatewayRound,
  type FeedPlan,
  type GatewayRole,
} from './scenarios.js';

const USAGE = `usage: npm run client-conformance -- --service feed|gateway [options] -- <command ...>

Runs <command> against an observing target and judges its requests against the client rules of the catalogue.
  --service feed|gateway   which service's client rules to judge (required)
  --report-dir DIR         where the reports go (default reports/client-conformance): the outputs of the conformance
                           command (src/outputs/index.ts) and report.html, the page of the rules as judged
  --timeout SECONDS        stop the command after this long (default 120)
  --retry-ceiling N        retries of one failing call beyond N count as uncapped (default ${DEFAULT_RETRY_CEILING})
  --profile NAME|FILE      deployment profile: default, vendor-names, or a JSON file merged over the default (field and header names)
  --target-url URL         observe a real deployment at URL instead of starting the reference (keys from your environment)
  --no-html                skip the Allure HTML report (html/index.html); report.html is always written

The command's environment: FEED_BASE_URL (feed), or GATEWAY_URL, GATEWAY_API_KEY, OPENAI_BASE_URL, OPENAI_API_KEY,
ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY (gateway).
${EXIT_STATUS_TEXT}
Conformant: every rule that applies exercised, none failed; incomplete: none failed, some not exercised; error: the
command could not run, or it was stopped (--timeout, a signal) before it finished.`;

interface Options {
  service: Service;
  reportDir: string;
  timeoutMs: number;
  retryCeiling: number;
  profile: string;
  targetUrl?: string;
  html: boolean;
  command: string[];
}

class UsageError extends Error {}

function parse(argv: string[]): Options {
  const o: Partial<Options> & { command: string[] } = { command: [] };
  let i = 0;
  const value = (name: string) => {
    const v = argv[++i];
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${name} needs a value`);
    return v;
  };
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      o.command = argv.slice(i + 1);
      break;
    }
    if (!a.startsWith('--')) {
      o.command = argv.slice(i);
      break;
    }
    const [name, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const v = () => inline ?? value(name);
    if (name === '--service') {
      const s = v();
      if (s !== 'feed' && s !== 'gateway') throw new UsageError('--service must be feed or gateway');
      o.service = s;
    } else if (name === '--report-dir') o.reportDir = v();
    else if (name === '--timeout') {
      const n = Number(v());
      if (!(n > 0)) throw new UsageError('--timeout must be a positive number of seconds');
      o.timeoutMs = n * 1000;
    } else if (name === '--retry-ceiling') {
      const n = Number(v());
      if (!Number.isInteger(n) || n < 0) throw new UsageError('--retry-ceiling must be a whole number');
      o.retryCeiling = n;
    } else if (name === '--profile') o.profile = v();
    else if (name === '--target-url') {
      const u = v();
      if (!/^https?:\/\//.test(u)) throw new UsageError('--target-url must be an http(s) URL');
      o.targetUrl = u;
    } else if (name === '--no-html') o.html = false;
    else if (name === '--help' || name === '-h') throw new UsageError('');
    else throw new UsageError(`unknown option ${name}`);
  }
  if (!o.service) throw new UsageError('--service feed|gateway is required');
  if (o.command.length === 0) throw new UsageError('no command given (put it after --)');
  return {
    service: o.service,
    reportDir: o.reportDir ?? path.join('reports', 'client-conformance'),
    timeoutMs: o.timeoutMs ?? 120_000,
    retryCeiling: o.retryCeiling ?? DEFAULT_RETRY_CEILING,
    profile: o.profile ?? 'default',
    targetUrl: o.targetUrl,
    html: o.html ?? true,
    command: o.command,
  };
}

function profileOf(p: string): Profile {
  if (p === 'default') return loadProfile();
  const file = /^[a-z-]+$/.test(p) ? path.join(SPECS_DIR, 'profiles', `${p}.json`) : p;
  return loadProfile(JSON.parse(readFileSync(file, 'utf8')) as unknown, `profile ${p}`);
}

/** Variables a client might read its target from: the run sets its own and drops the caller's. */
const TARGET_VARS = /^(FEED_|GATEWAY_|OPENAI_|ANTHROPIC_|GEMINI_|GOOGLE_API_KEY$|GOOGLE_GEMINI_BASE_URL$|GOOGLE_GENAI_)/;

/** A deployment to observe: its URL, the keys the command gets, and what to close at the end. */
interface Deployment {
  url: string;
  env: Record<string, string>;
  closers: (() => Promise<void>)[];
}

/**
 * The command's lifecycle, the conformance command's skeleton (src/cli.ts): configuration → target (the
 * deployment behind the observer) → run (the client command) → verdict → outputs → exit status.
 */
async function main(): Promise<number> {
  const o = configure(process.argv.slice(2));
  if (typeof o === 'number') return o;
  const unwritable = prepareReportDir(o.reportDir);
  if (unwritable) {
    console.error(`client-conformance: --report-dir ${o.reportDir} cannot be written: ${unwritable}`);
    return USAGE_EXIT;
  }
  // What the outputs take long to load loads while the client runs (the HTML report's Allure process, the facets).
  warmOutputs({ html: o.html });
  const started = Date.now();
  const profile = profileOf(o.profile);
  const deployment = await startDeployment(o, profile);
  const scenario: { round: number; decide?: (req: ObservedRequest, log: ObservedExchange[]) => Decision } = { round: 0 };
  const observer = await startObserver({
    upstream: deployment.url,
    decide: (req, log) => scenario.decide!(req, log),
    realTarget: !!o.targetUrl,
    round: () => scenario.round,
  });
  deployment.closers.unshift(() => observer.close());
  const redactor = new Redactor(Object.fromEntries(Object.entries(deployment.env).filter(([k]) => /KEY|TOKEN/.test(k))));
  console.error(`client-conformance: ${o.service} ${o.targetUrl ? `deployment ${o.targetUrl}` : 'reference'} observed at ${observer.url}`);
  const { rounds, interrupted } = await runRounds(o, scenario, observer.exchanges, childEnvOf(o.service, observer.url, deployment.env), redactor);
  for (const c of deployment.closers) await c();
  const summary = summarizeClient(o, profile, observer, rounds, interrupted, started);
  await writeOutputs(o, summary, observer.exchanges, redactor);
  return interrupted ? SIGNAL_EXIT[interrupted as keyof typeof SIGNAL_EXIT] : summary.exitCode;
}

/** The options, or the exit status of --help (0) or a usage error (2). */
function configure(argv: string[]): Options | number {
  try {
    return parse(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    if (!e.message) {
      console.log(USAGE);
      return 0;
    }
    console.error(`client-conformance: ${e.message}\n\n${USAGE}`);
    return USAGE_EXIT;
  }
}

/** The deployment: a real one at --target-url (the caller's keys), or the service's reference started here. */
async function startDeployment(o: Options, profile: Profile): Promise<Deployment> {
  if (o.targetUrl) {
    // A real deployment: the caller's keys stay in the command's environment (and are redacted from reports).
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && TARGET_VARS.test(k)) env[k] = v;
    return { url: o.targetUrl, env, closers: [] };
  }
  if (o.service === 'feed') {
    const ref = await startFeedReference();
    return { url: ref.url, env: {}, closers: [() => ref.close()] };
  }
  const ref = await startGatewayReference({ profile });
  return { url: ref.url, env: keyEnv(ref.keys), closers: [() => ref.close()] };
}

/** The client command's environment: this process's, without target variables, plus the observer's address and the keys. */
function childEnvOf(service: Service, observerUrl: string, env: Record<string, string>): NodeJS.ProcessEnv {
  const key = env.GATEWAY_API_KEY ?? '';
  const targetEnv: Record<string, string> =
    service === 'feed'
      ? { FEED_BASE_URL: observerUrl }
      : {
          GATEWAY_URL: observerUrl,
          GATEWAY_API_KEY: key,
          OPENAI_BASE_URL: `${observerUrl}/v1`,
          OPENAI_API_KEY: key,
          ANTHROPIC_BASE_URL: observerUrl,
          ANTHROPIC_API_KEY: key,
          GOOGLE_GEMINI_BASE_URL: observerUrl,
          GEMINI_API_KEY: key,
        };
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!TARGET_VARS.test(k)) childEnv[k] = v;
  return Object.assign(childEnv, env, targetEnv);
}

/** One run of the client command, and why it ran. */
type Round = NonNullable<ClientSummary['rounds']>[number];

/**
 * Runs the client command, and again while the scenario needs another round to provoke a rule the client's
 * traffic makes applicable (scenarios.ts: nextFeedRound, nextGatewayRound); each round has a fresh scenario.
 */
async function runRounds(
  o: Options,
  scenario: { round: number; decide?: (req: ObservedRequest, log: ObservedExchange[]) => Decision },
  xs: ObservedExchange[],
  childEnv: NodeJS.ProcessEnv,
  redactor: Redactor,
): Promise<{ rounds: Round[]; interrupted?: NodeJS.Signals }> {
  const rounds: Round[] = [];
  let plan: { feed?: FeedPlan; gateway?: GatewayRole[]; why: string } = { why: 'the first run' };
  for (;;) {
    scenario.round = rounds.length + 1;
    scenario.decide = o.service === 'feed' ? feedScenario(plan.feed) : gatewayScenario({ retryCeiling: o.retryCeiling, roles: plan.gateway });
    console.error(`client-conformance: running ${o.command.join(' ')}${scenario.round > 1 ? ` (round ${scenario.round}: ${plan.why})` : ''}`);
    const { exit, interrupted } = await runClient(o, childEnv, redactor);
    rounds.push({ round: scenario.round, why: plan.why, exit });
    if (interrupted || exit.error) return { rounds, interrupted };
    if (o.service === 'feed') {
      const next = nextFeedRound(xs, scenario.round);
      if (!next) return { rounds };
      plan = { feed: next, why: 'no 429 or 503 reached the client (it repeated no request): this round refuses its first request' };
    } else {
      const next = nextGatewayRound(xs, scenario.round);
      if (!next) return { rounds };
      plan = {
        gateway: next,
        why: `the client retried, but made too few distinct calls to meet every scenario: this round gives its first calls ${next.join(', ')}`,
      };
    }
  }
}

/** Run the client command within its time bound, its output redacted; a signal stops it and is reported. */
async function runClient(
  o: Options,
  childEnv: NodeJS.ProcessEnv,
  redactor: Redactor,
): Promise<{ exit: ClientSummary['commandExit']; interrupted?: NodeJS.Signals }> {
  let interrupted: NodeJS.Signals | undefined;
  const exit = await new Promise<ClientSummary['commandExit']>((resolve) => {
    let stopped = false;
    const child = spawn(o.command[0]!, o.command.slice(1), { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    // The client's output goes to this command's stderr; its last lines are kept for the verdict.
    let tail = '';
    const out = (d: Buffer) => {
      const text = redactor.redact(d.toString());
      process.stderr.write(text);
      tail = (tail + text).slice(-4000);
    };
    const lastLines = () =>
      tail
        .split('\n')
        .map((l) => l.trimEnd())
        .filter(Boolean)
        .slice(-5)
        .map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l));
    child.stdout.on('data', out);
    child.stderr.on('data', out);
    const timer = setTimeout(() => {
      stopped = true;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stoppedByTimeBound: false, error: e.message });
    });
    // Interrupted: stop the command, then judge and report what was seen (marked incomplete), exit 130 / 143.
    const onSignal = (sig: NodeJS.Signals) => {
      interrupted = sig;
      child.kill('SIGTERM');
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve({ code, signal, stoppedByTimeBound: stopped, lastLines: lastLines() });
    });
  });
  return { exit, interrupted };
}

/** The client's traffic judged against the client rules: rule verdicts, requirement verdicts, the run's verdict. */
function summarizeClient(
  o: Options,
  profile: Profile,
  observer: { url: string; exchanges: ObservedExchange[] },
  rounds: Round[],
  interrupted: NodeJS.Signals | undefined,
  started: number,
): ClientSummary {
  const xs = observer.exchanges;
  // The run's exit: the first round that did not end well, else the last.
  const exit = (rounds.find((r) => r.exit.error || r.exit.code !== 0 || r.exit.signal) ?? rounds[rounds.length - 1]!).exit;
  const stopped = (n: number) => rounds.find((r) => r.round === n)?.exit.stoppedByTimeBound ?? false;
  const rules = exit.error
    ? []
    : judgeRounds(o.service, xs, { retryCeiling: o.retryCeiling, commandStopped: false, names: profile.gateway, feed: profile.feed }, stopped);
  // The scenario refusals for good that reached the client in the round whose exit is judged.
  const exitRound = rounds.find((r) => r.exit === exit)?.round ?? 1;
  const refusedForGood = [
    ...new Set(xs.filter((x) => (x.round ?? 1) === exitRound && REFUSED_FOR_GOOD.includes(x.scenario ?? '')).map((x) => x.scenario!)),
  ].join(', ');
  const complete = !exit.error && !rounds.some((r) => r.exit.stoppedByTimeBound) && !interrupted;
  const decided = decide(rules, {
    commandError: exit.error,
    stopped: rounds.some((r) => r.exit.stoppedByTimeBound),
    interrupted,
    exit: interrupted ? undefined : exit,
    refusedForGood: refusedForGood || undefined,
  });
  const count = (v: string) => rules.filter((r) => r.verdict === v).length;
  const requirements = requirementsOf(o.service, rules);
  const finished = Date.now();
  return {
    kind: 'client-conformance',
    verdict: decided.verdict,
    exitCode: clientExitCode(decided.verdict, complete),
    message: decided.message,
    complete,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - started,
    service: o.service,
    target: { deployment: o.targetUrl ?? 'reference (embedded)', embedded: !o.targetUrl, observer: observer.url },
    command: o.command,
    commandExit: exit,
    rounds,
    scenarios: (o.service === 'feed' ? FEED_SCENARIOS : GATEWAY_SCENARIOS).map((s) => ({
      ...s,
      exchanges: xs.filter((x) => x.scenario === s.name).map((x) => x.seq),
    })),
    counts: {
      passed: count('passed'),
      failed: count('failed'),
      warnings: count('warning'),
      notApplicable: count('not applicable'),
      notExercised: count('not exercised'),
      unverifiable: requirements.filter((r) => r.verdict === 'unverifiable').length,
      total: rules.length,
    },
    rules,
    requirements,
    checks: asCheckResults(rules),
    requests: xs.length,
  };
}

/**
 * What the run recorded (exchanges.jsonl, the Allure results, report.html), then every output of the list
 * (src/outputs/index.ts) from the run's summary in the verdict model's terms, as the conformance command writes
 * them; the console lines. Every output is written from the redacted record.
 */
async function writeOutputs(o: Options, summary: ClientSummary, xs: ObservedExchange[], redactor: Redactor): Promise<void> {
  const record = JSON.parse(redactor.redact(JSON.stringify(summary))) as ClientSummary;
  recordClientRun(o.reportDir, record, xs, redactor);
  const written = await writeReport({
    dir: o.reportDir,
    summary: reportSummary(record),
    record,
    title: `Client conformance: ${o.service}`,
    html: o.html,
  });
  for (const problem of failedOutputs(written)) console.error(`client-conformance: ${problem}`);
  for (const r of record.rules) console.log(`${r.verdict.padEnd(14)} ${r.requirements.join(', ')}: ${r.message}`);
  for (const r of record.requirements.filter((q) => q.verdict === 'unverifiable')) console.log(`${'unverifiable'.padEnd(13)} ${r.id}: ${r.reason}`);
  console.log(`\n${record.verdict}: ${record.message}`);
  for (const line of reportLines(written)) console.log(line);
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`client-conformance: ${e.stack ?? e.message}`);
    process.exit(EXIT_CODES.error);
  },
);
