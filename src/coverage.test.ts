import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadCatalogue } from './spec.js';
import type { CoverageRow } from './coverage.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('requirement coverage listing', () => {
  test('lists every catalogue id once, each covered by a check, unverifiable with a reason, or pending', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/coverage.ts', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as CoverageRow[];
    const catalogue = loadCatalogue();
    expect(rows.map((r) => r.id).sort()).toEqual([...catalogue.keys()].sort());
    for (const r of rows) {
      if (r.status === 'covered') expect(r.checks.length, r.id).toBeGreaterThan(0);
      if (r.status === 'unverifiable' || r.status === 'not applicable') expect(r.reason, r.id).toBeTruthy();
    }
  });
});
