/**
 * The vitest reporter that collects each check's result as the harness recorded it (src/harness.ts writes the
 * verdict, reason and evidence into the test's meta), in declaration order: the input of the verdict model.
 */
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { CheckResult, Verdict } from './verdicts.js';

export class ResultCollector implements Reporter {
  readonly results: CheckResult[] = [];
  readonly harnessErrors: string[] = [];
  private readonly testIds = new Map<CheckResult, string>();
  private readonly byId = new Map<string, CheckResult>();

  /** The result of the check with this id collected last, if any. */
  latest(id: string): CheckResult | undefined {
    return this.byId.get(id);
  }

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
      ...(verdict === 'skipped' && meta.skip ? { skip: meta.skip } : {}),
      ...(verdict === 'setup-error' && meta.dependsOn ? { dependsOn: meta.dependsOn } : {}),
      observations: meta.observations,
      requests: meta.requests ?? 0,
      durationMs: Math.round(tc.diagnostic()?.duration ?? 0),
      startedAt: tc.diagnostic()?.startTime,
      file: meta.file ?? tc.module.relativeModuleId,
      failingRequests: meta.failingRequests,
    };
    this.results.push(result);
    this.testIds.set(result, tc.id);
    this.byId.set(result.id, result);
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
