import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadCatalogue } from './spec.js';
import { facetProblems, type CoverageRow } from './coverage.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('requirement coverage listing', () => {
  test('lists every catalogue id once, each covered by a check, unverifiable with a reason, or pending', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/coverage.ts', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const rows = JSON.parse(run.stdout) as CoverageRow[];
    // The gate: every facet is decided by checks that exist and cite its requirement, or states why none can.
    expect(facetProblems(rows), run.stderr).toEqual([]);
    expect(run.status, run.stderr).toBe(0);
    const catalogue = loadCatalogue();
    expect(rows.map((r) => r.id).sort()).toEqual([...catalogue.keys()].sort());
    for (const r of rows) {
      if (r.status === 'covered') expect(r.checks.length, r.id).toBeGreaterThan(0);
      if (r.status === 'unverifiable' || r.status === 'not applicable') expect(r.reason, r.id).toBeTruthy();
    }
  });
});
