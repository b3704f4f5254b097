/**
 * Verdict and reports of a client-conformance run. The verdict is decided by the conformance command's ladder
 * (verdicts.decideRun: one vocabulary, one rule for a partial run) and its exit status is that command's
 * (verdicts.exitCodeOf). What the run records as it goes (exchanges.jsonl, the Allure results, report.html, the page
 * of its rules) is written here; everything else goes through the outputs list (src/outputs/index.ts) from the run's
 * summary in the verdict model's terms (reportSummary), as the conformance command's and the merge's do.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { toAllureExchange } from '../evidence.js';
import type { Exchange } from '../http.js';
import {
  checkLists,
  countVerdicts,
  decideRun,
  exitCodeOf,
  type CheckResult,
  type RequirementResult,
  type RequirementVerdict,
  type RunVerdict,
  type Summary,
} from '../verdicts.js';
import { EXCHANGES_FILE } from '../context.js';
import { RULES_PAGE } from '../outputs/index.js';
import { loadCatalogue, requirement, type Level, type Service } from '../spec.js';
import { SUITE_VERSION, SUMMARY_SCHEMA_VERSION } from '../version.js';
import type { Redactor } from '../redact.js';
import type { RuleResult, RuleVerdict } from './judge.js';
import type { ObservedExchange } from './observer.js';
import type { ScenarioInfo } from './scenarios.js';

export interface ClientRequirement {
  id: string;
  level: Level;
  summary: string;
  text: string;
  subject: 'client' | 'server';
  verdict: RuleVerdict | 'unverifiable';
  checks: string[];
  reason?: string;
}

export interface ClientSummary {
  kind: 'client-conformance';
  verdict: RunVerdict;
  exitCode: number;
  message: string;
  complete: boolean;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  service: Service;
  target: { deployment: string; embedded: boolean; observer: string };
  command: string[];
  commandExit: { code: number | null; signal: string | null; stoppedByTimeBound: boolean; error?: string; lastLines?: string[] };
  /** Each run of the command: the scenario repeats it while it needs another round to provoke a rule. */
  rounds?: { round: number; why: string; exit: ClientSummary['commandExit'] }[];
  scenarios: (ScenarioInfo & { exchanges: number[] })[];
  counts: { passed: number; failed: number; warnings: number; notApplicable: number; notExercised: number; unverifiable: number; total: number };
  rules: RuleResult[];
  requirements: ClientRequirement[];
  /** The judged rules as the server suite's check results (what junit.xml is written from). */
  checks: CheckResult[];
  requests: number;
}

/**
 * The scenarios that refuse a call for good: a 400 (retrying does not help) and a 502 on every attempt until the
 * retry cap. A correct client may give up on such a call and say so with a non-zero exit.
 */
export const REFUSED_FOR_GOOD = ['bad-request-not-retried', 'upstream-down'];

/**
 * How the client's own run ended, when that alone keeps it from being conformant: a crash, a non-zero exit, a signal.
 * A non-zero exit (not a signal) after the scenario refused one of its calls for good (`refusedForGood` names it) is
 * what a correct client may do: recorded in the verdict's message, not held against it.
 */
export function exitFinding(exit: ClientSummary['commandExit'] | undefined, refusedForGood?: string): string | undefined {
  if (!exit || exit.error || exit.stoppedByTimeBound || (exit.code === 0 && !exit.signal)) return undefined;
  if (refusedForGood && !exit.signal) return undefined;
  return exitText(exit);
}

function exitText(exit: ClientSummary['commandExit']): string {
  const how = exit.signal ? `was ended by ${exit.signal}` : `exited with status ${exit.code}`;
  const lines = (exit.lastLines ?? []).map((l) => `"${l}"`);
  return `the client ${how}${lines.length ? ` (its last output: ${lines.join(' / ')})` : ''}`;
}

/** The note a verdict carries for a non-zero exit that followed a refusal for good. */
function excusedExit(exit: ClientSummary['commandExit'] | undefined, refusedForGood?: string): string | undefined {
  if (!exit || !refusedForGood || exit.error || exit.signal || exit.code === 0 || exit.stoppedByTimeBound) return undefined;
  return `${exitText(exit)} after the scenario refused one of its calls for good (${refusedForGood}): a correct client may give up, so this is not held against it`;
}

/** How a client-conformance run ended besides its traffic: what the verdict rests on with the rules. */
export interface RunEnd {
  /** The command could not be started. */
  commandError?: string;
  /** The command was stopped by the time bound (--timeout). */
  stopped: boolean;
  /** A signal interrupted the run. */
  interrupted?: string;
  /** How the command's judged round ended (none when interrupted). */
  exit?: ClientSummary['commandExit'];
  /** The scenario's refusals for good that reached the client in that round. */
  refusedForGood?: string;
}

/**
 * The run's verdict, on the conformance command's ladder (verdicts.decideRun): the command could not run → error;
 * a rule failed or the client crashed → nonconformant; the run interrupted or the command stopped by the time bound
 * → error (a partial run is never conformant); a rule not exercised → incomplete; else conformant. The client's own
 * result is evidence: a client that crashed or exited non-zero is never conformant, whatever its traffic showed (it
 * did not finish what it set out to do), and the message says so first.
 */
export function decide(rules: RuleResult[], o: RunEnd): { verdict: RunVerdict; message: string } {
  const decided = decideRun({
    cannotRun: o.commandError && `the command could not run: ${o.commandError}`,
    failed: failedMessage(rules, o),
    stoppedEarly: o.interrupted ? `interrupted by ${o.interrupted}` : o.stopped ? 'the time bound, --timeout, stopped the command' : undefined,
    undecided: undecidedMessage(rules),
    verified: verifiedMessage(rules),
  });
  const excused = o.commandError ? undefined : excusedExit(o.exit, o.refusedForGood);
  return excused ? { ...decided, message: `${decided.message}; ${excused}` } : decided;
}

function failedMessage(rules: RuleResult[], o: RunEnd): string | undefined {
  const exited = exitFinding(o.exit, o.refusedForGood);
  const failed = rules.filter((r) => r.verdict === 'failed');
  if (!failed.length && !exited) return undefined;
  return [exited, failed.length ? `${failed.length} client rule(s) failed: ${failed.map((r) => r.requirements.join('+')).join(', ')}` : undefined]
    .filter(Boolean)
    .join('; ');
}

function undecidedMessage(rules: RuleResult[]): string | undefined {
  // A client none of whose rules applied (it used nothing the rules govern, or made no request) is not conformant.
  if (rules.length && rules.every((r) => r.verdict === 'not applicable'))
    return `no client rule applied: the client used nothing they govern (${rules[0]!.message}, …)`;
  const open = rules.filter((r) => r.verdict === 'not exercised');
  if (!open.length) return undefined;
  return `no rule failed, but ${open.length} rule(s) were not exercised (the client never showed the behaviour they govern): ${open.map((r) => r.requirements.join('+')).join(', ')}`;
}

function verifiedMessage(rules: RuleResult[]): string {
  const warnings = rules.filter((r) => r.verdict === 'warning');
  const na = rules.filter((r) => r.verdict === 'not applicable');
  return `every client rule that applies was exercised and none failed${na.length ? `; ${na.length} not applicable (the client never used what they govern): ${na.map((r) => r.requirements.join('+')).join(', ')}` : ''}${warnings.length ? `; ${warnings.length} SHOULD warning(s): ${warnings.map((r) => r.requirements.join('+')).join(', ')}` : ''}`;
}

/** The exit status of a client run: the conformance command's (a partial run never exits 0). */
export const clientExitCode = (verdict: RunVerdict, complete: boolean) => exitCodeOf(verdict, { complete });

export function requirementsOf(service: Service, rules: RuleResult[]): ClientRequirement[] {
  const cited = new Set(rules.flatMap((r) => r.requirements));
  const out: ClientRequirement[] = [];
  for (const r of loadCatalogue().values()) {
    if (r.service !== service || (r.subject !== 'client' && !cited.has(r.id))) continue;
    const mine = rules.filter((c) => c.requirements.includes(r.id));
    const verdict: ClientRequirement['verdict'] =
      mine.length === 0
        ? 'unverifiable'
        : mine.some((c) => c.verdict === 'failed')
          ? 'failed'
          : mine.some((c) => c.verdict === 'warning')
            ? 'warning'
            : mine.some((c) => c.verdict === 'not exercised')
              ? 'not exercised'
              : mine.every((c) => c.verdict === 'not applicable')
                ? 'not applicable'
                : 'passed';
    out.push({
      id: r.id,
      level: r.level,
      summary: r.summary,
      text: r.text,
      subject: r.subject,
      verdict,
      checks: mine.map((c) => c.id),
      reason: mine.length === 0 ? (r.unverifiable ?? 'no traffic-based judge for this rule') : undefined,
    });
  }
  return out;
}

export function asCheckResults(rules: RuleResult[]): CheckResult[] {
  return rules.map((r) => ({
    id: r.id,
    title: r.title,
    service: r.service,
    requirements: r.requirements,
    level: r.level,
    // Not exercised and not applicable: reported as skipped with the reason (junit has no better place for it).
    verdict: r.verdict === 'not exercised' || r.verdict === 'not applicable' ? 'skipped' : r.verdict,
    message: r.verdict === 'not exercised' || r.verdict === 'not applicable' ? `${r.verdict}: ${r.message}` : r.message,
    observations: r.observations,
    requests: r.evidence.length,
    durationMs: 0,
    file: 'src/client-conformance/judge.ts',
  }));
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function html(s: ClientSummary, xs: ObservedExchange[]): string {
  const colour: Record<string, string> = {
    passed: '#1a7f37',
    failed: '#cf222e',
    warning: '#9a6700',
    'not applicable': '#6e7781',
    'not exercised': '#6e7781',
    unverifiable: '#6e7781',
  };
  const badge = (v: string) => `<b style="color:${colour[v] ?? '#000'}">${esc(v)}</b>`;
  const bySeq = new Map(xs.map((x) => [x.seq, x]));
  const rules = s.rules
    .map((r) => {
      const ev = r.evidence
        .map((n) => bySeq.get(n))
        .filter((x): x is ObservedExchange => !!x)
        .map(
          (x) =>
            `<li><code>#${x.seq} +${x.receivedAt.toFixed(0)} ms ${esc(x.method)} ${esc(x.url)} → ${x.status ?? '—'}${x.scenario ? ` [${esc(x.scenario)}]` : ''}${x.requestHeaders['if-none-match'] ? ` If-None-Match: ${esc(x.requestHeaders['if-none-match'])}` : ''}${x.responseHeaders?.['retry-after'] ? ` Retry-After: ${esc(x.responseHeaders['retry-after'])}` : ''}${x.responseHeaders?.['cache-control'] ? ` Cache-Control: ${esc(x.responseHeaders['cache-control'])}` : ''}</code></li>`,
        )
        .join('');
      const obs = Object.entries(r.observations)
        .map(([k, v]) => `<li>${esc(k)}: ${esc(v)}</li>`)
        .join('');
      return `<section><h3>${badge(r.verdict)} ${esc(r.title)}</h3><p><code>${esc(r.id)}</code> · ${esc(r.requirements.join(', '))} (${r.level})</p><p>${esc(r.message)}</p>${obs ? `<ul>${obs}</ul>` : ''}${ev ? `<details><summary>exchanges</summary><ul>${ev}</ul></details>` : ''}</section>`;
    })
    .join('\n');
  const reqs = s.requirements
    .map(
      (r) =>
        `<tr><td><code>${esc(r.id)}</code></td><td>${r.level}</td><td>${badge(r.verdict)}</td><td>${esc(r.summary)}${r.reason ? `<br><small>${esc(r.reason)}</small>` : ''}</td></tr>`,
    )
    .join('');
  const scen = s.scenarios.map((c) => `<li><b>${esc(c.name)}</b>: ${esc(c.description)} <small>(${esc(c.exercises.join(', '))})</small></li>`).join('');
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>Client conformance: ${esc(s.service)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}code{font-size:12px}td{padding:2px 8px;vertical-align:top}section{border-top:1px solid #ddd}</style>
<h1>Client conformance (${esc(s.service)}): ${badge(s.verdict === 'conformant' ? 'passed' : s.verdict === 'nonconformant' ? 'failed' : 'not exercised')} ${esc(s.verdict)}</h1>
<p>${esc(s.message)}</p><p>Command: <code>${esc(s.command.join(' '))}</code> (exit ${s.commandExit.code ?? esc(String(s.commandExit.signal))}${s.commandExit.stoppedByTimeBound ? ', stopped by the time bound' : ''}); ${s.requests} request(s).</p>
<h2>Requirements</h2><table>${reqs}</table><h2>Rules as judged</h2>${rules}<h2>Scenarios</h2><ul>${scen}</ul></html>
`;
}

/** Allure results, one per judged rule, grouped document → section → requirement like the server suite's. */
function writeAllureResults(resultsDir: string, s: ClientSummary, xs: ObservedExchange[], redactor: Redactor): void {
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });
  const bySeq = new Map(xs.map((x) => [x.seq, x]));
  const t0 = Date.parse(s.startedAt);
  for (const r of s.rules) {
    const req = requirement(r.requirements[0]!);
    const attachments = r.evidence
      .map((n) => bySeq.get(n))
      .filter((x): x is ObservedExchange => !!x)
      .map((x) => {
        const ex: Exchange = {
          seq: x.seq,
          method: x.method,
          url: `${s.target.observer}${x.url}`,
          requestHeaders: x.requestHeaders,
          requestBody: x.requestBody === '' ? undefined : x.requestBody,
          status: x.status,
          responseHeaders: x.responseHeaders,
          responseBody: x.responseBody?.slice(0, 4096),
          truncated: (x.responseBody?.length ?? 0) > 4096 || undefined,
          durationMs: Math.max(0, (x.respondedAt ?? x.receivedAt) - x.receivedAt),
          startedAt: new Date(t0 + x.receivedAt).toISOString(),
          attempt: 0,
          error: x.error,
        };
        const source = `${randomUUID()}-attachment.httpexchange`;
        writeFileSync(path.join(resultsDir, source), redactor.redact(JSON.stringify(toAllureExchange(ex))));
        return {
          name: `#${x.seq} +${x.receivedAt.toFixed(0)} ms ${x.method} ${x.url} → ${x.status ?? '—'}${x.scenario ? ` [${x.scenario}]` : ''}`,
          source,
          type: 'application/vnd.allure.http+json',
        };
      });
    const status = r.verdict === 'passed' ? 'passed' : r.verdict === 'failed' ? 'failed' : r.verdict === 'warning' ? 'unknown' : 'skipped';
    const observations = Object.entries(r.observations).map(([k, v]) => `- ${k}: ${v}`);
    const result = {
      uuid: randomUUID(),
      name: r.title,
      fullName: `client-conformance:${r.id}`,
      historyId: r.id,
      testCaseId: r.id,
      status,
      statusDetails: {
        message: r.verdict === 'not exercised' ? `Not exercised: ${r.message}` : r.verdict === 'not applicable' ? `Not applicable: ${r.message}` : r.message,
      },
      stage: 'finished',
      description: `**${r.requirements.join(', ')}** (${r.level}, ${req.section}): ${req.summary}\n\n> ${req.text}${observations.length ? `\n\n${observations.join('\n')}` : ''}`,
      attachments,
      parameters: [],
      links: [],
      labels: [
        { name: 'parentSuite', value: `${req.documentTitle} (client rules)` },
        { name: 'suite', value: req.section },
        { name: 'subSuite', value: r.requirements.join(', ') },
        { name: 'check', value: r.id },
        { name: 'service', value: r.service },
        { name: 'level', value: r.level },
        { name: 'severity', value: r.level === 'MUST' ? 'critical' : 'normal' },
      ],
      start: t0,
      stop: Date.parse(s.finishedAt),
    };
    writeFileSync(path.join(resultsDir, `${result.uuid}-result.json`), redactor.redact(JSON.stringify(result)));
  }
}

/**
 * What the run records, as the conformance command's HTTP client and reporter record theirs: exchanges.jsonl, the
 * Allure results (one per judged rule, the HTML report's input) and report.html, the page of the rules as judged;
 * all redacted. The other outputs are written from reportSummary through the outputs list.
 */
export function recordClientRun(dir: string, s: ClientSummary, xs: ObservedExchange[], redactor: Redactor): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, EXCHANGES_FILE),
    xs.map((x) => redactor.redact(JSON.stringify({ ...x, responseBody: x.responseBody?.slice(0, 4096) }))).join('\n') + '\n',
  );
  writeAllureResults(path.join(dir, 'allure-results'), s, xs, redactor);
  writeFileSync(path.join(dir, RULES_PAGE), redactor.redact(html(s, xs)));
}

/** A client requirement's verdict in the verdict model's words (src/verdicts.ts): "not exercised" leaves it undecided. */
const REQUIREMENT_VERDICT: Record<ClientRequirement['verdict'], RequirementVerdict> = {
  passed: 'pass',
  failed: 'fail',
  warning: 'warning',
  'not exercised': 'skipped',
  'not applicable': 'not applicable',
  unverifiable: 'unverifiable',
};

/**
 * The run's summary in the verdict model's terms (src/verdicts.ts Summary), what the outputs list writes from:
 * the judged rules as check results, the requirements with their verdicts, the verdict decided once (decide). Read
 * from the redacted record, so nothing written from it holds a key.
 */
export function reportSummary(s: ClientSummary): Summary {
  const byId = new Map(s.checks.map((c) => [c.id, c]));
  const requirements: RequirementResult[] = s.requirements.map((q) => {
    const r = requirement(q.id);
    const verdict = REQUIREMENT_VERDICT[q.verdict];
    const checks = q.checks.map((id) => ({ id, title: byId.get(id)?.title ?? id, verdict: byId.get(id)?.verdict ?? 'skipped' }));
    const why = q.reason ?? s.rules.find((x) => q.checks.includes(x.id) && x.verdict !== 'passed')?.message;
    return {
      id: q.id,
      service: s.service,
      document: r.documentTitle,
      section: r.section,
      level: q.level,
      subject: q.subject,
      summary: q.summary,
      text: q.text,
      verdict,
      checks,
      ...(why ? { reason: why } : {}),
    };
  });
  const url = s.target.embedded ? s.target.observer : s.target.deployment;
  return {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    suiteVersion: SUITE_VERSION,
    verdict: s.verdict,
    complete: s.complete,
    exitCode: s.exitCode,
    message: s.message,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    durationMs: s.durationMs,
    targets: { feed: s.service === 'feed' ? url : null, gateway: s.service === 'gateway' ? url : null, embedded: s.target.embedded },
    services: [s.service],
    counts: countVerdicts(s.checks),
    requests: s.requests,
    requestsByService: { [s.service]: s.requests },
    billableCalls: 0,
    budget: 0,
    ...checkLists(s.checks),
    evidence: [],
    undecided: requirements
      .filter((q) => q.verdict === 'skipped')
      .map((q) => ({ id: q.id, service: q.service, level: q.level, verdict: q.verdict, checks: q.checks.map((c) => c.id), toDecide: q.reason ?? '' })),
    notExercised: [],
    declaredUnchecked: [],
    allowIncomplete: false,
    harnessErrors: [],
    knownDeviations: [],
    requirements,
    checks: s.checks,
  };
}
