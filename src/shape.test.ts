/**
 * The code's shape (scripts/shape.ts): no import circle in src/, no import from a lower layer to a higher one, and
 * no function over MAX_FUNCTION_LINES lines (STILL_TO_SPLIT would list any that had to wait, none of which may grow).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { circles, importGraph, longFunctions, MAX_FUNCTION_LINES, upwardArrows } from '../scripts/shape.js';

/** Functions over the bound, with the length they may not exceed: none left (each split in issue "One shape"). */
const STILL_TO_SPLIT: Record<string, number> = {};

test('src/ has no import circle', () => {
  expect(circles(importGraph())).toEqual([]);
});

test('no module of src/ imports from a layer above its own', () => {
  expect(upwardArrows(importGraph())).toEqual([]);
});

test(`no new function over ${MAX_FUNCTION_LINES} lines, and none of those left grows`, () => {
  const over = longFunctions().filter((f) => !(f.at in STILL_TO_SPLIT) || f.lines > STILL_TO_SPLIT[f.at]!);
  expect(over.map((f) => `${f.at}: ${f.lines} lines`)).toEqual([]);
});

test('the measures can fail: a circle, an upward arrow and a long function are found', () => {
  const g = new Map([
    ['src/a.ts', ['src/b.ts']],
    ['src/b.ts', ['src/a.ts']],
    ['src/spec.ts', ['src/cli.ts']],
  ]);
  expect(circles(g)).toEqual([['src/a.ts', 'src/b.ts']]);
  expect(upwardArrows(g)).toContain('src/spec.ts → src/cli.ts');
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'shape-')), 'long.ts');
  writeFileSync(file, `export function long(): number {\n${'  let x = 1;\n'.repeat(MAX_FUNCTION_LINES)}  return 0;\n}\nexport const short = () => 1;\n`);
  expect(longFunctions([file]).map((f) => f.at)).toEqual([`${file} long`]);
});
