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
import { judgeAll } from './judge.js';
import { startObserver, type Decision, type ObservedExchange, type ObservedRequest } from './observer.js';
import { asCheckResults, CLIENT_EXIT_CODES, decide, requirementsOf, writeClientHtml, writeClientReports, type ClientSummary } from './report.js';
import { DEFAULT_RETRY_CEILING, FEED_SCENARIOS, feedScenario, GATEWAY_SCENARIOS, gatewayScenario } from './scenarios.js';

const USAGE = `usage: npm run client-conformance -- --service feed|gateway [options] -- <command ...>

Runs <command> against an observing target and judges its requests against the client rules of the catalogue.
  --service feed|gateway   which service's client rules to judge (required)
  --report-dir DIR         where summary.json, junit.xml, report.html, exchanges.jsonl go (default reports/client-conformance)
  --timeout SECONDS        stop the command after this long (default 120)
  --retry-ceiling N        retries of one failing call beyond N count as uncapped (default ${DEFAULT_RETRY_CEILING})
  --profile NAME|FILE      deployment profile: default, vendor-names, or a JSON file merged over the default (field and header names)
  --target-url URL         observe a real deployment at URL instead of starting the reference (keys from your environment)
  --no-html                skip the Allure HTML report (html/index.html); report.html is always written

The command's environment: FEED_BASE_URL (feed), or GATEWAY_URL, GATEWAY_API_KEY, OPENAI_BASE_URL, OPENAI_API_KEY,
ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY (gateway).
Exit status: 0 conformant (every rule exercised, none failed), 1 a MUST rule failed, 2 usage, 3 the command could
not run, 4 incomplete (none failed, some not exercised).`;

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

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parse(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    if (!e.message) {
      console.log(USAGE);
      return 0;
    }
    console.error(`client-conformance: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  const started = Date.now();
  const profile = profileOf(o.profile);
  const closers: (() => Promise<void>)[] = [];
  let deployment: string;
  let env: Record<string, string> = {};
  if (o.targetUrl) {
    deployment = o.targetUrl;
    // A real deployment: the caller's keys stay in the command's environment (and are redacted from reports).
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && TARGET_VARS.test(k)) env[k] = v;
  } else if (o.service === 'feed') {
    const ref = await startFeedReference();
    closers.push(() => ref.close());
    deployment = ref.url;
  } else {
    const ref = await startGatewayReference({ profile });
    closers.push(() => ref.close());
    deployment = ref.url;
    env = keyEnv(ref.keys);
  }
  const decideFn: (req: ObservedRequest, log: ObservedExchange[]) => Decision =
    o.service === 'feed' ? feedScenario() : gatewayScenario({ retryCeiling: o.retryCeiling });
  const observer = await startObserver({ upstream: deployment, decide: decideFn, realTarget: !!o.targetUrl });
  closers.unshift(() => observer.close());
  const key = env.GATEWAY_API_KEY ?? '';
  const targetEnv: Record<string, string> =
    o.service === 'feed'
      ? { FEED_BASE_URL: observer.url }
      : {
          GATEWAY_URL: observer.url,
          GATEWAY_API_KEY: key,
          OPENAI_BASE_URL: `${observer.url}/v1`,
          OPENAI_API_KEY: key,
          ANTHROPIC_BASE_URL: observer.url,
          ANTHROPIC_API_KEY: key,
          GOOGLE_GEMINI_BASE_URL: observer.url,
          GEMINI_API_KEY: key,
        };
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!TARGET_VARS.test(k)) childEnv[k] = v;
  Object.assign(childEnv, env, targetEnv);

  const redactor = new Redactor(Object.fromEntries(Object.entries(env).filter(([k]) => /KEY|TOKEN/.test(k))));
  console.error(`client-conformance: ${o.service} ${o.targetUrl ? `deployment ${o.targetUrl}` : 'reference'} observed at ${observer.url}`);
  console.error(`client-conformance: running ${o.command.join(' ')}`);

  let interrupted: NodeJS.Signals | undefined;
  const exit = await new Promise<ClientSummary['commandExit']>((resolve) => {
    let stopped = false;
    const child = spawn(o.command[0]!, o.command.slice(1), { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => process.stderr.write(redactor.redact(d.toString())));
    child.stderr.on('data', (d: Buffer) => process.stderr.write(redactor.redact(d.toString())));
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
      resolve({ code, signal, stoppedByTimeBound: stopped });
    });
  });
  for (const c of closers) await c();

  const xs = observer.exchanges;
  const rules = exit.error
    ? []
    : judgeAll(o.service, xs, { retryCeiling: o.retryCeiling, commandStopped: exit.stoppedByTimeBound, names: profile.gateway, feed: profile.feed });
  const decided = decide(rules, { commandError: exit.error, stopped: exit.stoppedByTimeBound });
  const { verdict } = decided;
  const message = interrupted ? `interrupted by ${interrupted}: the results are partial; ${decided.message}` : decided.message;
  const count = (v: string) => rules.filter((r) => r.verdict === v).length;
  const requirements = requirementsOf(o.service, rules);
  const finished = Date.now();
  const summary: ClientSummary = {
    kind: 'client-conformance',
    verdict,
    exitCode: CLIENT_EXIT_CODES[verdict],
    message,
    complete: !exit.error && !exit.stoppedByTimeBound && !interrupted,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - started,
    service: o.service,
    target: { deployment: o.targetUrl ?? 'reference (embedded)', embedded: !o.targetUrl, observer: observer.url },
    command: o.command,
    commandExit: exit,
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
  writeClientReports(o.reportDir, summary, xs, redactor);
  if (o.html) {
    try {
      console.error(`client-conformance: HTML report ${await writeClientHtml(o.reportDir, summary, xs, redactor)}`);
    } catch (e) {
      console.error(`client-conformance: the HTML report could not be generated: ${(e as Error).message}`);
    }
  }
  for (const r of rules) console.log(redactor.redact(`${r.verdict.padEnd(14)} ${r.requirements.join(', ')}: ${r.message}`));
  for (const r of requirements.filter((q) => q.verdict === 'unverifiable')) console.log(`${'unverifiable'.padEnd(13)} ${r.id}: ${r.reason}`);
  console.log(`\n${verdict}: ${redactor.redact(message)}\nreports in ${o.reportDir} (summary.json, junit.xml, report.html, html/index.html, exchanges.jsonl)`);
  return interrupted ? (interrupted === 'SIGINT' ? 130 : 143) : summary.exitCode;
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`client-conformance: ${e.stack ?? e.message}`);
    process.exit(3);
  },
);
