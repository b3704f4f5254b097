/**
 * The verdict rules as data: the README's tables ("Verdicts and exit status"), row by row. A requirement's verdict
 * from the verdicts of the checks citing it; the run's verdict and exit status from the checks of a run.
 */
import { describe, expect, test } from 'vitest';
import {
  mergeSummaries,
  requirementResults,
  summarize,
  type CheckResult,
  type RequirementVerdict,
  type RunFacts,
  type SkipKind,
  type Summary,
  type Verdict,
} from './verdicts.js';
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
  // The harness records a skip's kind as a field; these rows write it as the harness's message would begin.
  ...(verdict === 'skipped' ? { skip: { kind: (/^(not applicable|not exercised):/.exec(message)?.[1] ?? 'not configured') as SkipKind } } : {}),
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
  test('a setup error names, as data, the requirements its precondition depends on, and which of them this run found broken', () => {
    const results = [
      { ...check('c', 'setup-error', ['r']), dependsOn: ['a', 'b'] },
      { ...check('d', 'setup-error', ['r']), dependsOn: ['a'] },
      check('e', 'failed', ['a']),
      check('f', 'passed', ['b']),
    ];
    const [r] = requirementResults(results, ['feed'], [entry('r'), entry('a'), entry('b')]);
    expect({ verdict: r!.verdict, dependsOn: r!.dependsOn, dependsOnFailed: r!.dependsOnFailed }).toEqual({
      verdict: 'setup error',
      dependsOn: ['a', 'b'],
      dependsOnFailed: ['a'],
    });
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

describe('shards merge, by concatenation, into the summary one run of the same checks would have given', () => {
  const catalogue = [entry('f1'), entry('g1', { service: 'gateway' }), entry('g2', { service: 'gateway' })];
  const gw = (c: CheckResult): CheckResult => ({ ...c, service: 'gateway' });
  const checks = ([f, g1, g2]: Verdict[]) => [
    ...(f ? [check('f', f, ['f1'])] : []),
    ...(g1 ? [gw(check('g-1', g1, ['g1'], g1 === 'skipped' ? 'not configured: set GATEWAY_EXPIRED_KEY' : ''))] : []),
    ...(g2 ? [gw(check('g-2', g2, ['g2']))] : []),
  ];
  const facts = (o: Partial<RunFacts>, services: RunFacts['services'], startedAt: number): RunFacts => ({
    harnessErrors: [],
    startedAt,
    finishedAt: startedAt + 1000,
    targets: { feed: 'http://f', gateway: 'http://g', embedded: false },
    requests: 1,
    requestsByService: {},
    billableCalls: 0,
    budget: 10,
    complete: true,
    services,
    catalogue,
    ...o,
  });
  // What ends the run early (a signal, an unreachable target) happens to the gateway's shard.
  const rows: [string, Verdict[], Partial<RunFacts>][] = [
    ['every MUST verified', ['passed', 'passed', 'passed'], {}],
    ['the gateway short of keys, declared unchecked', ['passed', 'skipped', 'passed'], { unchecked: [{ id: 'g1', reason: 'no expired key in staging' }] }],
    ['the gateway short of keys, not declared', ['passed', 'skipped', 'passed'], {}],
    ['short of keys with --allow-incomplete', ['passed', 'skipped', 'passed'], { allowIncomplete: true }],
    ['a known deviation', ['passed', 'failed', 'passed'], { knownDeviations: [{ id: 'g1', reason: 'our build' }] }],
    ['a MUST failure', ['passed', 'failed', 'passed'], {}],
    ['a SHOULD warning under --grep', ['passed', 'passed', 'passed'], { grep: 'f,g' }],
    ['the gateway shard interrupted', ['passed', 'passed', 'passed'], { complete: false, interruption: 'SIGTERM received' }],
    ['the gateway unreachable', ['passed', undefined!, undefined!], { complete: false, unreachable: 'http://g is unreachable: ECONNREFUSED' }],
  ];
  const endsEarly = (o: Partial<RunFacts>): Partial<RunFacts> =>
    o.complete === false ? { complete: false, unreachable: o.unreachable, interruption: o.interruption } : {};
  for (const [name, verdicts, o] of rows)
    test(name, () => {
      const all = checks(verdicts);
      const whole = summarize(all, facts(o, ['feed', 'gateway'], 0));
      const { complete: _c, unreachable: _u, interruption: _i, ...shared } = o;
      const shards = [
        summarize(
          all.filter((c) => c.service === 'feed'),
          facts(shared, ['feed'], 0),
        ),
        summarize(
          all.filter((c) => c.service === 'gateway'),
          facts({ ...shared, ...endsEarly(o) }, ['gateway'], 100),
        ),
      ].map((s) => JSON.parse(JSON.stringify(s)) as Summary);
      const merged = mergeSummaries(shards);
      const pick = (s: Summary) => ({
        verdict: s.verdict,
        exitCode: s.exitCode,
        message: s.message,
        evidence: s.evidence.map((e) => ({ ...e, target: null })),
        declaredUnchecked: s.declaredUnchecked,
        knownDeviations: s.knownDeviations,
        undecided: s.undecided,
        grep: s.grep,
        counts: s.counts,
        requirements: s.requirements,
        checks: s.checks,
        notExercised: s.notExercised,
        failures: s.failures,
      });
      expect(pick(merged)).toEqual(pick(whole));
      expect([merged.startedAt, merged.finishedAt]).toEqual([new Date(0).toISOString(), new Date(1100).toISOString()]);
    });
});

describe('a skip is judged by the kind and cause the harness recorded, never by its words', () => {
  const skipped = (message: string, skip: CheckResult['skip']): CheckResult => ({ ...check('c', 'skipped', ['r'], message), skip });
  const catalogue = [{ id: 'r', service: 'feed', level: 'MUST', subject: 'server' } as CatalogueEntry];
  test('a message that reads "not applicable" on a skip recorded as not configured leaves the requirement undecided', () => {
    const [q] = requirementResults([skipped('not applicable: words only', { kind: 'not configured' })], ['feed'], catalogue);
    expect(q!.verdict).toBe('skipped');
  });
  test('a skip recorded as not applicable, whatever its words, makes the requirement not exercised', () => {
    const [q] = requirementResults([skipped('not configured: words only', { kind: 'not applicable' })], ['feed'], catalogue);
    expect(q!.verdict).toBe('not exercised');
  });
  test('a refused key is said first because the skip\'s cause says so, not because a message says "was refused with"', () => {
    const facts = { complete: true, harnessErrors: [], startedAt: 0, finishedAt: 1, targets: {}, catalogue } as unknown as RunFacts;
    const byCause = summarize([skipped('not configured: the key did not work (401)', { kind: 'not configured', cause: 'key-refused' })], facts);
    expect(byCause.message).toMatch(/^the key did not work \(401\) \(1 MUST requirement\(s\) could not be checked\)/);
    const byWords = summarize([skipped('not configured: GATEWAY_API_KEY was refused with 401', { kind: 'not configured' })], facts);
    expect(byWords.message).toMatch(/^no MUST requirement failed, but 1 MUST requirement\(s\) were not verified/);
  });
});
