/**
 * The verdict rules as data: the README's tables ("Verdicts and exit status"), row by row. A requirement's verdict
 * from the verdicts of the checks citing it; the run's verdict and exit status from the checks of a run.
 */
import { describe, expect, test } from 'vitest';
import { requirementResults, summarize, type CheckResult, type RequirementVerdict, type RunFacts, type Verdict } from './verdicts.js';
import type { CatalogueEntry, Level } from './spec.js';

const entry = (id: string, o: Partial<CatalogueEntry> = {}): CatalogueEntry =>
  ({ id, service: 'feed', level: 'MUST', subject: 'server', section: 's', summary: id, text: id, documentTitle: 'doc', ...o }) as CatalogueEntry;

const check = (id: string, verdict: Verdict, requirements: string[], message = '', level: Level = 'MUST'): CheckResult => ({
  id,
  title: id,
  service: 'feed',
  requirements,
  level,
  verdict,
  message,
  requests: 1,
  durationMs: 1,
  file: 'x',
});

describe('a requirement is decided by every check citing it', () => {
  const rows: [string, Verdict[], RequirementVerdict][] = [
    ['every check passed', ['passed', 'passed'], 'pass'],
    ['one failed, however the others ended', ['passed', 'setup-error', 'failed'], 'fail'],
    ['a warning and passes', ['passed', 'warning'], 'warning'],
    ['one unavailable', ['passed', 'unavailable'], 'error'],
    ['one harness error', ['error', 'passed'], 'error'],
    ['one setup error leaves it undecided', ['passed', 'setup-error'], 'setup error'],
    ['one not configured leaves it undecided', ['passed', 'skipped'], 'skipped'],
    ['only "not applicable" skips: not exercised', ['skipped'], 'not exercised'],
    ['no check ran', [], 'not run'],
  ];
  for (const [name, verdicts, expected] of rows)
    test(`${name}: ${expected}`, () => {
      const results = verdicts.map((v, i) =>
        check(`c${i}`, v, ['r'], v === 'skipped' ? (name.includes('not applicable') ? 'not applicable: nothing to see' : 'not configured: X') : ''),
      );
      expect(requirementResults(results, ['feed'], [entry('r')])[0]!.verdict).toBe(expected);
    });

  test('a requirement no check can observe from outside is unverifiable, with the catalogue reason', () => {
    const [r] = requirementResults([], ['feed'], [entry('r', { unverifiable: 'server internals' })]);
    expect([r!.verdict, r!.reason]).toEqual(['unverifiable', 'server internals']);
  });
  test('declared unchecked turns an undecided requirement into "declared unchecked", never a failed one', () => {
    const undecided = requirementResults([check('c', 'setup-error', ['r'])], ['feed'], [entry('r')], [{ id: 'r', reason: 'no such key' }]);
    const failed = requirementResults([check('c', 'failed', ['r'])], ['feed'], [entry('r')], [{ id: 'r', reason: 'no such key' }]);
    expect([undecided[0]!.verdict, failed[0]!.verdict]).toEqual(['declared unchecked', 'fail']);
  });
});

describe("the run's verdict and exit status", () => {
  const catalogue = [entry('m1'), entry('m2'), entry('s1', { level: 'SHOULD' })];
  const facts = (o: Partial<RunFacts> = {}): RunFacts => ({
    harnessErrors: [],
    startedAt: 0,
    finishedAt: 1000,
    targets: { feed: 'http://f', gateway: null, embedded: false },
    requests: 1,
    requestsByService: {},
    billableCalls: 0,
    budget: 10,
    complete: true,
    services: ['feed'],
    catalogue,
    ...o,
  });
  const both = (v1: Verdict, v2: Verdict, s: Verdict = 'passed', msg = '') => [
    check('a', v1, ['m1'], msg),
    check('b', v2, ['m2'], msg),
    check('c', s, ['s1'], '', 'SHOULD'),
  ];
  const rows: [string, CheckResult[], Partial<RunFacts>, string, number][] = [
    ['every MUST verified', both('passed', 'passed'), {}, 'conformant', 0],
    ['a SHOULD warning does not fail the run', both('passed', 'passed', 'warning'), {}, 'conformant', 0],
    ['a MUST failure', both('failed', 'passed'), {}, 'nonconformant', 1],
    ['a MUST failure wins over a setup error', both('failed', 'setup-error'), {}, 'nonconformant', 1],
    ['a MUST requirement undecided (setup error)', both('passed', 'setup-error'), {}, 'incomplete', 4],
    ['a MUST requirement undecided (not configured)', both('passed', 'skipped', 'passed', 'not configured: X'), {}, 'incomplete', 4],
    ['undecided with --allow-incomplete exits 0, the verdict stays', both('passed', 'setup-error'), { allowIncomplete: true }, 'incomplete', 0],
    ['declared unchecked: conformant', both('passed', 'setup-error'), { unchecked: [{ id: 'm2', reason: 'r' }] }, 'conformant', 0],
    ['a known deviation does not fail the run', both('failed', 'passed'), { knownDeviations: [{ id: 'a', reason: 't' }] }, 'conformant', 0],
    ['the target unavailable', both('passed', 'unavailable'), {}, 'error', 3],
    ['a harness error', both('passed', 'passed'), { harnessErrors: ['boom'] }, 'error', 3],
    ['an interrupted run', both('passed', 'passed'), { complete: false, interruption: 'SIGINT' }, 'error', 3],
    ['an unreachable target', [], { complete: false, unreachable: 'http://f is unreachable' }, 'error', 3],
    ['no check ran', [], {}, 'error', 3],
  ];
  for (const [name, results, o, verdict, exit] of rows)
    test(`${name}: ${verdict}, exit ${exit}`, () => {
      const s = summarize(results, facts(o));
      expect([s.verdict, s.exitCode], s.message).toEqual([verdict, exit]);
    });

  test('the model is pure: the same inputs give the same summary', () => {
    expect(summarize(both('passed', 'setup-error'), facts())).toEqual(summarize(both('passed', 'setup-error'), facts()));
    expect(summarize([], facts()).durationMs).toBe(1000);
  });
});
