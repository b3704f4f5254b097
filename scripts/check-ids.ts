/**
 * `npm run check-ids [-- --check]`: every check id the suites register at run time (many are built in loops or
 * templates, so most appear nowhere in the tree as written), with its module, title and requirement ids, written
 * to specs/check-ids.json: the index the coverage listing reads and a reader can search. Collected by vitest from
 * the conformance suites (not run), with the collecting context of src/context.ts. `--check` writes nothing and
 * exits 1 when the committed file differs from what the suites register (src/check-ids.test.ts runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVitest } from 'vitest/node';
import { setCollectContext } from '../src/context.js';
import { CHECK_IDS_FILE, type CheckIdRow, type CheckIds } from '../src/coverage.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every check the suites register, in id order. */
export async function collectCheckIds(): Promise<CheckIdRow[]> {
  setCollectContext();
  const vitest = await createVitest('test', {
    root: ROOT,
    config: path.join(ROOT, 'vitest.config.ts'),
    project: ['conformance'],
    watch: false,
    reporters: [],
  });
  try {
    const result = await vitest.collect();
    const errors = [...result.unhandledErrors, ...result.testModules.flatMap((m) => m.errors())];
    if (errors.length) throw new Error(`collecting the suites failed: ${errors.map((e) => (e as Error).message).join('; ')}`);
    const rows: CheckIdRow[] = [];
    for (const mod of result.testModules) {
      for (const tc of mod.children.allTests()) {
        const meta = tc.meta();
        if (!meta.check || !meta.file || !meta.service) throw new Error(`${tc.fullName}: not registered through check() (no id, module or service)`);
        rows.push({ id: meta.check, service: meta.service, file: meta.file, title: tc.name, requirements: meta.requirements ?? [] });
      }
    }
    return rows.sort((a, b) => a.id.localeCompare(b.id));
  } finally {
    await vitest.close();
  }
}

/** The committed file's text for these rows (formatted as Prettier would, so `npm run lint` accepts it). */
export async function checkIdsText(checks: CheckIdRow[]): Promise<string> {
  const data: CheckIds = { generatedBy: 'npm run check-ids', checks };
  const prettier = await import('prettier');
  const file = path.join(ROOT, CHECK_IDS_FILE);
  return prettier.format(JSON.stringify(data), { ...(await prettier.resolveConfig(file)), filepath: file });
}

/** What changed between the committed index and the suites: "added x", "removed y", "changed z (title, file)". */
export function drift(committed: CheckIdRow[], collected: CheckIdRow[]): string[] {
  const before = new Map(committed.map((c) => [c.id, c]));
  const after = new Map(collected.map((c) => [c.id, c]));
  const out: string[] = [];
  for (const id of after.keys()) if (!before.has(id)) out.push(`added ${id}`);
  for (const id of before.keys()) if (!after.has(id)) out.push(`removed ${id}`);
  for (const [id, c] of after) {
    const b = before.get(id);
    if (!b) continue;
    const fields = (['service', 'file', 'title', 'requirements'] as const).filter((k) => JSON.stringify(b[k]) !== JSON.stringify(c[k]));
    if (fields.length) out.push(`changed ${id} (${fields.join(', ')})`);
  }
  return out.sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const collected = await collectCheckIds();
  const file = path.join(ROOT, CHECK_IDS_FILE);
  if (process.argv.includes('--check')) {
    const committed = JSON.parse(readFileSync(file, 'utf8')) as CheckIds;
    const changes = drift(committed.checks, collected);
    const text = await checkIdsText(collected);
    if (changes.length || text !== readFileSync(file, 'utf8')) {
      console.error(`${CHECK_IDS_FILE} is out of date (run npm run check-ids):${changes.map((c) => `\n  ${c}`).join('') || '\n  (order or formatting)'}`);
      process.exitCode = 1;
    } else console.log(`${CHECK_IDS_FILE}: ${collected.length} check ids, as the suites register them`);
  } else {
    writeFileSync(file, await checkIdsText(collected));
    console.log(`${CHECK_IDS_FILE}: ${collected.length} check ids written`);
  }
}
