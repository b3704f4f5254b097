/**
 * The harness: `check()` wraps vitest's `test` so that every check carries a stable id, the requirement ids it
 * verifies and their level, and ends in exactly one verdict:
 *   passed · failed (a MUST requirement broken: fails the run) · warning (a SHOULD or MAY requirement broken:
 *   reported, does not fail the run) · skipped (an input is not configured: the reason names what to set) ·
 *   setup-error (a precondition on the target's data did not hold) · unavailable (the target kept answering
 *   429/503, or the budget ran out) · error (the suite itself broke).
 * An unknown requirement id throws while the suites are collected, so it fails the build.
 */
import { describe, test, type TestContext } from 'vitest';
import * as allure from 'allure-js-commons';
import { requirement, strongestLevel, type Level, type Service, type CatalogueEntry } from './spec.js';
import { redactorFromEnv, runContext } from './context.js';
import { inCheck, BudgetExhaustedError, NoResponseError, ResponseTooLargeError, TargetUnavailableError, TransportError, type Exchange } from './http.js';
import { toAllureExchange, curlFor } from './evidence.js';
import { AssertionViolation, findingMessage, TELLING_RESPONSE_HEADERS, translateFrameworkMessage } from './findings.js';
import { READING, type FailingRequest, type Skip, type SkipCause, type SkipKind, type Verdict } from './verdicts.js';

export type { FailingRequest, Verdict } from './verdicts.js';

declare module 'vitest' {
  interface TaskMeta {
    check?: string;
    requirements?: string[];
    level?: Level;
    service?: Service;
    verdict?: Verdict;
    reason?: string;
    /** A skipped check's kind and cause, as data (the verdict model reads this, never the reason's text). */
    skip?: Skip;
    /** A setup error's requirements whose checks report what was missing (PreconditionFailed.dependsOn). */
    dependsOn?: string[];
    observations?: Record<string, string>;
    requests?: number;
    failingRequests?: FailingRequest[];
    /** The suite module that defines the check (all checks run in one test file, suites/all.conformance.ts). */
    file?: string;
  }
}

/** Thrown to skip a check: its kind (and cause) travel as fields; the message, for the reader, starts with the kind. */
export class NotConfigured extends Error {
  override name = 'NotConfigured';
  constructor(
    why: string,
    readonly kind: SkipKind = 'not configured',
    readonly skipCause?: SkipCause,
  ) {
    super(why.startsWith(`${kind}: `) ? why : `${kind}: ${why}`);
  }
}
const SETUP_ERROR = 'setup error (precondition): ';
/** A precondition on the target's data did not hold: a setup error, never a conformance failure. */
export class PreconditionFailed extends Error {
  override name = 'PreconditionFailed';
  /** `why`: the condition that did not hold (the message says "setup error (precondition)" before it). */
  /**
   * `dependsOn`: the requirement ids whose own checks report what is missing (the target broke one of them, or its
   * data gave nothing to check): data the report links and the requirement verdicts read, never text to parse.
   */
  constructor(
    why: string,
    readonly dependsOn: string[] = [],
  ) {
    super((why.startsWith(SETUP_ERROR) ? why : SETUP_ERROR + why) + (dependsOn.length ? ` (depends on ${dependsOn.join(', ')})` : ''));
    // An id that names no requirement is the suite's mistake: a harness error (the check ends "error"), not a setup error.
    const unknown = dependsOn.filter((id) => !isRequirement(id));
    if (unknown.length) throw new Error(`harness error: a precondition depends on ${unknown.join(', ')}, not a requirement of the catalogue`);
  }
}

export interface CheckSpec {
  /** Stable kebab-case id, the same in the CLI (--grep), the report and summary.json. */
  id: string;
  /** A sentence in the document's own words. */
  title: string;
  requirements: string[];
  /** Per-check time bound; defaults to a bound that covers the retries the client may make. */
  timeoutMs?: number;
}

export interface CheckTools {
  /** Record which reading of an ambiguous sentence (or which optional feature) the target showed. */
  observe(key: string, value: string): void;
  /**
   * Record how the target resolved a point the documents leave open (`question`), where the check accepts each
   * reading: kept with the observations under `reading: <question>`, and listed on the report's first screen.
   */
  reading(question: string, answer: string): void;
  /**
   * End the check as skipped: `what` names the setting to configure; `cause` a fact the run's verdict says first
   * (the configured key was refused).
   */
  notConfigured(what: string, cause?: SkipCause): never;
  /** End the check as skipped because the run gave it nothing to check (e.g. no 429 was seen). */
  notApplicable(why: string): never;
  /**
   * End the check as skipped because only a condition the suite does not provoke by default could exercise it
   * (e.g. the rate-limit probe is off): listed as "not exercised", it does not make the run incomplete.
   */
  notExercised(why: string): never;
  /** Fail the check with a message (for checks that find violations by their own logic). */
  violation(message: string): never;
  /** Attach responses obtained earlier in the run (a shared probe) as this check's evidence. */
  cite(...responses: { attempts: Exchange[] }[]): void;
  requirements: CatalogueEntry[];
  level: Level;
}

const ID_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)+$/;
const registered = new Set<string>();
const registeredTitles = new Set<string>();

/** --grep: comma-separated alternatives, each matched (case-insensitively) inside the id, title or a requirement id. */
export function matchesGrep(spec: Pick<CheckSpec, 'id' | 'title' | 'requirements'>, grep: string | undefined): boolean {
  if (!grep) return true;
  const alternatives = grep
    .split(',')
    .map((g) => g.trim().toLowerCase())
    .filter(Boolean);
  const fields = [spec.id, spec.title, ...spec.requirements].map((s) => s.toLowerCase());
  return alternatives.some((g) => fields.some((f) => f.includes(g)));
}

function classify(err: unknown, level: Level): Verdict {
  if (err instanceof NotConfigured) return 'skipped';
  if (err instanceof PreconditionFailed) return 'setup-error';
  if (err instanceof TargetUnavailableError || err instanceof BudgetExhaustedError) return 'unavailable';
  const conformance =
    err instanceof AssertionViolation ||
    err instanceof NoResponseError ||
    err instanceof TransportError ||
    err instanceof ResponseTooLargeError ||
    (err instanceof Error && (err.name === 'AssertionError' || 'matcherResult' in err)) ||
    // A matcher given a value of the wrong kind (toMatch on a missing header) is still an assertion about the target.
    (err instanceof TypeError && /@vitest[/\\]expect|[/\\]chai[/\\]/.test(err.stack ?? ''));
  if (!conformance) return 'error';
  return level === 'MUST' ? 'failed' : 'warning';
}

function isRequirement(id: string): boolean {
  try {
    requirement(id);
    return true;
  } catch {
    return false;
  }
}

export function check(spec: CheckSpec, body: (t: CheckTools) => Promise<void>): void {
  if (!ID_PATTERN.test(spec.id)) throw new Error(`check id "${spec.id}" is not a kebab-case slug`);
  if (registered.has(spec.id)) throw new Error(`check id "${spec.id}" is registered twice`);
  if (registeredTitles.has(spec.title)) throw new Error(`check title "${spec.title}" is used twice: the report finds checks by title`);
  registered.add(spec.id);
  registeredTitles.add(spec.title);
  if (spec.requirements.length === 0) throw new Error(`check ${spec.id} names no requirement`);
  const reqs = spec.requirements.map(requirement); // throws on an unknown id
  const services = [...new Set(reqs.map((r) => r.service))];
  if (services.length !== 1) throw new Error(`check ${spec.id} mixes requirements of ${services.join(' and ')}`);
  const service = services[0]!;
  const level = strongestLevel(reqs.map((r) => r.level));
  const ctx = runContext();
  if (!ctx.services.includes(service) || !matchesGrep(spec, ctx.grep)) return;
  const file = definingModule();
  const budgetForRetries = (ctx.maxRetries + 1) * (ctx.timeoutMs + ctx.maxRetryWaitMs);
  const timeout = spec.timeoutMs ?? Math.max(60_000, budgetForRetries * 2);

  test(spec.title, { meta: { check: spec.id, requirements: spec.requirements, level, service, file }, timeout }, async (tc: TestContext) => {
    const meta = tc.task.meta;
    const exchanges: Exchange[] = [];
    await labelForReport(spec, reqs, level, service);
    const tools: CheckTools = {
      observe(key, value) {
        meta.observations = { ...meta.observations, [key]: value };
      },
      reading(question, answer) {
        meta.observations = { ...meta.observations, [`${READING}${question}`]: answer };
      },
      notConfigured(what, cause) {
        throw new NotConfigured(what, 'not configured', cause);
      },
      notApplicable(why) {
        throw new NotConfigured(why, 'not applicable');
      },
      notExercised(why) {
        throw new NotConfigured(why, 'not exercised');
      },
      violation(message) {
        throw new AssertionViolation(message);
      },
      cite(...responses) {
        for (const r of responses) for (const ex of r.attempts) if (!exchanges.includes(ex)) exchanges.push(ex);
      },
      requirements: reqs,
      level,
    };
    let verdict: Verdict = 'passed';
    let error: unknown;
    try {
      // Checks run concurrently: the exchanges a check causes are attributed to it through its async context.
      await inCheck({ check: spec.id, record: (ex) => void (exchanges.includes(ex) || exchanges.push(ex)) }, () => body(tools));
    } catch (err) {
      verdict = classify(err, level);
      error = verdict === 'failed' || verdict === 'warning' ? asFinding(err, reqs, exchanges) : err;
    } finally {
      meta.requests = exchanges.length;
      meta.verdict = verdict;
      await attachEvidence(exchanges, verdict, meta);
    }
    if (meta.observations) for (const [k, v] of Object.entries(meta.observations)) await allure.parameter(`observed: ${k}`, v);
    if (verdict === 'passed') return;
    const message = error instanceof Error ? error.message : String(error);
    meta.reason = message;
    if (error instanceof PreconditionFailed && error.dependsOn.length) meta.dependsOn = error.dependsOn;
    if (verdict === 'skipped') {
      if (error instanceof NotConfigured) meta.skip = { kind: error.kind, ...(error.skipCause ? { cause: error.skipCause } : {}) };
      tc.skip(message);
      return;
    }
    if (verdict === 'warning') {
      // A broken SHOULD/MAY requirement is reported without failing the run.
      await allure.label('verdict', 'warning');
      await allure.description(`**${level} requirement not met (warning, does not fail the run):** ${message}`);
      return;
    }
    throw error;
  });
}

/**
 * A check's failure as a finding in three parts (src/findings.ts): what the target did, the requirements' words,
 * the request that showed it. Framework assertion text that reached here is put in the same shape.
 */
function asFinding(err: unknown, reqs: CatalogueEntry[], exchanges: Exchange[]): Error {
  const raw = err instanceof Error ? err.message : String(err);
  const finding = err instanceof AssertionViolation ? raw : translateFrameworkMessage(raw);
  const out = new AssertionViolation(redactorFromEnv().redact(findingMessage(finding, reqs, exchanges)));
  if (err instanceof Error && err.stack)
    out.stack = `${out.name}: ${out.message}\n${err.stack
      .split('\n')
      .filter((l) => /^\s+at /.test(l))
      .join('\n')}`;
  return out;
}

async function labelForReport(spec: CheckSpec, reqs: CatalogueEntry[], level: Level, service: Service): Promise<void> {
  const first = reqs[0]!;
  await allure.parentSuite(first.documentTitle);
  await allure.suite(first.section);
  await allure.subSuite(reqs.map((r) => r.id).join(', '));
  await allure.epic(first.documentTitle);
  await allure.feature(first.section);
  for (const r of reqs) await allure.story(r.id);
  await allure.severity(level === 'MUST' ? 'critical' : level === 'SHOULD' ? 'normal' : 'minor');
  await allure.label('check', spec.id);
  await allure.label('service', service);
  await allure.label('level', level);
  await allure.description(reqs.map((r) => `**${r.id}** (${r.level}, ${r.section}): ${r.summary}\n\n> ${r.text}`).join('\n\n'));
}

/**
 * How much of each response body a passing check's exchanges show in the report (the start of every answer, its
 * status and headers whole); a check with any other verdict shows each body as recorded (up to RECORDED_BODY_CHARS),
 * and exchanges.jsonl keeps every body so. The report's page embeds every attachment: a conformant run's bodies cut
 * so take 3.8 MB of it where they took 9 MB, and the run about 0.3 s less.
 */
const PASSED_BODY_CHARS = 2048;

async function attachEvidence(exchanges: Exchange[], verdict: Verdict, meta: TestContext['task']['meta']): Promise<void> {
  const failing: NonNullable<typeof meta.failingRequests> = [];
  for (const ex of exchanges) {
    const name = `${ex.method} ${ex.url} → ${ex.status ?? ex.error ?? 'no response'}`;
    const cut = verdict === 'passed' && (ex.responseBody?.length ?? 0) > PASSED_BODY_CHARS;
    const shown = cut ? { ...ex, responseBody: ex.responseBody!.slice(0, PASSED_BODY_CHARS), truncated: true } : ex;
    await allure.attachment(name, JSON.stringify(toAllureExchange(shown)), 'application/vnd.allure.http+json');
    if (verdict !== 'passed') {
      const headers = Object.fromEntries(Object.entries(ex.responseHeaders ?? {}).filter(([k]) => TELLING_RESPONSE_HEADERS.includes(k)));
      failing.push({
        method: ex.method,
        url: ex.url,
        status: ex.status,
        headers,
        bodyStart: ex.responseBody?.slice(0, 300),
        error: ex.error,
        curl: curlFor(ex),
      });
    }
  }
  if (failing.length > 0) {
    meta.failingRequests = failing.slice(-5);
    await allure.attachment('reproduce with curl', failing.map((f) => f.curl).join('\n\n'), 'text/plain');
  }
}

/**
 * The suites/<service>/<name>.checks.ts module whose code is calling check() now, from the call stack: the file names
 * of its frames as V8 gives them, not the stack as text (which the module runner maps through each file's source map:
 * 80 ms of the checks' thread for the 636 checks of a run).
 */
function definingModule(): string | undefined {
  const saved = Error.prepareStackTrace;
  Error.prepareStackTrace = (_e, frames: NodeJS.CallSite[]) => frames.map((f) => f.getFileName() ?? '').join('\n');
  let files: string;
  try {
    files = String(new Error().stack ?? '');
  } finally {
    Error.prepareStackTrace = saved;
  }
  return /suites[/\\][a-z]+[/\\][^/\\:]+\.checks\.ts/.exec(files)?.[0]?.replace(/\\/g, '/');
}

/**
 * All the checks of one service (suites/all.conformance.ts): the two services' groups run side by side when the
 * run's --concurrency is above 1 (they are different origins), one after the other at 1.
 */
export function serviceGroup(service: Service, load: () => Promise<void>): void {
  (runContext().concurrency > 1 ? describe.concurrent : describe)(service, load);
}

/**
 * A group of checks that do not depend on each other's order: run concurrently when the run's --concurrency is
 * above 1 (the HTTP client bounds the requests in flight per origin), one after another at 1. Checks that depend on
 * order or on a quiet origin go in describe.sequential instead.
 */
export function checkGroup(name: string, body: () => void): void {
  (runContext().concurrency > 1 ? describe.concurrent : describe)(name, body);
}

/** Fail the check: a requirement is broken (module-level, so TypeScript narrows after it). */
export function fail(message: string): never {
  throw new AssertionViolation(message);
}

/** End the check as a setup error unless `cond` holds. */
export function precondition(cond: unknown, message: string, ...dependsOn: string[]): asserts cond {
  if (!cond) throw new PreconditionFailed(message, dependsOn);
}

/** Parse a JSON body, failing the check (not crashing the harness) when it is not JSON. */
export function jsonBody<T = unknown>(res: { body: string; url: string; status: number }): T {
  try {
    return JSON.parse(res.body) as T;
  } catch {
    throw new AssertionViolation(`${res.status} body of ${res.url} is not JSON: ${JSON.stringify(res.body.slice(0, 120))}`);
  }
}

export { expect, AssertionViolation } from './findings.js';
