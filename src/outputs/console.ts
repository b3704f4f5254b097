import { BroadcastChannel } from 'node:worker_threads';
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { Summary } from '../verdicts.js';
import { ACTIVITY_QUESTION, type ClientActivity } from '../http.js';

/** How often a run prints a progress line by default: a CI log never goes quiet for longer. */
export const PROGRESS_EVERY_MS = 10_000;

export interface ProgressOptions {
  /** The run's progress channel (progressChannelName): its HTTP client answers on it with what it is doing. */
  channel?: string;
  /** A progress line this often (default PROGRESS_EVERY_MS). */
  everyMs?: number;
  /** The configured services by origin (scheme://host:port), to name each in the line. */
  services?: Record<string, string>;
}

/**
 * The console during a run, unless --verbose: one line per check that did not pass, as it ends (its verdict and
 * its whole reason), a progress line every 10 s (what the run is doing and what it waits for), then one line per
 * suite module with its count of checks; no stack traces or code frames. The closing lines give the verdict.
 */
export class ProgressReporter implements Reporter {
  private started = Date.now();
  private done = 0;
  private running = 0;
  private timer?: NodeJS.Timeout;
  private channel?: BroadcastChannel;
  /** A progress line waiting for the HTTP client's answer (printed without it if none comes). */
  private asked?: NodeJS.Timeout;
  /** Each origin's count of pauses at the last line. */
  private readonly pausesSeen = new Map<string, number>();

  constructor(
    private readonly log: (line: string) => void,
    private readonly o: ProgressOptions = {},
  ) {}

  onTestRunStart(): void {
    this.started = Date.now();
    this.timer = setInterval(() => this.tick(), this.o.everyMs ?? PROGRESS_EVERY_MS);
    this.timer.unref();
    if (!this.o.channel) return;
    this.channel = new BroadcastChannel(this.o.channel);
    this.channel.unref();
    this.channel.onmessage = (e) => this.answered((e as MessageEvent).data as ClientActivity);
  }

  onTestCaseReady(): void {
    this.running++;
  }

  /** A check that did not pass is printed as soon as it ends, with its whole reason. */
  onTestCaseResult(t: TestCase): void {
    this.done++;
    this.running = Math.max(0, this.running - 1);
    const m = t.meta();
    if (m.verdict === 'passed') return;
    const reason = (m.reason ?? t.result().errors?.[0]?.message ?? '').trim().replace(/\n+/g, '\n        ');
    this.log(`    ${(m.verdict ?? 'error').toUpperCase()} ${m.check ?? t.name}: ${reason}`);
  }

  onTestRunEnd(): void {
    clearInterval(this.timer);
    clearTimeout(this.asked);
    this.asked = undefined;
    this.channel?.close();
    this.channel = undefined;
  }

  /** Time for a line: ask the HTTP client what it is doing; without an answer within a second, print what is known. */
  private tick(): void {
    if (this.asked) return;
    if (!this.channel) return this.log(this.line());
    this.asked = setTimeout(() => this.answered(undefined), 1000);
    this.asked.unref();
    this.channel.postMessage(ACTIVITY_QUESTION);
  }

  private answered(activity: ClientActivity | undefined): void {
    if (!this.asked) return;
    clearTimeout(this.asked);
    this.asked = undefined;
    this.log(this.line(activity));
  }

  private line(activity?: ClientActivity): string {
    const since = new Map(this.pausesSeen);
    for (const a of activity?.origins ?? []) this.pausesSeen.set(a.origin, a.pauses);
    return progressLine({
      elapsedMs: Date.now() - this.started,
      done: this.done,
      running: this.running,
      activity,
      pausesSeen: since,
      services: this.o.services,
    });
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

/**
 * A progress line: how long the run has taken, its checks done and running, requests sent, and per origin what its
 * requests wait for: the pause a Retry-After asked for (and the answer that asked), requests in flight and queued,
 * the pauses asked for since the last line, or the breaker that gave up on it. For example:
 *   … 40 s: 212 checks done, 40 running, 250 of 1500 requests sent; feed 127.0.0.1:38151: waiting for its Retry-After,
 *   0.6 s more (GET http://127.0.0.1:38151/api/v1/items answered 503 with Retry-After 1), 1 in flight, 3 queued, 9 pauses since the last line
 */
export function progressLine(p: {
  elapsedMs: number;
  done: number;
  running: number;
  activity?: ClientActivity;
  /** Each origin's count of pauses at the previous line. */
  pausesSeen?: Map<string, number>;
  services?: Record<string, string>;
}): string {
  const head = `  … ${Math.round(p.elapsedMs / 1000)} s: ${p.done} checks done, ${p.running} running`;
  if (!p.activity) return head;
  const origins = p.activity.origins.map((a) => {
    const name = `${p.services?.[a.origin] ?? 'target'} ${a.origin.replace(/^\w+:\/\//, '')}`;
    if (a.given !== undefined) return `${name}: no longer contacted (${a.given.slice(0, 160)})`;
    const parts: string[] = [];
    if (a.pausedMs > 0) parts.push(`waiting for its Retry-After, ${(a.pausedMs / 1000).toFixed(1)} s more (${a.pausedBy ?? 'a refusal'})`);
    parts.push(`${a.inFlight} in flight`, `${a.queued} queued`);
    const pauses = a.pauses - (p.pausesSeen?.get(a.origin) ?? 0);
    if (pauses > 0) parts.push(`${pauses} pause${pauses === 1 ? '' : 's'} asked for since the last line`);
    return `${name}: ${parts.join(', ')}`;
  });
  return [`${head}, ${p.activity.sent} of ${p.activity.budget} requests sent`, ...origins].join('; ');
}

/** The verdict, with how much was verified: always the last line of a run's output. */
export function verdictLine(s: Summary): string {
  const allowed = s.verdict === 'incomplete' && s.allowIncomplete ? ' (allowed by --allow-incomplete: exit 0)' : '';
  const embedded = s.targets.embedded ? ' [the EMBEDDED REFERENCE deployments were checked, not yours]' : '';
  return `verdict: ${s.verdict.toUpperCase()}${allowed} — ${s.message}${embedded}`;
}

/** What a run prints at its end: failures, what was left undecided and why, the evidence per service, the verdict. */
export function closingLines(summary: Summary, deviationsSource?: string): string[] {
  const out: string[] = [''];
  const c = summary.counts;
  const whole = (m: string) => m.trim().replace(/\n+/g, '\n      ');
  for (const f of summary.failures) out.push(`  FAIL ${f.id} [${f.requirement}]: ${whole(f.message)}`);
  for (const w of summary.warnings) out.push(`  WARNING ${w.id} [${w.requirement}] (${w.level}): ${whole(w.message)}`);
  for (const d of summary.knownDeviations) {
    if (d.status === 'seen') out.push(`  KNOWN DEVIATION ${d.id}: ${d.reason}${d.link ? ` (${d.link})` : ''}`);
    if (d.status === 'no longer seen')
      out.push(`  NO LONGER SEEN ${d.id}: every check it covers passed; remove it from ${deviationsSource ?? 'the known deviations file'}`);
    if (d.status === 'not run') out.push(`  UNUSED ENTRY ${d.id}: no check it covers ran (unknown id, or filtered out)`);
  }
  const undecidedMust = summary.undecided.filter((u) => u.level === 'MUST');
  if (undecidedMust.length) {
    out.push('  MUST requirements not verified, and what would decide them:');
    // Requirements undecided for the same reason (one missing key, say) are listed together, the reason once.
    const byReason = new Map<string, typeof undecidedMust>();
    for (const u of undecidedMust) byReason.set(u.toDecide, [...(byReason.get(u.toDecide) ?? []), u]);
    for (const [reason, us] of byReason)
      out.push(
        us.length === 1
          ? `    UNDECIDED ${us[0]!.id} (${us[0]!.verdict}): ${whole(reason)}`
          : `    UNDECIDED ${us.length} requirements (${us.map((u) => u.id).join(', ')}): ${whole(reason)}`,
      );
  }
  for (const u of summary.notExercised) out.push(`  NOT EXERCISED ${u.id} (${u.level}): ${whole(u.why)}`);
  for (const u of summary.declaredUnchecked) out.push(`  DECLARED UNCHECKED ${u.id}: ${u.reason} (${u.status})`);
  out.push(
    `  checks: ${c.passed} passed, ${c.failed} failed (MUST), ${c.knownDeviations} known deviations, ${c.warnings} warnings (SHOULD/MAY), ${c.skipped} skipped, ` +
      `${c.setupErrors} setup errors, ${c.unavailable} target unavailable, ${c.errors} harness errors; ` +
      `${summary.requests} requests sent (budget ${summary.budget}), ${summary.billableCalls} billable`,
  );
  for (const e of summary.evidence) {
    out.push(
      `  ${e.service}: ${e.verified} of ${e.must} MUST requirements verified, ${e.failed} failed, ${e.undecided} undecided` +
        `${e.knownDeviations ? `, ${e.knownDeviations} known deviations` : ''}${e.notExercised ? `, ${e.notExercised} not exercised` : ''}` +
        `${e.declaredUnchecked ? `, ${e.declaredUnchecked} declared unchecked` : ''} (${e.unverifiable} cannot be observed from outside)`,
    );
  }
  if (summary.grep) out.push(`  --grep ${summary.grep}: only the requirements of the selected checks are counted`);
  out.push(verdictLine(summary));
  return out;
}
