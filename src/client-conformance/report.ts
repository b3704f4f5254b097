/**
 * Verdict and reports of a client-conformance run: summary.json, junit.xml (the server suite's writer, fed with
 * one check per judged rule), exchanges.jsonl and a self-contained report.html.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { toAllureExchange } from '../evidence.js';
import { generateHtml } from '../outputs/html.js';
import type { Exchange } from '../http.js';
import { EXIT_CODES, type CheckResult, type RunVerdict } from '../verdicts.js';
import { junitXml } from '../outputs/junit.js';
import { loadCatalogue, requirement, type Level, type Service } from '../spec.js';
import type { Redactor } from '../redact.js';
import type { RuleResult, RuleVerdict } from './judge.js';
import type { ObservedExchange } from './observer.js';
import type { ScenarioInfo } from './scenarios.js';

/** The deployment command's run verdicts and exit statuses (src/verdicts.ts), and 2 for a usage error before any. */
export type ClientRunVerdict = RunVerdict;
export const CLIENT_EXIT_CODES: Record<ClientRunVerdict, number> = EXIT_CODES;

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
  verdict: ClientRunVerdict;
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

/**
 * The run's verdict. The client's own result is evidence: a client that crashed or exited non-zero is never
 * conformant, whatever its traffic showed (it did not finish what it set out to do), and the message says so first.
 */
export function decide(
  rules: RuleResult[],
  o: { commandError?: string; stopped: boolean; exit?: ClientSummary['commandExit']; refusedForGood?: string },
): { verdict: ClientRunVerdict; message: string } {
  if (o.commandError) return { verdict: 'error', message: `the command could not run: ${o.commandError}` };
  const decided = decideOnRules(rules, o);
  const excused = excusedExit(o.exit, o.refusedForGood);
  return excused ? { ...decided, message: `${decided.message}; ${excused}` } : decided;
}

function decideOnRules(
  rules: RuleResult[],
  o: { stopped: boolean; exit?: ClientSummary['commandExit']; refusedForGood?: string },
): { verdict: ClientRunVerdict; message: string } {
  const exited = exitFinding(o.exit, o.refusedForGood);
  const failed = rules.filter((r) => r.verdict === 'failed');
  if (failed.length || exited)
    return {
      verdict: 'nonconformant',
      message: [exited, failed.length ? `${failed.length} client rule(s) failed: ${failed.map((r) => r.requirements.join('+')).join(', ')}` : undefined]
        .filter(Boolean)
        .join('; '),
    };
  // A client none of whose rules applied (it used nothing the rules govern, or made no request) is not conformant.
  if (rules.length && rules.every((r) => r.verdict === 'not applicable'))
    return { verdict: 'incomplete', message: `no client rule applied: the client used nothing they govern (${rules[0]!.message}, …)` };
  const open = rules.filter((r) => r.verdict === 'not exercised');
  const stopped = o.stopped ? '; the command was stopped by the run time bound' : '';
  if (open.length)
    return {
      verdict: 'incomplete',
      message: `no rule failed, but ${open.length} rule(s) were not exercised (the client never showed the behaviour they govern): ${open.map((r) => r.requirements.join('+')).join(', ')}${stopped}`,
    };
  const warnings = rules.filter((r) => r.verdict === 'warning');
  const na = rules.filter((r) => r.verdict === 'not applicable');
  return {
    verdict: 'conformant',
    message: `every client rule that applies was exercised and none failed${na.length ? `; ${na.length} not applicable (the client never used what they govern): ${na.map((r) => r.requirements.join('+')).join(', ')}` : ''}${warnings.length ? `; ${warnings.length} SHOULD warning(s): ${warnings.map((r) => r.requirements.join('+')).join(', ')}` : ''}${stopped}`,
  };
}

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

/** The Allure HTML report (html/index.html), as the server suite's. Returns its path. */
export async function writeClientHtml(dir: string, s: ClientSummary, xs: ObservedExchange[], redactor: Redactor): Promise<string> {
  const resultsDir = path.join(dir, 'allure-results');
  writeAllureResults(resultsDir, s, xs, redactor);
  // The overview's "Metadata": this run's verdict in its own terms (the server suite's writer expects its Summary).
  const props = [
    ['Verdict', s.verdict.toUpperCase()],
    ['Why', s.message],
    ['Command', s.command.join(' ')],
    ['Target', s.target.embedded ? 'the reference deployment behind the observing target' : `${s.target.deployment} behind the recording proxy`],
    [
      'Rules',
      `${s.counts.passed} passed, ${s.counts.failed} failed, ${s.counts.warnings} warnings, ${s.counts.notExercised} not exercised, ${s.counts.unverifiable} unverifiable`,
    ],
  ];
  writeFileSync(path.join(resultsDir, 'environment.properties'), redactor.redact(`${props.map(([k, v]) => `${k}=${v!.replace(/\r?\n/g, ' ')}`).join('\n')}\n`));
  return generateHtml(resultsDir, path.join(dir, 'html'), `Client conformance: ${s.service} — ${s.verdict.toUpperCase()}`);
}

export function writeClientReports(dir: string, s: ClientSummary, xs: ObservedExchange[], redactor: Redactor): void {
  mkdirSync(dir, { recursive: true });
  const clean = <T>(v: T): T => JSON.parse(redactor.redact(JSON.stringify(v))) as T;
  writeFileSync(path.join(dir, 'summary.json'), `${JSON.stringify(clean(s), null, 2)}\n`);
  // The server suite's JUnit writer, given the parts of a Summary it reads (checks, counts, verdict, message,
  // harnessErrors, durationMs); a command that could not run becomes its run-level error case.
  const t = s.counts;
  const forJunit = {
    checks: s.checks,
    verdict: s.verdict,
    message: s.message,
    harnessErrors: [],
    durationMs: s.durationMs,
    counts: {
      total: t.total,
      failed: t.failed,
      skipped: t.notExercised,
      setupErrors: 0,
      unavailable: 0,
      errors: 0,
      knownDeviations: 0,
      passed: t.passed,
      warnings: t.warnings,
    },
  } as Parameters<typeof junitXml>[0];
  writeFileSync(path.join(dir, 'junit.xml'), redactor.redact(junitXml(forJunit)));
  writeFileSync(
    path.join(dir, 'exchanges.jsonl'),
    xs.map((x) => redactor.redact(JSON.stringify({ ...x, responseBody: x.responseBody?.slice(0, 4096) }))).join('\n') + '\n',
  );
  writeFileSync(path.join(dir, 'report.html'), redactor.redact(html(s, xs)));
}
