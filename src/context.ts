/**
 * What a suite sees of the run: the target, the profile, the shared HTTP client. The conformance command passes
 * it through the environment (CONFORMANCE_CONTEXT); secrets are read from their own variables.
 */
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadProfile, type Service } from './spec.js';
import { HttpClient, progressChannelName, type Exchange } from './http.js';
import { Redactor } from './redact.js';
import { SECRET_VARS, type RunConfig, type SecretVar } from './config.js';
import { pathUnderBase, underBase } from './base-url.js';

/** What the suites get of the run's configuration (the rest concerns only the command itself). */
export type RunContext = Omit<
  RunConfig,
  'html' | 'verbose' | 'profileSource' | 'knownDeviations' | 'knownDeviationsSource' | 'shard' | 'runTimeoutMs' | 'unchecked' | 'allowIncomplete'
>;

export const CONTEXT_VAR = 'CONFORMANCE_CONTEXT';
/**
 * The feed's answer to the command's first request (its items list, probed before any check: src/target-probes.ts),
 * handed to the checks in this variable: its cursor is the run's oldest (feed-live-cursor-reused-late reuses it).
 */
export const FIRST_ITEMS_VAR = 'CONFORMANCE_FIRST_ITEMS';
export interface FirstAnswer {
  url: string;
  /** When it arrived (epoch ms). */
  at: number;
  body: string;
}
export const EXCHANGES_FILE = 'exchanges.jsonl';

/**
 * For the project's unit tests of suite helpers: a feed-only run context aimed at `feedUrl`, small bounds, set in
 * the environment as the conformance command would set it.
 */
export function setFeedTestContext(feedUrl: string, reportDir: string): void {
  const ctx: RunContext = {
    services: ['feed'],
    feedUrl,
    embedded: false,
    reportDir,
    runs: 1,
    timeoutMs: 5000,
    budget: 100,
    maxRetries: 1,
    maxRetryWaitMs: 1000,
    concurrency: 1,
    maxBodyBytes: 1 << 20,
    profile: loadProfile(),
    realtimePath: '/v1/realtime',
    probeRateLimit: false,
  };
  process.env[CONTEXT_VAR] = JSON.stringify(ctx);
}

/** The run context the suites are collected (not run) with: no target, the default profile. */
export function setCollectContext(): void {
  const ctx: RunContext = {
    services: ['feed', 'gateway'],
    feedUrl: 'http://collect.invalid',
    gatewayUrl: 'http://collect.invalid',
    embedded: false,
    reportDir: 'reports',
    runs: 1,
    timeoutMs: 1000,
    budget: 0,
    maxRetries: 0,
    maxRetryWaitMs: 0,
    concurrency: 1,
    maxBodyBytes: 0,
    profile: loadProfile(),
    realtimePath: '/v1/realtime',
    probeRateLimit: false,
  };
  process.env[CONTEXT_VAR] = JSON.stringify(ctx);
}

let cached: RunContext | undefined;
export function runContext(): RunContext {
  if (cached) return cached;
  const raw = process.env[CONTEXT_VAR];
  if (!raw) throw new Error(`${CONTEXT_VAR} is not set: run the suites with "npm run conformance", not vitest directly`);
  cached = JSON.parse(raw) as RunContext;
  return cached;
}

export function secret(name: SecretVar): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}

export function redactorFromEnv(env: NodeJS.ProcessEnv = process.env): Redactor {
  const r = new Redactor();
  for (const v of SECRET_VARS) r.add(v, env[v]);
  // A canary the suite invents itself (to check redaction by the target) is redacted too.
  r.add('CANARY_KEY', env.CONFORMANCE_CANARY_KEY);
  return r;
}

let client: HttpClient | undefined;
/** The one HTTP client of this worker (the conformance project runs its files in one worker, in sequence). */
export function http(): HttpClient {
  if (client) return client;
  const c = runContext();
  const file = path.join(c.reportDir, EXCHANGES_FILE);
  mkdirSync(c.reportDir, { recursive: true });
  client = new HttpClient({
    timeoutMs: c.timeoutMs,
    maxBodyBytes: c.maxBodyBytes,
    budget: c.budget,
    maxRetries: c.maxRetries,
    maxRetryWaitMs: c.maxRetryWaitMs,
    concurrency: c.concurrency,
    allowedOrigins: [c.feedUrl, c.gatewayUrl].filter((u): u is string => !!u).map((u) => new URL(u).origin),
    redactor: redactorFromEnv(),
    record: (ex: Exchange) => appendFileSync(file, `${JSON.stringify(ex)}\n`),
    // The console's progress lines ask it what it is doing (src/outputs/console.ts).
    progressChannel: progressChannelName(c.reportDir),
  });
  return client;
}

const memo = new Map<string, Promise<unknown>>();
/** Run `f` once per key in this run; later callers share the result (and must cite its responses). */
export function once<T>(key: string, f: () => Promise<T>): Promise<T> {
  let p = memo.get(key) as Promise<T> | undefined;
  if (!p) {
    p = f();
    memo.set(key, p);
    p.catch(() => memo.delete(key));
  }
  return p;
}

/** The exchanges file as read so far: its path, the bytes read (whole lines), what they held. */
let read: { file: string; ino: number; bytes: number; exchanges: Exchange[] } | undefined;

/**
 * Every exchange the run has recorded so far with one service (for run-wide checks). The file only grows during a
 * run: each call reads what was appended since the last one (about 40 run-wide checks each read the whole file and
 * parsed it again: 0.5 s of the checks' thread in a zero-config run). The exchanges are shared between callers,
 * which read them only.
 */
export function runExchanges(service: Service): Exchange[] {
  const file = path.join(runContext().reportDir, EXCHANGES_FILE);
  if (!existsSync(file)) return [];
  const { size, ino } = statSync(file);
  // Another run's file at the same path (a report directory used again) is read from its start.
  if (!read || read.file !== file || read.ino !== ino || size < read.bytes) read = { file, ino, bytes: 0, exchanges: [] };
  if (size > read.bytes) {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(size - read.bytes);
      const n = readSync(fd, buf, 0, buf.length, read.bytes);
      const end = buf.lastIndexOf(0x0a, n - 1) + 1; // a line still being written is read next time
      for (const l of buf.subarray(0, end).toString('utf8').split('\n')) if (l) read.exchanges.push(JSON.parse(l) as Exchange);
      read.bytes += end;
    } finally {
      closeSync(fd);
    }
  }
  return read.exchanges.filter((x) => x.service === service && x.status !== undefined);
}

export function baseUrl(service: Service): string {
  const c = runContext();
  const u = service === 'feed' ? c.feedUrl : c.gatewayUrl;
  if (!u) throw new Error(`no URL for ${service}`);
  return u;
}

/** The URL of a documented path ("/api/v1/items", "/v1/models") on a service, under its base URL's path prefix if any. */
export function serviceUrl(service: Service, path: string): string {
  return underBase(baseUrl(service), path);
}

/** The documented path of a URL the run sent to a service (the base URL's path prefix taken off); undefined outside it. */
export function operationPath(service: Service, url: string): string | undefined {
  return pathUnderBase(baseUrl(service), url);
}
