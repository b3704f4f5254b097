import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { Summary } from '../verdicts.js';

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
