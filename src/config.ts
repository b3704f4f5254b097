/**
 * Run configuration: CLI flags > environment > config file (--config) > defaults.
 * Secrets come only from the environment; a config file that holds one is refused.
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICES, formatAjvErrors, loadCatalogue, loadProfile, schemaFileValidator, type Profile, type Service } from './spec.js';
import type { DeclaredUnchecked, KnownDeviation } from './verdicts.js';

export type { KnownDeviation } from './verdicts.js';
import { mask } from './redact.js';

/** Environment variables that hold credentials. Never read from files, never printed, redacted everywhere. */
export const SECRET_VARS = [
  'GATEWAY_API_KEY',
  'GATEWAY_EXPIRED_KEY',
  'GATEWAY_DISABLED_KEY',
  'GATEWAY_EXHAUSTED_KEY',
  'GATEWAY_IP_DENIED_KEY',
  'GATEWAY_ACCOUNT_DISABLED_KEY',
  'GATEWAY_RATE_LIMITED_KEY',
  'GATEWAY_MANAGEMENT_TOKEN',
] as const;
export type SecretVar = (typeof SECRET_VARS)[number];

/**
 * Every environment variable of the suite's prefixes (FEED_, GATEWAY_, CONFORMANCE_) it reads, and what setting one
 * says: `url` and `deployment` describe a deployment (a run that sets one but no URL is a configuration error, never
 * the embedded references); `run` says how a run goes, against any target (a zero-config run may set it);
 * `internal` is the command's own (set by it or the project's tests), never a user's.
 */
export const VARIABLES: Record<string, 'url' | 'deployment' | 'run' | 'internal'> = {
  FEED_BASE_URL: 'url',
  GATEWAY_URL: 'url',
  ...Object.fromEntries(SECRET_VARS.map((v) => [v, 'deployment' as const])),
  GATEWAY_MODEL: 'deployment',
  GATEWAY_REALTIME_PATH: 'deployment',
  FEED_MERGED_STORY_ID: 'deployment',
  CONFORMANCE_CONFIG: 'deployment',
  CONFORMANCE_CONCURRENCY: 'run',
  CONFORMANCE_PROBE_RATE_LIMIT: 'run',
  CONFORMANCE_CONTEXT: 'internal',
  CONFORMANCE_CANARY_KEY: 'internal',
  CONFORMANCE_TEST_SCRATCH: 'internal',
};
const PREFIXED = /^(FEED|GATEWAY|CONFORMANCE)_/;

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * The variable a misspelt one most likely meant: of the same prefix when there is one, sharing the most words
 * (GATEWAY_BASE_URL → GATEWAY_URL, GATEWAY_KEY → GATEWAY_API_KEY), then the fewest edits.
 */
export function closestVariable(name: string): string | undefined {
  const words = (v: string) => v.split('_').slice(1);
  const known = Object.keys(VARIABLES).filter((v) => VARIABLES[v] !== 'internal');
  const samePrefix = known.filter((v) => v.split('_')[0] === name.split('_')[0]);
  const score = (v: string) => ({ shared: words(v).filter((w) => words(name).includes(w)).length, edits: editDistance(name, v) });
  const best = (samePrefix.length ? samePrefix : known).map((v) => ({ v, ...score(v) })).sort((a, b) => b.shared - a.shared || a.edits - b.edits)[0];
  return best && (best.shared > 0 || best.edits <= Math.max(3, name.length / 3)) ? best.v : undefined;
}

/** The FEED_/GATEWAY_/CONFORMANCE_ variables set that the suite does not read, each with the one it likely meant. */
function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((k) => PREFIXED.test(k) && env[k] !== undefined && !(k in VARIABLES))
    .map((k) => {
      const meant = closestVariable(k);
      return `${k} is not a variable this suite reads${
        meant
          ? `: did you mean ${meant}?`
          : ` (it reads ${Object.keys(VARIABLES)
              .filter((v) => VARIABLES[v] !== 'internal')
              .join(', ')})`
      }`;
    });
}

export interface RunConfig {
  services: Service[];
  feedUrl?: string;
  gatewayUrl?: string;
  /** True when no URL was given and the embedded reference deployments serve as the target. */
  embedded: boolean;
  reportDir: string;
  grep?: string;
  seed?: number;
  /** fast-check runs per property. */
  runs: number;
  timeoutMs: number;
  budget: number;
  maxRetries: number;
  maxRetryWaitMs: number;
  /** Most requests in flight per origin at once (1: one after another). */
  concurrency: number;
  maxBodyBytes: number;
  /** Upper bound of the whole run: past it, the run stops and writes a partial summary. */
  runTimeoutMs: number;
  /** vitest shard "i/n": this job runs the i-th of n shards (services split whole across shards). */
  shard?: string;
  html: boolean;
  /** Print vitest's own output (stack traces, code frames) instead of one line per check that did not pass. */
  verbose: boolean;
  /** Known deviations a deployment team keeps (validated against specs/known-deviations.schema.json). */
  knownDeviations: KnownDeviation[];
  /** Requirements the team declares it cannot check here (the "unchecked" list of the known-deviations file). */
  unchecked: DeclaredUnchecked[];
  knownDeviationsSource?: string;
  /** An incomplete run (a MUST requirement undecided) exits 0 instead of 4; the verdict stays `incomplete`. */
  allowIncomplete: boolean;
  profile: Profile;
  profileSource: string;
  realtimePath: string;
  probeRateLimit: boolean;
  gatewayModel?: string;
  feedMergedStoryId?: string;
}

/**
 * Requests in flight per origin by default. Measured with npm run bench -- --latency 50 (README): 4 brings a full
 * run at 50 ms round trip from about 40 s to under 8 s; more gains little and loads a staging deployment more.
 */
export const DEFAULT_CONCURRENCY = 4;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const USAGE = `Usage: npm run conformance -- [options]

  --service feed|gateway|all   which service(s) to check (default: all)
  --feed-url URL               content feed base URL (env FEED_BASE_URL)
  --gateway-url URL            model gateway base URL (env GATEWAY_URL)
  --report-dir DIR             where reports go (default: reports)
  --grep TEXT[,TEXT]           run only checks whose id, title or a requirement id contains one TEXT
  --seed N                     fast-check seed, to replay a property failure
  --runs N                     fast-check runs per property (default 50 embedded, 15 remote)
  --timeout SECONDS            per-request time bound (default 10)
  --budget N                   most requests the run may send (default 1500)
  --max-retries N              retries of a 429/5xx the rules allow (default 2)
  --max-retry-wait SECONDS     longest Retry-After the suite waits out (default 60)
  --concurrency N              most requests in flight per origin (default 4; 1 sends one after another;
                               env CONFORMANCE_CONCURRENCY)
  --run-timeout SECONDS        upper bound of the whole run (default 900)
  --shard I/N                  run the I-th of N shards (for CI jobs; merge with npm run merge-reports)
  --profile FILE               deployment profile (JSON) merged over specs/profiles/default.json
  --known-deviations FILE      known deviations (JSON): listed failures are reported, not failed; its
                               "unchecked" list declares requirements this deployment cannot be checked on
  --allow-incomplete           exit 0 even when MUST requirements were left undecided (verdict stays incomplete)
  --config FILE                JSON config file with any of these settings (no secrets; schema in
                               specs/config.schema.json, "$schema" allowed)
  --no-html                    skip the HTML report (summary.json, junit.xml and ctrf.json are still written)
  --verbose                    vitest's own output with stack traces (default: one line per check that did not pass)
  --help                       this text

With nothing configured at all, the embedded reference deployments are started on loopback and checked (the
output says so). A key or another variable of the suite, --profile, --known-deviations or --config without a URL
is a configuration error, as is a URL variable that is set but empty: never a fall-back to them. A FEED_*,
GATEWAY_* or CONFORMANCE_* variable the suite does not read is named with the one it likely meant.
Secrets only from the environment: ${SECRET_VARS.join(', ')}.

Exit status: 0 conformant (every MUST requirement checked was verified) · 1 nonconformant (a MUST failure) ·
2 usage or configuration error · 3 error (target unreachable or unavailable, run bound reached, harness error) ·
4 incomplete (no MUST failure, but MUST requirements were left undecided: see what would decide them) ·
130/143 stopped by SIGINT/SIGTERM.`;

interface FileConfig {
  service?: string;
  feedUrl?: string;
  gatewayUrl?: string;
  reportDir?: string;
  grep?: string;
  seed?: number;
  runs?: number;
  timeout?: number;
  budget?: number;
  maxRetries?: number;
  maxRetryWait?: number;
  concurrency?: number;
  runTimeout?: number;
  knownDeviations?: string;
  profile?: string | Record<string, unknown>;
  html?: boolean;
  realtimePath?: string;
  allowIncomplete?: boolean;
}
const FILE_KEYS = new Set<string>([
  'service',
  'feedUrl',
  'gatewayUrl',
  'reportDir',
  'grep',
  'seed',
  'runs',
  'timeout',
  'budget',
  'maxRetries',
  'maxRetryWait',
  'concurrency',
  'runTimeout',
  'knownDeviations',
  'profile',
  'html',
  'realtimePath',
  'allowIncomplete',
  // The file's JSON Schema (specs/config.schema.json), for editors.
  '$schema',
]);

function int(name: string, raw: string | number | undefined, min: number, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function validateUrl(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === '')
    throw new ConfigError(
      `${name} is set but empty. Set it to the deployment's base URL, or unset it; an empty value never falls back to the embedded reference deployments (a CI job whose secret is missing gets this error)`,
    );
  let u: URL | undefined;
  try {
    u = new URL(raw);
  } catch {
    u = undefined;
  }
  // "localhost:8080" parses as a URL with the scheme "localhost:": treat any non-http(s) scheme-less form alike.
  if (!u || !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    const hostLike = /^[\w.-]+(:\d+)?(\/\S*)?$/.test(raw);
    throw new ConfigError(`${name} is not a URL with a scheme: "${raw}" (expected e.g. https://staging.example.com${hostLike ? ` or http://${raw}` : ''})`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`${name} must use http or https, got "${u.protocol}"`);
  if (u.username || u.password) throw new ConfigError(`${name} must not carry credentials; put keys in the environment`);
  if (u.search || u.hash) throw new ConfigError(`${name} must be a base URL without query or fragment, got "${raw}"`);
  return u.href.replace(/\/+$/, '');
}

function readConfigFile(file: string): FileConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`config file ${file} cannot be read: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new ConfigError(`config file ${file} must hold a JSON object`);
  for (const key of Object.keys(data)) {
    if (/key|token|secret|password/i.test(key))
      throw new ConfigError(`config file ${file}: "${key}" looks like a secret; secrets come only from the environment (${SECRET_VARS.join(', ')})`);
    if (!FILE_KEYS.has(key)) throw new ConfigError(`config file ${file}: unknown setting "${key}" (allowed: ${[...FILE_KEYS].join(', ')})`);
  }
  return data as FileConfig;
}

function loadProfileSetting(p: FileConfig['profile'], baseDir: string): { profile: Profile; source: string } {
  if (p === undefined) return { profile: loadProfile(), source: 'specs/profiles/default.json' };
  if (typeof p === 'object') return { profile: wrapProfile(() => loadProfile(p, 'config profile')), source: 'config file' };
  const file = path.resolve(baseDir, p);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`profile ${p} cannot be read as JSON: ${(e as Error).message}`);
  }
  return { profile: wrapProfile(() => loadProfile(data, `profile ${p}`)), source: p };
}

function wrapProfile(f: () => Profile): Profile {
  try {
    return f();
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

/** The known-deviations file, validated against its schema. An id matching nothing in a run is reported there. */
export function loadKnownDeviations(file: string): { deviations: KnownDeviation[]; unchecked: DeclaredUnchecked[] } {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`known deviations file ${file} cannot be read as JSON: ${(e as Error).message}`);
  }
  const validate = schemaFileValidator('known-deviations.schema.json');
  if (!validate(data)) throw new ConfigError(`known deviations file ${file}: ${formatAjvErrors(validate.errors)}`);
  const d = data as { deviations?: KnownDeviation[]; unchecked?: DeclaredUnchecked[] };
  const catalogue = loadCatalogue();
  for (const u of d.unchecked ?? []) {
    const r = catalogue.get(u.id);
    if (!r) throw new ConfigError(`known deviations file ${file}: "unchecked" names ${u.id}, which is not a requirement id of either document`);
    if (r.subject !== 'server') throw new ConfigError(`known deviations file ${file}: "unchecked" names ${u.id}, a client rule (nothing to declare)`);
  }
  return { deviations: d.deviations ?? [], unchecked: d.unchecked ?? [] };
}

/** A run's configuration, and what it set that the suite does not read (reported, not refused, when a URL is given). */
export type ParsedArgs = { help: true; version?: boolean } | { help: false; config: RunConfig; warnings: string[] };

const OPTIONS = {
  service: { type: 'string' },
  'feed-url': { type: 'string' },
  'gateway-url': { type: 'string' },
  'report-dir': { type: 'string' },
  grep: { type: 'string' },
  seed: { type: 'string' },
  runs: { type: 'string' },
  timeout: { type: 'string' },
  budget: { type: 'string' },
  'max-retries': { type: 'string' },
  'max-retry-wait': { type: 'string' },
  concurrency: { type: 'string' },
  'run-timeout': { type: 'string' },
  shard: { type: 'string' },
  profile: { type: 'string' },
  'known-deviations': { type: 'string' },
  config: { type: 'string' },
  'no-html': { type: 'boolean' },
  verbose: { type: 'boolean' },
  'allow-incomplete': { type: 'boolean' },
  version: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = Record<string, string | boolean | undefined>;

/** The command line, parsed strictly: an unknown option or a missing value is a configuration error with the usage. */
function readArgs(argv: string[]): Values {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: false, options: OPTIONS }).values as Values;
  } catch (e) {
    const msg = (e as Error).message.replace(/\. To specify a positional.*$/s, '');
    // `--seed -123`: parseArgs takes -123 for an option; the value must be attached.
    const negative = /argument missing|ambiguous|Unknown option '-\d/i.test(msg)
      ? argv.find((a, i) => /^-\d/.test(a) && argv[i - 1]?.startsWith('--'))
      : undefined;
    const hint = negative ? `\n(a negative value must be attached with "=": ${argv[argv.indexOf(negative) - 1]}=${negative})` : '';
    throw new ConfigError(`${msg}${hint}\n\n${USAGE}`);
  }
}

/** The services to check and their URLs (flag, then variable, then file); no URL at all means the embedded references. */
function targetsOf(s: (k: string) => string | undefined, env: NodeJS.ProcessEnv, file: FileConfig, configFile: string | undefined) {
  const serviceRaw = s('service') ?? file.service ?? 'all';
  if (serviceRaw !== 'all' && !SERVICES.includes(serviceRaw as Service)) {
    throw new ConfigError(`--service must be one of feed, gateway, all; got "${serviceRaw}"`);
  }
  // Each source is validated as given: an empty flag or variable is an error, never "not set".
  const feedUrl =
    s('feed-url') !== undefined
      ? validateUrl('--feed-url', s('feed-url'))
      : env.FEED_BASE_URL !== undefined
        ? validateUrl('FEED_BASE_URL', env.FEED_BASE_URL)
        : validateUrl(`feedUrl in ${configFile}`, file.feedUrl);
  const gatewayUrl =
    s('gateway-url') !== undefined
      ? validateUrl('--gateway-url', s('gateway-url'))
      : env.GATEWAY_URL !== undefined
        ? validateUrl('GATEWAY_URL', env.GATEWAY_URL)
        : validateUrl(`gatewayUrl in ${configFile}`, file.gatewayUrl);
  const embedded = feedUrl === undefined && gatewayUrl === undefined;
  const wanted: Service[] = serviceRaw === 'all' ? [...SERVICES] : [serviceRaw as Service];
  // A service with no URL is skipped, unless no URL at all was given (then the embedded references serve).
  const services = embedded ? wanted : wanted.filter((x) => (x === 'feed' ? feedUrl : gatewayUrl) !== undefined);
  if (services.length === 0) {
    throw new ConfigError(
      `--service ${serviceRaw} was asked for but its URL is not set (${serviceRaw === 'gateway' ? '--gateway-url or GATEWAY_URL' : '--feed-url or FEED_BASE_URL'})`,
    );
  }

  return { services, feedUrl, gatewayUrl, embedded };
}

/** The numeric settings, each bounded: flag, then variable (concurrency), then file, then the default. */
function numericSettings(s: (k: string) => string | undefined, env: NodeJS.ProcessEnv, file: FileConfig, configFile: string | undefined, embedded: boolean) {
  return {
    seed: int('--seed', s('seed') ?? file.seed, -(2 ** 31), 2 ** 31 - 1),
    runs: int('--runs', s('runs') ?? file.runs, 1, 10_000) ?? (embedded ? 50 : 15),
    timeoutMs: (int('--timeout', s('timeout') ?? file.timeout, 1, 600) ?? 10) * 1000,
    budget: int('--budget', s('budget') ?? file.budget, 1, 1_000_000) ?? 1500,
    maxRetries: int('--max-retries', s('max-retries') ?? file.maxRetries, 0, 10) ?? 2,
    maxRetryWaitMs: (int('--max-retry-wait', s('max-retry-wait') ?? file.maxRetryWait, 1, 3600) ?? 60) * 1000,
    concurrency:
      (s('concurrency') !== undefined
        ? int('--concurrency', s('concurrency'), 1, 64)
        : env.CONFORMANCE_CONCURRENCY !== undefined
          ? int('CONFORMANCE_CONCURRENCY', env.CONFORMANCE_CONCURRENCY.trim() || 'empty', 1, 64)
          : int(`concurrency in ${configFile}`, file.concurrency, 1, 64)) ?? DEFAULT_CONCURRENCY,
    runTimeoutMs: (int('--run-timeout', s('run-timeout') ?? file.runTimeout, 10, 86_400) ?? 900) * 1000,
  };
}

export function parseConfig(argv: string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): ParsedArgs {
  const values = readArgs(argv);
  if (values.help) return { help: true };
  if (values.version) return { help: true, version: true };
  const s = (k: string) => values[k] as string | undefined;

  const configFile = s('config') ?? (env.CONFORMANCE_CONFIG || undefined);
  const file: FileConfig = configFile ? readConfigFile(path.resolve(cwd, configFile)) : {};
  const fileDir = configFile ? path.dirname(path.resolve(cwd, configFile)) : cwd;
  const { services, feedUrl, gatewayUrl, embedded } = targetsOf(s, env, file, configFile);

  const realtimePath = env.GATEWAY_REALTIME_PATH || file.realtimePath || undefined;
  if (realtimePath !== undefined && !realtimePath.startsWith('/')) throw new ConfigError(`GATEWAY_REALTIME_PATH must start with "/", got "${realtimePath}"`);
  const probe = env.CONFORMANCE_PROBE_RATE_LIMIT;
  if (probe !== undefined && probe !== '' && probe !== '0' && probe !== '1')
    throw new ConfigError(`CONFORMANCE_PROBE_RATE_LIMIT must be 1 or 0, got "${probe}"`);

  const { profile, source } = s('profile') !== undefined ? loadProfileSetting(s('profile'), cwd) : loadProfileSetting(file.profile, fileDir);

  const deviationsFile = s('known-deviations') ?? (file.knownDeviations ? path.resolve(fileDir, file.knownDeviations) : undefined);
  const { deviations: knownDeviations, unchecked } = deviationsFile
    ? loadKnownDeviations(path.resolve(cwd, deviationsFile))
    : { deviations: [], unchecked: [] };

  const shard = s('shard');
  if (shard !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(shard);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new ConfigError(`--shard must be I/N with 1 <= I <= N, got "${shard}"`);
  }

  const reportDir = s('report-dir') ?? file.reportDir ?? 'reports';
  if (reportDir.trim() === '') throw new ConfigError('--report-dir must not be empty');

  const warnings = zeroConfigGuard(values, env, embedded);
  const limits = numericSettings(s, env, file, configFile, embedded);
  const config: RunConfig = {
    services,
    feedUrl,
    gatewayUrl,
    embedded,
    reportDir: path.resolve(cwd, reportDir),
    grep: s('grep') ?? file.grep,
    ...limits,
    maxBodyBytes: 16 * 1024 * 1024,
    html: !(values['no-html'] === true || file.html === false),
    verbose: values.verbose === true,
    knownDeviations,
    unchecked,
    knownDeviationsSource: deviationsFile,
    allowIncomplete: values['allow-incomplete'] === true || file.allowIncomplete === true,
    shard,
    profile,
    profileSource: source,
    realtimePath: realtimePath ?? profile.gateway.realtimePath,
    probeRateLimit: probe === '1',
    gatewayModel: env.GATEWAY_MODEL || undefined,
    feedMergedStoryId: env.FEED_MERGED_STORY_ID || undefined,
  };
  return { help: false, config, warnings };
}

/**
 * Only a run configured with nothing at all checks the embedded reference deployments. A run that set anything
 * that describes a deployment (a key, a merged id, a model, a profile, a deviations or config file) or a variable
 * of the suite's prefixes that it does not read (a misspelt URL variable, most likely) but no URL is meant for a
 * deployment: a configuration error naming what was set. Beside a URL, an unknown variable is a warning.
 */
function zeroConfigGuard(values: Values, env: NodeJS.ProcessEnv, embedded: boolean): string[] {
  const unknown = unknownVariables(env);
  if (!embedded) return unknown.map((u) => `${u} (ignored)`);
  const set = [
    ...['profile', 'known-deviations', 'config'].filter((f) => values[f] !== undefined).map((f) => `--${f}`),
    ...Object.keys(env).filter((k) => env[k] !== undefined && (VARIABLES[k] === 'deployment' || (PREFIXED.test(k) && !(k in VARIABLES)))),
  ];
  if (set.length === 0) return [];
  throw new ConfigError(
    `${unknown.map((u) => `${u}\n`).join('')}no URL is configured (--feed-url / FEED_BASE_URL, --gateway-url / GATEWAY_URL), but ${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set: ` +
      'a run configured for a deployment needs its URL; the embedded reference deployments are checked only when nothing at all is configured (unset these to check them)',
  );
}

/** The configuration as printed at the start of a run: secrets masked. */
export function describeConfig(c: RunConfig, env: NodeJS.ProcessEnv): string {
  const lines = [
    `services      ${c.services.join(', ')}${c.embedded ? ' — the EMBEDDED REFERENCE deployments, not a deployment of yours (no URL was configured)' : ''}`,
    `feed url      ${c.feedUrl ?? '(not set)'}`,
    `gateway url   ${c.gatewayUrl ?? '(not set)'}`,
    `report dir    ${c.reportDir}`,
    `profile       ${c.profileSource}`,
    `grep          ${c.grep ?? '(all checks)'}`,
    `fast-check    ${c.runs} runs per property${c.seed !== undefined ? `, seed ${c.seed}` : ''}`,
    `requests      timeout ${c.timeoutMs / 1000} s, budget ${c.budget}, ${c.maxRetries} retries, waits up to ${c.maxRetryWaitMs / 1000} s, at most ${c.concurrency} in flight per origin`,
  ];
  if (c.services.includes('gateway')) {
    for (const v of SECRET_VARS) lines.push(`${v.padEnd(Math.max(26, v.length + 1))}${mask(env[v])}`);
    lines.push(`GATEWAY_MODEL             ${c.gatewayModel ?? '(first listed model)'}`);
    lines.push(`realtime path             ${c.realtimePath}`);
    lines.push(`rate-limit probe          ${c.probeRateLimit ? 'on' : 'off (CONFORMANCE_PROBE_RATE_LIMIT=1 to enable)'}`);
  }
  if (c.services.includes('feed')) lines.push(`FEED_MERGED_STORY_ID      ${c.feedMergedStoryId ?? '(discovered from the feed)'}`);
  return lines.join('\n');
}
