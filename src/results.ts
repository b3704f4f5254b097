/**
 * Results of a run: a vitest reporter that classifies every check by the verdict the harness recorded, and the
 * writers of summary.json and junit.xml. Written from what was collected so far, so an interrupted run still
 * leaves a (partial) summary.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import { loadCatalogue, type Level, type Service } from './spec.js';
import type { KnownDeviation } from './config.js';
import type { FailingRequest, Verdict } from './harness.js';
import { ctrfReport } from './ctrf.js';
import { SUITE_VERSION, SUMMARY_SCHEMA_VERSION } from './version.js';

export interface CheckResult {
  id: string;
  title: string;
  service?: Service;
  requirements: string[];
  level?: Level;
  verdict: Verdict;
  message?: string;
  observations?: Record<string, string>;
  requests: number;
  durationMs: number;
  file: string;
  /** The known-deviations entry that turned a failure into a known deviation. */
  knownDeviation?: KnownDeviation;
  /** What the target did on the last requests of a check that did not pass (status, telling headers, first bytes). */
  failingRequests?: FailingRequest[];
}

export type RunVerdict = 'conformant' | 'nonconformant' | 'incomplete' | 'error';

/** Exit status of each run verdict (2 is a usage or configuration error, before any verdict). */
export const EXIT_CODES: Record<RunVerdict, number> = { conformant: 0, nonconformant: 1, error: 3, incomplete: 4 };

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

export class ResultCollector implements Reporter {
  readonly results: CheckResult[] = [];
  readonly harnessErrors: string[] = [];
  private readonly testIds = new Map<CheckResult, string>();

  onTestCaseResult(tc: TestCase): void {
    const meta = tc.meta();
    const r = tc.result();
    if (r.state === 'pending') return;
    let verdict: Verdict = meta.verdict ?? (r.state === 'failed' ? 'error' : r.state === 'skipped' ? 'skipped' : 'passed');
    // A check that failed outside the harness's classification (a timeout of the test itself) is a harness error.
    if (r.state === 'failed' && (verdict === 'passed' || verdict === 'warning' || verdict === 'skipped')) verdict = 'error';
    const err = r.state === 'failed' ? r.errors?.[0] : undefined;
    const message = meta.reason ?? err?.message ?? (r.state === 'skipped' ? r.note : undefined);
    const result: CheckResult = {
      id: meta.check ?? tc.name,
      title: tc.name,
      service: meta.service,
      requirements: meta.requirements ?? [],
      level: meta.level,
      verdict,
      message,
      observations: meta.observations,
      requests: meta.requests ?? 0,
      durationMs: Math.round(tc.diagnostic()?.duration ?? 0),
      file: meta.file ?? tc.module.relativeModuleId,
      failingRequests: meta.failingRequests,
    };
    this.results.push(result);
    this.testIds.set(result, tc.id);
  }

  onTestModuleEnd(mod: TestModule): void {
    for (const e of mod.errors()) this.harnessErrors.push(`${mod.relativeModuleId}: ${e.message}`);
  }

  /** Declaration order of every collected check: the order the reports list them in. */
  private readonly declared = new Map<string, number>();

  onTestModuleCollected(mod: TestModule): void {
    for (const t of mod.children.allTests()) if (!this.declared.has(t.id)) this.declared.set(t.id, this.declared.size);
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<{ message?: string }>): void {
    for (const e of unhandled) this.harnessErrors.push(`unhandled: ${e.message ?? String(e)}`);
  }

  /**
   * The results in the order the checks are declared: checks end in any order when they run concurrently, and the
   * reports (a partial one too) list them so that two runs of the same suite read the same.
   */
  ordered(): CheckResult[] {
    const at = (r: CheckResult) => this.declared.get(this.testIds.get(r) ?? '') ?? Number.MAX_SAFE_INTEGER;
    return [...this.results].sort((a, b) => at(a) - at(b));
  }
}

/**
 * The console during a run, unless --verbose: one line per check that did not pass, as it ends (its verdict and
 * its whole reason), then one line per suite module with its count of checks; no stack traces or code frames. The
 * closing lines give the verdict.
 */
export class ProgressReporter implements Reporter {
  constructor(private readonly log: (line: string) => void) {}
  /** A check that did not pass is printed as soon as it ends, with its whole reason. */
  onTestCaseResult(t: TestCase): void {
    const m = t.meta();
    if (m.verdict === 'passed') return;
    const reason = (m.reason ?? t.result().errors?.[0]?.message ?? '').trim().replace(/\n+/g, '\n        ');
    this.log(`    ${(m.verdict ?? 'error').toUpperCase()} ${m.check ?? t.name}: ${reason}`);
  }

  /** All checks run in one test file: at its end, one line per suite module that defines them, in path order. */
  onTestModuleEnd(mod: TestModule): void {
    const byFile = new Map<string, TestCase[]>();
    for (const t of mod.children.allTests()) {
      const file = t.meta().file ?? mod.relativeModuleId;
      byFile.set(file, [...(byFile.get(file) ?? []), t]);
    }
    for (const [file, tests] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
      const bad = tests.filter((t) => t.meta().verdict !== 'passed').length;
      this.log(`  ${file}: ${tests.length} check(s)${bad ? `, ${bad} not passed` : ''}`);
    }
    for (const e of mod.errors()) this.log(`    HARNESS ERROR ${mod.relativeModuleId}: ${e.message}`);
  }
}

const reqOf = (c: CheckResult) => c.requirements.join(', ');

export function summarize(
  results: CheckResult[],
  o: {
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
  },
): Summary {
  const deviations = o.knownDeviations ?? [];
  results = results.map((r) => applyDeviation(r, deviations));
  const count = (v: Verdict) => results.filter((r) => r.verdict === v).length;
  const counts = {
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
  const failures = results
    .filter((r) => r.verdict === 'failed')
    .map((r) => ({ id: r.id, title: r.title, requirement: reqOf(r), level: r.level, message: r.message ?? '' }));
  const warnings = results
    .filter((r) => r.verdict === 'warning')
    .map((r) => ({ id: r.id, title: r.title, requirement: reqOf(r), level: r.level, message: r.message ?? '' }));
  const notDecided = results
    .filter((r) => r.verdict === 'setup-error' || r.verdict === 'unavailable' || r.verdict === 'error')
    .map((r) => ({ id: r.id, title: r.title, requirement: reqOf(r), verdict: r.verdict, message: r.message ?? '' }));

  const services = o.services ?? [...new Set(results.map((r) => r.service).filter((x): x is Service => !!x))];
  const unchecked = o.unchecked ?? [];
  const requirements = requirementResults(results, services, unchecked);
  // A service is judged only when checks of it ran (a shard may hold the other service's checks only).
  const judged = services.filter((sv) => results.some((r) => r.service === sv));
  const considered = (q: RequirementResult) => judged.includes(q.service) && q.subject === 'server' && !(o.grep && q.verdict === 'not run');
  const undecided: Undecided[] = requirements
    .filter((q) => considered(q) && UNDECIDED.includes(q.verdict))
    .map((q) => ({ id: q.id, service: q.service, level: q.level, verdict: q.verdict, checks: q.checks.map((c) => c.id), toDecide: q.reason ?? '' }));
  const notExercised = requirements
    .filter((q) => considered(q) && q.verdict === 'not exercised')
    .map((q) => ({ id: q.id, service: q.service, level: q.level, why: q.reason ?? '' }));
  const evidence: ServiceEvidence[] = judged.map((sv) => {
    const must = requirements.filter((q) => q.service === sv && q.level === 'MUST' && q.subject === 'server');
    const n = (...v: RequirementVerdict[]) => must.filter((q) => considered(q) && v.includes(q.verdict)).length;
    return {
      service: sv,
      target: sv === 'feed' ? o.targets.feed : o.targets.gateway,
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
  const undecidedMust = undecided.filter((u) => u.level === 'MUST' && u.verdict !== 'error');

  let verdict: RunVerdict;
  let message: string;
  if (o.unreachable) {
    verdict = 'error';
    message = o.unreachable;
  } else if (counts.failed > 0) {
    verdict = 'nonconformant';
    const failing = requirements.filter((q) => q.verdict === 'fail').length;
    message = `${failing} MUST requirement(s) failed (${counts.failed} check(s))`;
  } else if (!o.complete || counts.unavailable > 0 || counts.errors > 0 || o.harnessErrors.length > 0) {
    verdict = 'error';
    message = !o.complete
      ? `the run stopped before it finished (${o.interruption ?? 'interrupted'}); the results are partial`
      : counts.unavailable > 0
        ? `the target was unavailable for ${counts.unavailable} check(s) (429/503 past the retry cap, or the request budget ran out): no verdict on them`
        : `the suite could not run ${counts.errors + o.harnessErrors.length} check(s) (harness errors)`;
  } else if (counts.total === 0) {
    verdict = 'error';
    message = 'no check ran (is --grep too narrow?)';
  } else if (undecidedMust.length > 0) {
    verdict = 'incomplete';
    // A configured key the target refused is a configuration problem: say that first, once.
    const refused = undecidedMust.find((u) => /was refused with/.test(u.toDecide))?.toDecide.replace(/^not configured: /, '');
    message = refused
      ? `${refused.split('\n')[0]} (${undecidedMust.length} MUST requirement(s) could not be checked)${o.allowIncomplete ? '; exit 0 because of --allow-incomplete' : ''}`
      : `no MUST requirement failed, but ${undecidedMust.length} MUST requirement(s) were not verified (${undecidedMust
          .slice(0, 4)
          .map((u) => u.id)
          .join(
            ', ',
          )}${undecidedMust.length > 4 ? ', …' : ''}): see what would decide them${o.allowIncomplete ? '; exit 0 because of --allow-incomplete' : ''}`;
  } else {
    verdict = 'conformant';
    const verified = evidence.reduce((a, e) => a + e.verified, 0);
    const extras = [
      counts.knownDeviations && `${counts.knownDeviations} known deviation(s)`,
      counts.warnings && `${counts.warnings} SHOULD/MAY warning(s)`,
      notExercised.length && `${notExercised.length} requirement(s) not exercised`,
      evidence.some((e) => e.declaredUnchecked) && `${evidence.reduce((a, e) => a + e.declaredUnchecked, 0)} declared unchecked`,
      counts.setupErrors && `${counts.setupErrors} SHOULD/MAY check(s) undecided`,
    ].filter(Boolean);
    message = `every MUST requirement checked was verified (${verified} verified, none failed)${extras.length ? `; ${extras.join('; ')}` : ''}`;
  }
  let exitCode = EXIT_CODES[verdict];
  if (verdict === 'incomplete' && o.allowIncomplete) exitCode = 0;
  if (!o.complete && exitCode === 0) exitCode = 3;
  const finished = Date.now();
  return {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    suiteVersion: SUITE_VERSION,
    verdict,
    complete: o.complete,
    exitCode,
    message,
    startedAt: new Date(o.startedAt).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - o.startedAt,
    targets: o.targets,
    counts,
    requests: o.requests,
    requestsByService: o.requestsByService,
    billableCalls: o.billableCalls,
    budget: o.budget,
    failures,
    warnings,
    notDecided,
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

const covers = (d: KnownDeviation, r: CheckResult) => d.id === r.id || r.requirements.includes(d.id);

/** A failure or warning a known-deviations entry covers becomes a known deviation: reported, not failing the run. */
function applyDeviation(r: CheckResult, deviations: KnownDeviation[]): CheckResult {
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

/** The kind of a skip, from the reason the harness gave it. */
function skipKind(c: CheckResult): 'not configured' | 'not exercised' {
  return /^not (applicable|exercised):/.test(c.message ?? '') ? 'not exercised' : 'not configured';
}

/**
 * Every requirement of the services run, with the verdict of the checks citing it. A requirement is verified
 * ("pass") only when every check citing it decided it: one check left undecided (not configured, a setup error)
 * leaves the requirement undecided, unless another check already found it broken.
 */
export function requirementResults(results: CheckResult[], services: Service[], unchecked: DeclaredUnchecked[] = []): RequirementResult[] {
  const out: RequirementResult[] = [];
  const declared = new Map(unchecked.map((u) => [u.id, u]));
  for (const r of loadCatalogue().values()) {
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
      knownDeviation: mine.find((c) => c.knownDeviation)?.knownDeviation,
    });
  }
  return out;
}

const xml = (s: string) =>
  s
    // Characters XML 1.0 forbids: C0 controls but tab/LF/CR, U+FFFE/U+FFFF, and unpaired surrogates.
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** JUnit XML: failure = MUST violation; error = setup error, target unavailable, harness error; skipped = not configured. */
export function junitXml(s: Pick<Summary, 'checks' | 'counts' | 'verdict' | 'message' | 'harnessErrors' | 'durationMs'>): string {
  const bySuite = new Map<string, CheckResult[]>();
  for (const c of s.checks) {
    const key = c.service ?? 'suite';
    bySuite.set(key, [...(bySuite.get(key) ?? []), c]);
  }
  const suites = [...bySuite].map(([name, checks]) => {
    const failures = checks.filter((c) => c.verdict === 'failed').length;
    const errors = checks.filter((c) => ['setup-error', 'unavailable', 'error'].includes(c.verdict)).length;
    const skipped = checks.filter((c) => c.verdict === 'skipped' || c.verdict === 'known-deviation').length;
    const time = checks.reduce((a, c) => a + c.durationMs, 0) / 1000;
    const cases = checks.map((c) => {
      // What <properties> would carry; strict readers (Jenkins xunit) refuse <properties> inside <testcase>.
      const about = `requirements: ${reqOf(c)}; level: ${c.level ?? ''}; verdict: ${c.verdict}`;
      const msg = xml(c.message ?? '');
      const inner =
        c.verdict === 'failed'
          ? `<failure message="${msg}" type="${c.level} violation">${msg}</failure>`
          : c.verdict === 'skipped'
            ? `<skipped message="${msg}"/>`
            : c.verdict === 'known-deviation'
              ? `<skipped message="${xml(`known deviation (${c.knownDeviation?.reason ?? ''}${c.knownDeviation?.link ? `, ${c.knownDeviation.link}` : ''}): ${c.message ?? ''}`)}"/>`
              : ['setup-error', 'unavailable', 'error'].includes(c.verdict)
                ? `<error message="${msg}" type="${c.verdict}">${msg}</error>`
                : '';
      const out = c.verdict === 'warning' ? `${about}\nWARNING (${c.level} requirement not met, does not fail the run): ${c.message ?? ''}` : about;
      return `    <testcase classname="${xml(`${c.service ?? ''}.${c.id}`)}" name="${xml(c.title)}" time="${(c.durationMs / 1000).toFixed(3)}">${inner}<system-out>${xml(out)}</system-out></testcase>`;
    });
    return `  <testsuite name="${xml(name)}" tests="${checks.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time.toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  // What stopped the run itself (an unreachable target, an interruption, harness errors) is an error case of its own:
  // a run that could not check anything must not read as tests="0" errors="0".
  const t = s.counts;
  const runErrors = s.harnessErrors.map((m, i) => ({ name: `harness error ${i + 1}`, m }));
  if (s.verdict === 'error' && runErrors.length === 0 && t.setupErrors + t.unavailable + t.errors === 0) runErrors.push({ name: 'run', m: s.message });
  if (runErrors.length > 0) {
    const cases = runErrors.map(
      ({ name, m }) =>
        `    <testcase classname="run" name="${xml(name)}" time="0.000"><error message="${xml(m)}" type="run-error">${xml(m)}</error></testcase>`,
    );
    suites.push(
      `  <testsuite name="run" tests="${cases.length}" failures="0" errors="${cases.length}" skipped="0" time="0.000">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  const errors = t.setupErrors + t.unavailable + t.errors + runErrors.length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="conformance" tests="${t.total + runErrors.length}" failures="${t.failed}" errors="${errors}" time="${(s.durationMs / 1000).toFixed(3)}">\n${suites.join('\n')}\n</testsuites>\n`;
}

export function writeResults(reportDir: string, s: Summary): void {
  mkdirSync(reportDir, { recursive: true });
  writeFileSync(path.join(reportDir, 'summary.json'), `${JSON.stringify(s, null, 2)}\n`);
  writeFileSync(path.join(reportDir, 'junit.xml'), junitXml(s));
  writeFileSync(path.join(reportDir, 'ctrf.json'), `${JSON.stringify(ctrfReport(s), null, 2)}\n`);
}
