/**
 * The run as a CTRF report (Common Test Report Format, the JSON test-results format GitHub summaries and dashboards
 * read): ctrf.json next to summary.json. CTRF knows five statuses; the suite's own verdict of every check is kept in
 * `rawStatus` (warning, known deviation, setup error, unavailable, error keep their names), its requirements in
 * `tags`, and the run's verdict in `results.summary.extra`.
 */
import type { CheckResult, Summary, Verdict } from '../verdicts.js';
import { SUITE_VERSION } from '../version.js';

type CtrfStatus = 'passed' | 'failed' | 'skipped' | 'pending' | 'other';

/** The suite's verdict of a check → CTRF status and raw status. Only a MUST violation is "failed". */
const STATUS: Record<Verdict, [CtrfStatus, string]> = {
  passed: ['passed', 'passed'],
  failed: ['failed', 'failed'],
  warning: ['other', 'warning'],
  'known-deviation': ['other', 'known deviation'],
  skipped: ['skipped', 'skipped'],
  'setup-error': ['other', 'setup error'],
  unavailable: ['other', 'unavailable'],
  error: ['other', 'error'],
};

export interface CtrfTest {
  name: string;
  testId: string;
  status: CtrfStatus;
  rawStatus: string;
  duration: number;
  start?: number;
  stop?: number;
  message?: string;
  suite?: string[];
  filePath?: string;
  tags?: string[];
  extra?: Record<string, unknown>;
}

export interface CtrfReport {
  reportFormat: 'CTRF';
  specVersion: string;
  timestamp: string;
  generatedBy: string;
  results: {
    tool: { name: string; version: string };
    summary: {
      tests: number;
      passed: number;
      failed: number;
      skipped: number;
      pending: number;
      other: number;
      suites: number;
      start: number;
      stop: number;
      duration: number;
      extra: Record<string, unknown>;
    };
    tests: CtrfTest[];
    extra: Record<string, unknown>;
  };
}

function testOf(c: CheckResult): CtrfTest {
  const [status, rawStatus] = STATUS[c.verdict];
  const message =
    c.verdict === 'known-deviation' && c.knownDeviation
      ? `known deviation (${c.knownDeviation.reason}${c.knownDeviation.link ? `, ${c.knownDeviation.link}` : ''}): ${c.message ?? ''}`
      : c.message;
  return {
    name: c.title,
    testId: c.id,
    status,
    rawStatus,
    duration: Math.max(0, Math.round(c.durationMs)),
    ...(c.startedAt !== undefined ? { start: c.startedAt, stop: c.startedAt + Math.max(0, Math.round(c.durationMs)) } : {}),
    ...(message ? { message } : {}),
    ...(c.service ? { suite: [c.service] } : {}),
    filePath: c.file,
    tags: c.requirements,
    extra: { requirements: c.requirements, level: c.level ?? null, requests: c.requests, ...(c.observations ? { observations: c.observations } : {}) },
  };
}

export function ctrfReport(s: Summary): CtrfReport {
  const tests = s.checks.map(testOf);
  // What stopped the run itself (an unreachable target, an interruption, a harness error) is a test of its own, as
  // in junit.xml: a run that checked nothing must not read as an empty green run.
  const runErrors = s.harnessErrors.map((m, i) => ({ name: `harness error ${i + 1}`, m }));
  const c = s.counts;
  if (s.verdict === 'error' && runErrors.length === 0 && c.setupErrors + c.unavailable + c.errors === 0) runErrors.push({ name: 'run', m: s.message });
  for (const { name, m } of runErrors)
    tests.push({ name, testId: `run.${name.replace(/\s+/g, '-')}`, status: 'other', rawStatus: 'error', duration: 0, message: m, suite: ['run'] });
  const n = (st: CtrfStatus) => tests.filter((t) => t.status === st).length;
  const start = Date.parse(s.startedAt);
  const stop = Date.parse(s.finishedAt);
  return {
    reportFormat: 'CTRF',
    specVersion: '0.0.0',
    timestamp: s.finishedAt,
    generatedBy: `service-conformance ${SUITE_VERSION}`,
    results: {
      tool: { name: 'service-conformance', version: SUITE_VERSION },
      summary: {
        tests: tests.length,
        passed: n('passed'),
        failed: n('failed'),
        skipped: n('skipped'),
        pending: n('pending'),
        other: n('other'),
        suites: new Set(tests.map((t) => t.suite?.[0] ?? '')).size,
        start,
        stop,
        duration: Math.max(0, stop - start),
        extra: { verdict: s.verdict, message: s.message, exitCode: s.exitCode, complete: s.complete, counts: s.counts },
      },
      tests,
      extra: { targets: s.targets, evidence: s.evidence, undecided: s.undecided.map((u) => u.id) },
    },
  };
}
