import type { Reporter, TestCase, TestModule } from 'vitest/node';

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
