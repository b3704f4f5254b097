/**
 * The verdict model, pure: the types of a run's results (check results, requirement verdicts, known deviations,
 * declared-unchecked requirements, the summary) and the functions from check results to requirement verdicts, to
 * the run's verdict and exit status. No I/O: the catalogue and the clock come in as arguments. The README's tables
 * ("Verdicts and exit status") are its rules; src/verdicts.test.ts states them as data.
 */
import type { CatalogueEntry, Level, Service } from './spec.js';
import { SUITE_VERSION, SUMMARY_SCHEMA_VERSION } from './version.js';

/**
 * The verdict of one check: passed · failed (a MUST requirement broken) · warning (a SHOULD or MAY one) ·
 * skipped (an input not configured, or nothing to check) · setup-error (a precondition on the target's data did
 * not hold) · unavailable (429/503 past the retry cap, or the budget ran out) · error (the suite broke) ·
 * known-deviation (a failure the known-deviations file lists).
 */
export type Verdict = 'passed' | 'failed' | 'warning' | 'skipped' | 'setup-error' | 'unavailable' | 'error' | 'known-deviation';

/** What the target did on a request of a check that did not pass. */
export interface FailingRequest {
  method: string;
  url: string;
  status?: number;
  headers?: Record<string, string>;
  bodyStart?: string;
  error?: string;
  curl: string;
}

export interface KnownDeviation {
  id: string;
  reason: string;
  link?: string;
}

/** The observation key prefix of a reading: how the target resolved a point the documents leave open. */
export const READING = 'reading: ';

/** The readings the run's checks recorded (the check accepted each reading; the target showed this one). */
export function readingsOf(checks: readonly CheckResult[]): { question: string; answer: string; check: string }[] {
  return checks.flatMap((c) =>
    Object.entries(c.observations ?? {})
      .filter(([k]) => k.startsWith(READING))
      .map(([k, answer]) => ({ question: k.slice(READING.length), answer, check: c.id })),
  );
}

/**
 * Why a check was skipped, as data (the harness sets it; the verdict model reads it, never the message): an input
 * not configured (the requirement stays undecided), or nothing to check in this run (not applicable, not exercised:
 * the requirement is "not exercised" when no other check decided it).
 */
export type SkipKind = 'not configured' | 'not applicable' | 'not exercised';
/** What made a check skip, when it is a fact the run's verdict reports first: the configured key was refused. */
export type SkipCause = 'key-refused';
export interface Skip {
  kind: SkipKind;
  cause?: SkipCause;
}

export interface CheckResult {
  id: string;
  title: string;
  service?: Service;
  requirements: string[];
  level?: Level;
  verdict: Verdict;
  message?: string;
  /** A skipped check's kind and cause (absent on a skip the harness did not decide: a filtered or vitest skip). */
  skip?: Skip;
  /** A setup error's precondition: the requirement ids whose own checks report what was missing. */
  dependsOn?: string[];
  observations?: Record<string, string>;
  requests: number;
  durationMs: number;
  /** When the check started (ms since the epoch): with durationMs, a suite's wall time when checks ran concurrently. */
  startedAt?: number;
  file: string;
  /** The known-deviations entry that turned a failure into a known deviation. */
  knownDeviation?: KnownDeviation;
  /** What the target did on the last requests of a check that did not pass (status, telling headers, first bytes). */
  failingRequests?: FailingRequest[];
}

export type RunVerdict = 'conformant' | 'nonconformant' | 'incomplete' | 'error';

/**
 * The exit statuses of both commands (the conformance command and client conformance) and of the shard merge, in
 * one place: each run verdict's, a usage or configuration error's (before any verdict), a signal's.
 */
export const EXIT_CODES: Record<RunVerdict, number> = { conformant: 0, nonconformant: 1, error: 3, incomplete: 4 };
export const USAGE_EXIT = 2;
export const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 130, SIGTERM: 143 };
/** The exit statuses as a usage text gives them. */
export const EXIT_STATUS_TEXT = `Exit status: ${EXIT_CODES.conformant} conformant · ${EXIT_CODES.nonconformant} nonconformant · ${USAGE_EXIT} usage or configuration error · ${EXIT_CODES.error} error (the run could not decide, or stopped before it finished) · ${EXIT_CODES.incomplete} incomplete · ${SIGNAL_EXIT.SIGINT}/${SIGNAL_EXIT.SIGTERM} interrupted (its partial results are written).`;

/**
 * What a run found, each as the sentence that gives the verdict when it is the first that holds. Both commands
 * decide through decideRun (the conformance command's runVerdict below, client conformance's decide): one ladder,
 * one vocabulary, one rule for a partial run.
 */
export interface RunFindings {
  /** What kept the run from judging anything: an unreachable target, a client command that could not start. */
  cannotRun?: string;
  /** What failed: MUST requirements, client rules, a client that crashed. */
  failed?: string;
  /** Why the run stopped before it finished (a signal, a time bound): a partial run is never conformant. */
  stoppedEarly?: string;
  /** What the run could not decide for reasons of its own or the target's (unavailable, harness errors). */
  error?: string;
  /** What was left undecided. */
  undecided?: string;
  /** The sentence of a conformant run. */
  verified: string;
}

/** The run's verdict: the first finding that holds, in the order of RunFindings (the README's table). */
export function decideRun(f: RunFindings): { verdict: RunVerdict; message: string } {
  if (f.cannotRun) return { verdict: 'error', message: f.cannotRun };
  if (f.failed) return { verdict: 'nonconformant', message: f.failed };
  if (f.stoppedEarly !== undefined) return { verdict: 'error', message: `the run stopped before it finished (${f.stoppedEarly}); the results are partial` };
  if (f.error) return { verdict: 'error', message: f.error };
  if (f.undecided) return { verdict: 'incomplete', message: f.undecided };
  return { verdict: 'conformant', message: f.verified };
}

export type RequirementVerdict =
  | 'pass'
  | 'fail'
  | 'warning'
  | 'known deviation'
  | 'error'
  | 'setup error'
  | 'skipped'
  | 'not exercised'
  | 'declared unchecked'
  | 'not run'
  | 'unverifiable'
  | 'not applicable'
  | 'client rule';

/** Requirement verdicts that leave a requirement undecided: neither verified nor failed. */
export const UNDECIDED: RequirementVerdict[] = ['setup error', 'skipped', 'not run', 'error'];

/** A requirement the team declared it cannot check (the "unchecked" list of the known-deviations file). */
export interface DeclaredUnchecked {
  id: string;
  reason: string;
}

/** How much of one service's MUST requirements the run verified: the evidence behind the verdict. */
export interface ServiceEvidence {
  service: Service;
  target: string | null;
  /** MUST requirements on the server that can be checked from outside (unverifiable and client rules excluded). */
  must: number;
  verified: number;
  failed: number;
  knownDeviations: number;
  undecided: number;
  notExercised: number;
  declaredUnchecked: number;
  /** MUST requirements that cannot be observed from outside (each with its reason in the catalogue). */
  unverifiable: number;
}

/** A requirement the run left undecided, and what would decide it. */
export interface Undecided {
  id: string;
  service: Service;
  level: Level;
  verdict: RequirementVerdict;
  checks: string[];
  /** What would decide it: the variable to set, the data the target needs, or why it did not run. */
  toDecide: string;
  /** A fact behind it the run's verdict says first (the configured key was refused). */
  cause?: SkipCause;
}

/** One requirement of the catalogue, with the verdict its checks reached in this run. */
export interface RequirementResult {
  id: string;
  service: Service;
  document: string;
  section: string;
  level: Level;
  subject: 'server' | 'client';
  summary: string;
  text: string;
  verdict: RequirementVerdict;
  checks: { id: string; title: string; verdict: Verdict }[];
  reason?: string;
  /** The cause of the skip that left it undecided, when the harness named one. */
  cause?: SkipCause;
  /**
   * Left undecided by a setup error: the requirements its checks depend on (their preconditions' dependsOn), and of
   * those the ones this run found broken (the failure that explains it, reported there).
   */
  dependsOn?: string[];
  dependsOnFailed?: string[];
  knownDeviation?: KnownDeviation;
}

export interface DeviationStatus extends KnownDeviation {
  /** seen: a check failed as listed; no longer seen: every check it covers passed (remove the entry); not run; undecided. */
  status: 'seen' | 'no longer seen' | 'not run' | 'undecided';
  checks: string[];
}

export interface Summary {
  /** Version of this format (specs/summary.schema.json). */
  schemaVersion: string;
  /** Version of the suite that wrote it. */
  suiteVersion: string;
  verdict: RunVerdict;
  complete: boolean;
  exitCode: number;
  message: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  targets: { feed: string | null; gateway: string | null; embedded: boolean; description?: string };
  /** The services this run (or shard) was to check: with the facts below, what a shard merge needs besides the checks. */
  services: Service[];
  /** The target that could not be reached, when that ended the run. */
  unreachable?: string;
  /** Why the run stopped early (a signal, the run's time bound). */
  interruption?: string;
  counts: {
    passed: number;
    failed: number;
    skipped: number;
    warnings: number;
    setupErrors: number;
    unavailable: number;
    errors: number;
    knownDeviations: number;
    total: number;
  };
  requests: number;
  requestsByService: Record<string, number>;
  billableCalls: number;
  budget: number;
  failures: { id: string; title: string; requirement: string; level?: Level; message: string }[];
  warnings: { id: string; title: string; requirement: string; level?: Level; message: string }[];
  notDecided: { id: string; title: string; requirement: string; verdict: Verdict; message: string }[];
  /** Per service: MUST requirements verified, failed, undecided, not exercised, declared unchecked. */
  evidence: ServiceEvidence[];
  /** Requirements left undecided (MUST ones make the run incomplete), each with what would decide it. */
  undecided: Undecided[];
  /** Requirements only a condition the suite does not provoke by default could exercise. */
  notExercised: { id: string; service: Service; level: Level; why: string }[];
  /** Requirements the team declared unchecked, and whether the run decided them anyway. */
  declaredUnchecked: (DeclaredUnchecked & { status: 'unchecked' | 'decided anyway' | 'not in this run' })[];
  /** --allow-incomplete was given: an incomplete run exits 0 (its verdict stays `incomplete`). */
  allowIncomplete: boolean;
  /** --grep was given: requirements none of whose checks were selected are not counted. */
  grep?: string;
  harnessErrors: string[];
  knownDeviations: DeviationStatus[];
  requirements: RequirementResult[];
  checks: CheckResult[];
}

/** A check's requirement ids as one string, as the summary and the reports list them. */
export const reqOf = (c: CheckResult) => c.requirements.join(', ');

/** What the verdict model needs besides the check results. */
export interface RunFacts {
  harnessErrors: string[];
  startedAt: number;
  targets: Summary['targets'];
  requests: number;
  requestsByService: Record<string, number>;
  billableCalls: number;
  budget: number;
  complete: boolean;
  unreachable?: string;
  /** Why the run stopped early (a signal, the run's time bound). */
  interruption?: string;
  services?: Service[];
  knownDeviations?: KnownDeviation[];
  unchecked?: DeclaredUnchecked[];
  allowIncomplete?: boolean;
  grep?: string;
  /** The requirement catalogue (src/spec.ts loadCatalogue().values()). */
  catalogue: Iterable<CatalogueEntry>;
  /** When the run finished (ms since the epoch). */
  finishedAt: number;
}

/** How many checks ended in each verdict. */
export function countVerdicts(results: CheckResult[]): Summary['counts'] {
  const count = (v: Verdict) => results.filter((r) => r.verdict === v).length;
  return {
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    warnings: count('warning'),
    setupErrors: count('setup-error'),
    unavailable: count('unavailable'),
    errors: count('error'),
    knownDeviations: count('known-deviation'),
    total: results.length,
  };
}

/** The failures, warnings and checks not decided, each with its requirement ids and message. */
export function checkLists(results: CheckResult[]): Pick<Summary, 'failures' | 'warnings' | 'notDecided'> {
  const line = (r: CheckResult) => ({ id: r.id, title: r.title, requirement: reqOf(r), level: r.level, message: r.message ?? '' });
  return {
    failures: results.filter((r) => r.verdict === 'failed').map(line),
    warnings: results.filter((r) => r.verdict === 'warning').map(line),
    notDecided: results
      .filter((r) => r.verdict === 'setup-error' || r.verdict === 'unavailable' || r.verdict === 'error')
      .map((r) => ({ id: r.id, title: r.title, requirement: reqOf(r), verdict: r.verdict, message: r.message ?? '' })),
  };
}

/** Per judged service: its MUST requirements verified, failed, undecided, not exercised, declared unchecked. */
function evidenceOf(
  requirements: RequirementResult[],
  judged: Service[],
  considered: (q: RequirementResult) => boolean,
  targets: Summary['targets'],
): ServiceEvidence[] {
  return judged.map((sv) => {
    const must = requirements.filter((q) => q.service === sv && q.level === 'MUST' && q.subject === 'server');
    const n = (...v: RequirementVerdict[]) => must.filter((q) => considered(q) && v.includes(q.verdict)).length;
    return {
      service: sv,
      target: sv === 'feed' ? targets.feed : targets.gateway,
      must: must.filter((q) => q.verdict !== 'unverifiable' && q.verdict !== 'not applicable' && considered(q)).length,
      verified: n('pass', 'warning'),
      failed: n('fail'),
      knownDeviations: n('known deviation'),
      undecided: n(...UNDECIDED),
      notExercised: n('not exercised'),
      declaredUnchecked: n('declared unchecked'),
      unverifiable: must.filter((q) => q.verdict === 'unverifiable' || q.verdict === 'not applicable').length,
    };
  });
}

/** The run's verdict and the sentence that gives it: the README's table, first matching row wins. */
export function runVerdict(f: {
  counts: Summary['counts'];
  failingRequirements: number;
  undecided: Undecided[];
  notExercised: number;
  evidence: ServiceEvidence[];
  complete: boolean;
  harnessErrors: number;
  unreachable?: string;
  interruption?: string;
  allowIncomplete?: boolean;
}): { verdict: RunVerdict; message: string } {
  const { counts } = f;
  const undecidedMust = f.undecided.filter((u) => u.level === 'MUST' && u.verdict !== 'error');
  const verified = f.evidence.reduce((a, e) => a + e.verified, 0);
  const declared = f.evidence.reduce((a, e) => a + e.declaredUnchecked, 0);
  const extras = [
    counts.knownDeviations && `${counts.knownDeviations} known deviation(s)`,
    counts.warnings && `${counts.warnings} SHOULD/MAY warning(s)`,
    f.notExercised && `${f.notExercised} requirement(s) not exercised`,
    declared && `${declared} declared unchecked`,
    counts.setupErrors && `${counts.setupErrors} SHOULD/MAY check(s) undecided`,
  ].filter(Boolean);
  const error =
    counts.unavailable > 0
      ? `the target was unavailable for ${counts.unavailable} check(s) (429/503 past the retry cap, or the request budget ran out): no verdict on them`
      : counts.errors > 0 || f.harnessErrors > 0
        ? `the suite could not run ${counts.errors + f.harnessErrors} check(s) (harness errors)`
        : counts.total === 0
          ? 'no check ran (is --grep too narrow?)'
          : undefined;
  return decideRun({
    cannotRun: f.unreachable,
    failed: counts.failed > 0 ? `${f.failingRequirements} MUST requirement(s) failed (${counts.failed} check(s))` : undefined,
    stoppedEarly: f.complete ? undefined : (f.interruption ?? 'interrupted'),
    error,
    undecided: undecidedMust.length > 0 ? incompleteMessage(undecidedMust, f.allowIncomplete) : undefined,
    verified: `every MUST requirement checked was verified (${verified} verified, none failed)${extras.length ? `; ${extras.join('; ')}` : ''}`,
  });
}

function incompleteMessage(undecidedMust: Undecided[], allowIncomplete?: boolean): string {
  const allowed = allowIncomplete ? '; exit 0 because of --allow-incomplete' : '';
  // A configured key the target refused is a configuration problem: say that first, once.
  const refused = undecidedMust.find((u) => u.cause === 'key-refused')?.toDecide.replace(/^not configured: /, '');
  if (refused) return `${refused.split('\n')[0]} (${undecidedMust.length} MUST requirement(s) could not be checked)${allowed}`;
  const some = undecidedMust.slice(0, 4).map((u) => u.id);
  return (
    `no MUST requirement failed, but ${undecidedMust.length} MUST requirement(s) were not verified (${some.join(', ')}${undecidedMust.length > 4 ? ', …' : ''}): ` +
    `see what would decide them, or, to accept that this deployment cannot be checked on them, list them under "unchecked" in the known-deviations file (--known-deviations)${allowed}`
  );
}

/** The exit status of a run verdict: --allow-incomplete lets an incomplete run exit 0; a partial run never does. */
export function exitCodeOf(verdict: RunVerdict, o: { allowIncomplete?: boolean; complete: boolean }): number {
  let exitCode = EXIT_CODES[verdict];
  if (verdict === 'incomplete' && o.allowIncomplete) exitCode = 0;
  if (!o.complete && exitCode === 0) exitCode = 3;
  return exitCode;
}

/** The summary of a run: check results → requirement verdicts → the run's verdict and exit status. */
export function summarize(checkResults: CheckResult[], o: RunFacts): Summary {
  const deviations = o.knownDeviations ?? [];
  const results = checkResults.map((r) => applyDeviation(r, deviations));
  const counts = countVerdicts(results);
  const services = o.services ?? [...new Set(results.map((r) => r.service).filter((x): x is Service => !!x))];
  const unchecked = o.unchecked ?? [];
  const requirements = requirementResults(results, services, o.catalogue, unchecked);
  // A service is judged only when checks of it ran (a shard may hold the other service's checks only).
  const judged = services.filter((sv) => results.some((r) => r.service === sv));
  const considered = (q: RequirementResult) => judged.includes(q.service) && q.subject === 'server' && !(o.grep && q.verdict === 'not run');
  const undecided: Undecided[] = requirements
    .filter((q) => considered(q) && UNDECIDED.includes(q.verdict))
    .map((q) => ({
      id: q.id,
      service: q.service,
      level: q.level,
      verdict: q.verdict,
      checks: q.checks.map((c) => c.id),
      toDecide: q.reason ?? '',
      ...(q.cause ? { cause: q.cause } : {}),
    }));
  const notExercised = requirements
    .filter((q) => considered(q) && q.verdict === 'not exercised')
    .map((q) => ({ id: q.id, service: q.service, level: q.level, why: q.reason ?? '' }));
  const evidence = evidenceOf(requirements, judged, considered, o.targets);
  const { verdict, message } = runVerdict({
    counts,
    failingRequirements: requirements.filter((q) => q.verdict === 'fail').length,
    undecided,
    notExercised: notExercised.length,
    evidence,
    complete: o.complete,
    harnessErrors: o.harnessErrors.length,
    unreachable: o.unreachable,
    interruption: o.interruption,
    allowIncomplete: o.allowIncomplete,
  });
  return {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    suiteVersion: SUITE_VERSION,
    verdict,
    complete: o.complete,
    exitCode: exitCodeOf(verdict, o),
    message,
    startedAt: new Date(o.startedAt).toISOString(),
    finishedAt: new Date(o.finishedAt).toISOString(),
    durationMs: o.finishedAt - o.startedAt,
    targets: o.targets,
    services,
    ...(o.unreachable ? { unreachable: o.unreachable } : {}),
    ...(o.interruption ? { interruption: o.interruption } : {}),
    counts,
    requests: o.requests,
    requestsByService: o.requestsByService,
    billableCalls: o.billableCalls,
    budget: o.budget,
    ...checkLists(results),
    evidence,
    undecided,
    notExercised,
    declaredUnchecked: unchecked.map((u) => {
      const q = requirements.find((x) => x.id === u.id);
      return { ...u, status: !q || q.verdict === 'not run' ? 'not in this run' : q.verdict === 'declared unchecked' ? 'unchecked' : 'decided anyway' };
    }),
    allowIncomplete: o.allowIncomplete ?? false,
    ...(o.grep ? { grep: o.grep } : {}),
    harnessErrors: o.harnessErrors,
    knownDeviations: deviations.map((d) => deviationStatus(d, results)),
    requirements,
    checks: results,
  };
}

/**
 * One summary from the summaries of shards (CI jobs that each ran `--shard I/N`), by concatenation: each shard's
 * summary already holds its checks, its requirements' verdicts, its evidence and what it left undecided, and the
 * facts its verdict rested on (the services it was to check, the known deviations and declared-unchecked list with
 * their status, --allow-incomplete, --grep, what ended it early), so nothing is decided again: the lists are joined
 * and the run's verdict is read from them by runVerdict, as one run's is. A service is checked by one shard (the
 * --shard rule); a requirement or list entry two shards both hold is taken from the shard that decided it.
 */
export function mergeSummaries(shards: Summary[]): Summary {
  const pick = (k: 'feed' | 'gateway') => shards.map((s) => s.targets[k]).find((t) => t) ?? null;
  const embedded = shards.every((s) => s.targets.embedded);
  const description = shards.find((s) => s.targets.description)?.targets.description;
  const byService: Record<string, number> = {};
  for (const s of shards) for (const [k, v] of Object.entries(s.requestsByService)) byService[k] = (byService[k] ?? 0) + v;
  const greps = [...new Set(shards.map((s) => s.grep).filter((g): g is string => !!g))];
  const checks = shards.flatMap((s) => s.checks);
  const counts = countVerdicts(checks);
  const requirements = decidedFirst(
    shards.flatMap((s) => s.requirements),
    (q) => q.verdict === 'not run',
  );
  const undecided = shards.flatMap((s) => s.undecided);
  const notExercised = shards.flatMap((s) => s.notExercised);
  const evidence = shards.flatMap((s) => s.evidence);
  const complete = shards.every((s) => s.complete);
  const harnessErrors = shards.flatMap((s) => s.harnessErrors);
  const unreachable = shards.find((s) => s.unreachable)?.unreachable;
  const interruption = shards.find((s) => s.interruption)?.interruption;
  const allowIncomplete = shards.every((s) => s.allowIncomplete);
  const { verdict, message } = runVerdict({
    counts,
    failingRequirements: requirements.filter((q) => q.verdict === 'fail').length,
    undecided,
    notExercised: notExercised.length,
    evidence,
    complete,
    harnessErrors: harnessErrors.length,
    unreachable,
    interruption,
    allowIncomplete,
  });
  const startedAt = Math.min(...shards.map((s) => Date.parse(s.startedAt)));
  const finishedAt = Math.max(...shards.map((s) => Date.parse(s.finishedAt)));
  return {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    suiteVersion: SUITE_VERSION,
    verdict,
    complete,
    exitCode: exitCodeOf(verdict, { allowIncomplete, complete }),
    message,
    startedAt: new Date(startedAt).toISOString(),
    finishedAt: new Date(finishedAt).toISOString(),
    durationMs: finishedAt - startedAt,
    targets: { feed: pick('feed'), gateway: pick('gateway'), embedded, ...(embedded && description ? { description } : {}) },
    services: [...new Set(shards.flatMap((s) => s.services ?? s.requirements.map((r) => r.service)))],
    ...(unreachable ? { unreachable } : {}),
    ...(interruption ? { interruption } : {}),
    counts,
    requests: shards.reduce((a, s) => a + s.requests, 0),
    requestsByService: byService,
    billableCalls: shards.reduce((a, s) => a + s.billableCalls, 0),
    budget: shards.reduce((a, s) => a + s.budget, 0),
    failures: shards.flatMap((s) => s.failures),
    warnings: shards.flatMap((s) => s.warnings),
    notDecided: shards.flatMap((s) => s.notDecided),
    evidence,
    undecided,
    notExercised,
    declaredUnchecked: decidedFirst(
      shards.flatMap((s) => s.declaredUnchecked),
      (u) => u.status === 'not in this run',
    ),
    allowIncomplete,
    ...(greps.length ? { grep: greps.join(',') } : {}),
    harnessErrors,
    knownDeviations: decidedFirst(
      shards.flatMap((s) => s.knownDeviations),
      (d) => d.status === 'not run',
    ),
    requirements,
    checks,
  };
}

/** One entry per id, in first-seen order: the first a shard decided, else the first (another shard's says "not in this run"). */
function decidedFirst<T extends { id: string }>(xs: T[], elsewhere: (x: T) => boolean): T[] {
  const out = new Map<string, T>();
  for (const x of xs) if (!out.has(x.id) || (elsewhere(out.get(x.id)!) && !elsewhere(x))) out.set(x.id, x);
  return [...out.values()];
}

const covers = (d: KnownDeviation, r: CheckResult) => d.id === r.id || r.requirements.includes(d.id);

/** A failure or warning a known-deviations entry covers becomes a known deviation: reported, not failing the run. */
export function applyDeviation(r: CheckResult, deviations: KnownDeviation[]): CheckResult {
  if (r.verdict !== 'failed' && r.verdict !== 'warning') return r;
  const d = deviations.find((x) => covers(x, r));
  return d ? { ...r, verdict: 'known-deviation', knownDeviation: d } : r;
}

function deviationStatus(d: KnownDeviation, results: CheckResult[]): DeviationStatus {
  const mine = results.filter((r) => covers(d, r));
  const ran = mine.filter((r) => r.verdict !== 'skipped');
  const status: DeviationStatus['status'] = mine.some((r) => r.verdict === 'known-deviation')
    ? 'seen'
    : ran.length === 0
      ? 'not run'
      : ran.every((r) => r.verdict === 'passed')
        ? 'no longer seen'
        : 'undecided';
  return { ...d, status, checks: mine.map((r) => r.id) };
}

/** The requirements a requirement's setup errors depend on, each once. */
function dependencies(mine: CheckResult[]): Pick<RequirementResult, 'dependsOn'> {
  const ids = [...new Set(mine.filter((c) => c.verdict === 'setup-error').flatMap((c) => c.dependsOn ?? []))];
  return ids.length ? { dependsOn: ids } : {};
}

/** The kind of a skip, as the harness recorded it: a skip it did not decide (a filter's) counts as not configured. */
function skipKind(c: CheckResult): 'not configured' | 'not exercised' {
  return c.skip && c.skip.kind !== 'not configured' ? 'not exercised' : 'not configured';
}

/**
 * Every requirement of the services run, with the verdict of the checks citing it. A requirement is verified
 * ("pass") only when every check citing it decided it: one check left undecided (not configured, a setup error)
 * leaves the requirement undecided, unless another check already found it broken.
 */
export function requirementResults(
  results: CheckResult[],
  services: Service[],
  catalogue: Iterable<CatalogueEntry>,
  unchecked: DeclaredUnchecked[] = [],
): RequirementResult[] {
  const out: RequirementResult[] = [];
  const declared = new Map(unchecked.map((u) => [u.id, u]));
  for (const r of catalogue) {
    if (!services.includes(r.service)) continue;
    const mine = results.filter((c) => c.requirements.includes(r.id));
    const has = (v: Verdict) => mine.some((c) => c.verdict === v);
    const notConfigured = mine.filter((c) => c.verdict === 'skipped' && skipKind(c) === 'not configured');
    let verdict: RequirementVerdict;
    if (mine.length === 0) verdict = r.unverifiable ? 'unverifiable' : r.notApplicable ? 'not applicable' : r.subject === 'client' ? 'client rule' : 'not run';
    else if (has('failed')) verdict = 'fail';
    else if (has('known-deviation')) verdict = 'known deviation';
    else if (has('warning')) verdict = 'warning';
    else if (has('unavailable') || has('error')) verdict = 'error';
    else if (has('setup-error')) verdict = 'setup error';
    else if (notConfigured.length > 0) verdict = 'skipped';
    else if (mine.every((c) => c.verdict === 'skipped')) verdict = 'not exercised';
    else verdict = 'pass';
    const declaration = declared.get(r.id);
    if (declaration && UNDECIDED.includes(verdict) && verdict !== 'error') verdict = 'declared unchecked';
    const firstReason = (f: (c: CheckResult) => boolean) => mine.find((c) => f(c) && c.message)?.message;
    const cause = notConfigured.find((c) => c.skip?.cause)?.skip?.cause;
    out.push({
      id: r.id,
      service: r.service,
      document: r.documentTitle,
      section: r.section,
      level: r.level,
      subject: r.subject,
      summary: r.summary,
      text: r.text,
      verdict,
      checks: mine.map((c) => ({ id: c.id, title: c.title, verdict: c.verdict })),
      reason:
        verdict === 'unverifiable'
          ? r.unverifiable
          : verdict === 'not applicable'
            ? r.notApplicable
            : verdict === 'client rule'
              ? 'a rule for clients: the suite keeps it, and the project tests verify that'
              : verdict === 'not run'
                ? 'no check of this run cites it'
                : verdict === 'declared unchecked'
                  ? `declared unchecked: ${declaration!.reason}`
                  : verdict === 'setup error'
                    ? firstReason((c) => c.verdict === 'setup-error')
                    : verdict === 'skipped'
                      ? firstReason((c) => c.verdict === 'skipped' && skipKind(c) === 'not configured')
                      : firstReason((c) => c.verdict !== 'passed'),
      ...(verdict === 'skipped' && cause ? { cause } : {}),
      ...(verdict === 'setup error' ? dependencies(mine) : {}),
      knownDeviation: mine.find((c) => c.knownDeviation)?.knownDeviation,
    });
  }
  const failed = new Set(out.filter((q) => q.verdict === 'fail').map((q) => q.id));
  for (const q of out) if (q.dependsOn) q.dependsOnFailed = q.dependsOn.filter((id) => failed.has(id));
  return out;
}
