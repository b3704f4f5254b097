/**
 * specs/check-ids.json is generated from the suites (`npm run check-ids`): a check added, renamed, moved or
 * re-cited without regenerating it fails here.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { drift } from '../scripts/check-ids.js';
import { collectChecks, loadCheckIds, type CheckIdRow } from './coverage.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

test('specs/check-ids.json lists exactly the check ids the suites register', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-ids.ts', '--check'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(run.stderr).not.toMatch(/out of date/);
  expect(run.status, run.stderr).toBe(0);
});

test('each committed id is unique, cites requirements and names the suite module that defines it', () => {
  const rows = loadCheckIds();
  expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  for (const r of rows) {
    expect(r.requirements.length, r.id).toBeGreaterThan(0);
    expect(r.file, r.id).toMatch(new RegExp(`^suites/${r.service}/[a-z-]+\\.checks\\.ts$`));
  }
});

test('drift is found: a check added, one removed, one renamed (its title) or re-cited', () => {
  const row = (id: string, title = id, requirements = ['feed-x']): CheckIdRow => ({
    id,
    service: 'feed',
    file: 'suites/feed/a.checks.ts',
    title,
    requirements,
  });
  const committed = [row('feed-a'), row('feed-b'), row('feed-c'), row('feed-d')];
  const collected = [row('feed-a'), row('feed-c', 'another title'), row('feed-d', 'feed-d', ['feed-y']), row('feed-e')];
  expect(drift(committed, collected)).toEqual(['added feed-e', 'changed feed-c (title)', 'changed feed-d (requirements)', 'removed feed-b']);
  expect(drift(committed, committed)).toEqual([]);
});

test('coverage links requirements to checks by the committed ids', () => {
  const by = collectChecks([
    { id: 'feed-a', service: 'feed', file: 'suites/feed/a.checks.ts', title: 'A', requirements: ['feed-x', 'feed-y'] },
    { id: 'feed-b', service: 'feed', file: 'suites/feed/a.checks.ts', title: 'B', requirements: ['feed-x'] },
  ]);
  expect(Object.fromEntries(by)).toEqual({ 'feed-x': ['feed-a', 'feed-b'], 'feed-y': ['feed-a'] });
});

test('a dependency between checks is data: no precondition names what reports the missing fact in prose ("reported by …")', async () => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const files = ['src', 'suites/feed', 'suites/gateway'].flatMap((d) =>
    readdirSync(`${ROOT}${d}`)
      .filter((f) => /\.ts$/.test(f) && !f.endsWith('.test.ts'))
      .map((f) => `${d}/${f}`),
  );
  const prose = files.flatMap((f) =>
    readFileSync(`${ROOT}${f}`, 'utf8')
      .split('\n')
      .flatMap((l, i) => (/[`'"].*\(reported by /.test(l) ? [`${f}:${i + 1}`] : [])),
  );
  expect(prose, 'write the requirement ids as precondition(cond, why, ...dependsOn)').toEqual([]);
});
