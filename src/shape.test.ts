/**
 * The code's shape (scripts/shape.ts): no import circle in src/ and no import against its layers (import() read
 * too), every module of src/ in a layer, no import from the product into fixtures/ but the commands' of the
 * reference deployments, no function over MAX_FUNCTION_LINES and no class over MAX_CLASS_LINES lines in src/,
 * suites/, fixtures/ and scripts/, and every check module in suites/order.ts. Known violations are listed with their
 * reasons in scripts/shape-known.json; the list only shrinks. Each kind is shown failing on a made-up tree, through
 * the measure and through the command's exit status.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { judge, KNOWN_FILE, loadKnown, MAX_CLASS_LINES, MAX_FUNCTION_LINES, report, violations, type Kind, type KnownViolation } from '../scripts/shape.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

test('the tree has no violation but those listed, and every listed one is still there at its size or smaller', async () => {
  const j = judge(await violations(), loadKnown());
  expect(j.fresh, 'new violations (fix them)').toEqual([]);
  expect(j.grown, 'listed functions or classes that grew').toEqual([]);
  expect(j.stale, `entries of ${KNOWN_FILE} whose violation is gone (remove them)`).toEqual([]);
});

test('every known violation states its reason, and a function or class its size', () => {
  for (const k of loadKnown()) {
    expect(k.reason.length, k.at).toBeGreaterThan(20);
    if (k.kind === 'long function' || k.kind === 'large class') expect(k.size, k.at).toBeGreaterThan(0);
  }
});

/** A made-up tree with one violation of each kind (and the modules a clean tree needs). */
function madeUpTree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'shape-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

const body = (n: number) => '  let x = 1;\n'.repeat(n);
const order = (feed: { concurrent?: string[]; sequential?: string[]; last?: string[] }) =>
  `export const SUITE_ORDER = { feed: ${JSON.stringify({ concurrent: [], sequential: [], last: [], ...feed })} };\n`;

const CLEAN: Record<string, string> = {
  'src/spec.ts': 'export const a = 1;\n',
  'src/cli.ts': "import { a } from './spec.js';\nexport const run = async () => (await import('../fixtures/embedded.js')).start(a);\n",
  'fixtures/embedded.ts': 'export const start = (n: number) => n;\n',
  'suites/feed/a.checks.ts': 'export {};\n',
  'suites/feed/b.checks.ts': "describe.sequential('in order', () => {});\n",
  'suites/order.ts': order({ concurrent: ['a.checks.ts'], sequential: ['b.checks.ts'] }),
};

/** Each kind: the files that add one violation of it to the clean tree, and where the guard must find it. */
const CASES: { kind: Kind; files: Record<string, string>; at: string | RegExp }[] = [
  {
    kind: 'import circle',
    // The way back is a dynamic import(): the guard reads those too.
    files: { 'src/ledger.ts': "import './version.js';\n", 'src/version.ts': "export const load = () => import('./ledger.js');\n" },
    at: 'src/ledger.ts ⇄ src/version.ts',
  },
  { kind: 'upward import', files: { 'src/version.ts': "export const f = () => import('./cli.js');\n" }, at: 'src/version.ts → src/cli.ts' },
  {
    kind: 'product imports fixtures',
    files: { 'src/version.ts': "export { start } from '../fixtures/embedded.js';\n", 'src/cli.ts': "import '../fixtures/variants.js';\n" },
    at: /^src\/(version\.ts → fixtures\/embedded|cli\.ts → fixtures\/variants)\.ts$/,
  },
  { kind: 'unlayered module', files: { 'src/newcomer.ts': 'export const b = 2;\n' }, at: 'src/newcomer.ts' },
  {
    kind: 'long function',
    files: { 'suites/feed/a.checks.ts': `checkGroup('a group', () => {\n${body(MAX_FUNCTION_LINES)}});\n` },
    at: "suites/feed/a.checks.ts checkGroup('a group')",
  },
  { kind: 'long function', files: { 'fixtures/long.ts': `export function long() {\n${body(MAX_FUNCTION_LINES)}}\n` }, at: 'fixtures/long.ts long' },
  { kind: 'long function', files: { 'scripts/long.mjs': `export const long = () => {\n${body(MAX_FUNCTION_LINES)}};\n` }, at: 'scripts/long.mjs long' },
  {
    kind: 'large class',
    files: { 'src/spec.ts': `export const a = 1;\nexport class Big {\n${'  f = 1;\n'.repeat(MAX_CLASS_LINES)}}\n` },
    at: 'src/spec.ts Big',
  },
  { kind: 'suite order', files: { 'suites/feed/c.checks.ts': 'export {};\n' }, at: 'suites/feed/c.checks.ts is listed nowhere in suites/order.ts' },
  {
    kind: 'suite order',
    files: { 'suites/feed/a.checks.ts': "describe.sequential('x', () => {});\n" },
    at: 'suites/feed/a.checks.ts holds a describe.sequential block but is listed as concurrent',
  },
  {
    kind: 'suite order',
    files: { 'suites/order.ts': order({ concurrent: ['a.checks.ts', 'gone.checks.ts'], sequential: ['b.checks.ts'] }) },
    at: 'suites/order.ts lists suites/feed/gone.checks.ts, which does not exist',
  },
];

function shape(root: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/shape.ts', '--root', root], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
}

/** The guard's verdict on a tree, as the command computes it (its exit status is `ok`; the command is run twice below). */
const verdictOf = async (root: string) => report(judge(await violations(root), loadKnown(root)));

describe('the guard finds each kind of violation on a made-up tree, and the command exits 1', () => {
  test('a clean tree: nothing found, exit 0 (a command may import a reference deployment)', async () => {
    expect(await violations(madeUpTree(CLEAN))).toEqual([]);
    const run = shape(madeUpTree(CLEAN));
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });

  test('the command prints a violation as NEW and exits 1', () => {
    const c = CASES[0]!;
    const run = shape(madeUpTree({ ...CLEAN, ...c.files }));
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain(`NEW    ${typeof c.at === 'string' ? c.at : ''}`);
  });

  test.each(CASES.map((c) => [`${c.kind}: ${String(c.at)}`, c] as const))('%s', async (_, c) => {
    const root = madeUpTree({ ...CLEAN, ...c.files });
    const found = await violations(root);
    expect(found.filter((v) => (typeof c.at === 'string' ? v.at === c.at : c.at.test(v.at))).map((v) => v.kind)).toEqual(expect.arrayContaining([c.kind]));
    expect(found.every((v) => v.kind === c.kind)).toBe(true);
    const r = await verdictOf(root);
    expect(r.ok, r.text).toBe(false);
    expect(r.text).toContain(`NEW    ${typeof c.at === 'string' ? c.at : ''}`);
  });

  test('a known violation is reported with its reason and passes; grown or gone, its entry fails', async () => {
    const files = { ...CLEAN, 'fixtures/long.ts': `export function long() {\n${body(MAX_FUNCTION_LINES)}}\n` };
    const size = MAX_FUNCTION_LINES + 2;
    const entry: KnownViolation = { kind: 'long function', at: 'fixtures/long.ts long', size, reason: 'made up: waits for a split' };
    const known = (e: KnownViolation[]) => ({ [KNOWN_FILE]: JSON.stringify({ violations: e }) });

    const listed = await verdictOf(madeUpTree({ ...files, ...known([entry]) }));
    expect(listed.ok, listed.text).toBe(true);
    expect(listed.text).toContain(`known  fixtures/long.ts long (${size} lines): made up: waits for a split`);

    const grown = await verdictOf(madeUpTree({ ...files, ...known([{ ...entry, size: size - 1 }]) }));
    expect(grown.ok).toBe(false);
    expect(grown.text).toContain(`GREW   fixtures/long.ts long: ${size} lines, listed at ${size - 1}`);

    const gone = await verdictOf(madeUpTree({ ...CLEAN, ...known([entry]) }));
    expect(gone.ok).toBe(false);
    expect(gone.text).toContain('STALE  long function: fixtures/long.ts long is listed');

    expect(report(judge([], [])).ok).toBe(true);
  });
});
