/** The report directory before a run: an earlier run's outputs go at once, and are removed while the run goes on. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { earlierOutputsRemoved, OUTPUTS, prepareReportDir } from './index.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("an earlier run's outputs are gone from their names at once, then removed; a leftover of an interrupted run too; other files stay", async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'report-dir-'));
  const results = path.join(dir, 'allure-results');
  mkdirSync(results);
  for (let i = 0; i < 50; i++) writeFileSync(path.join(results, `${i}-attachment.json`), '{}');
  writeFileSync(path.join(dir, 'summary.json'), '{}');
  mkdirSync(path.join(dir, '.conformance-removing-allure-results-1-0'));
  writeFileSync(path.join(dir, 'notes.txt'), 'a file of the user');
  writeFileSync(path.join(dir, '.removing-mine'), 'a file of the user named like a leftover of another tool');
  expect(OUTPUTS.map((o) => o.name)).toEqual(expect.arrayContaining(['allure-results', 'summary.json']));

  expect(prepareReportDir(dir)).toBeUndefined();
  expect(existsSync(results)).toBe(false);
  expect(existsSync(path.join(dir, 'summary.json'))).toBe(false);
  await earlierOutputsRemoved();
  expect(readdirSync(dir).sort()).toEqual(['.removing-mine', 'notes.txt']);
});

test('a report directory that cannot be written is said, not thrown', () => {
  dir = mkdtempSync(path.join(tmpdir(), 'report-dir-'));
  writeFileSync(path.join(dir, 'file'), '');
  expect(prepareReportDir(path.join(dir, 'file', 'report'))).toMatch(/ENOTDIR|EEXIST/);
});
