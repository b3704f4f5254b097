/** junit.xml: a function of the summary. */
import { reqOf, type CheckResult, type Summary } from '../verdicts.js';

const xml = (s: string) =>
  s
    // Characters XML 1.0 forbids: C0 controls but tab/LF/CR, U+FFFE/U+FFFF, and unpaired surrogates.
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/**
 * A suite's time: its wall time, from its first check's start to its last check's end (the checks run concurrently:
 * their sum would be many times the run). A summary written before start times were recorded gives its longest check.
 */
export function wallTime(checks: CheckResult[]): number {
  const longest = Math.max(0, ...checks.map((c) => c.durationMs));
  const timed = checks.filter((c) => c.startedAt !== undefined);
  if (timed.length === 0) return longest;
  return Math.max(longest, Math.max(...timed.map((c) => c.startedAt! + c.durationMs)) - Math.min(...timed.map((c) => c.startedAt!)));
}

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
    const time = wallTime(checks) / 1000;
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
