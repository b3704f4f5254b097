/**
 * The HTML report: Allure 3 "awesome", one self-contained file, grouped document → section → requirement.
 * Allure embeds a third-party analytics script; it is removed so the report loads nothing from elsewhere.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The allure package's CLI script (its package.json is not exported, so walk up from its entry point). */
function allureCli(): string {
  let dir = path.dirname(require.resolve('allure'));
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') dir = path.dirname(dir);
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { bin: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.allure!;
  return path.join(dir, bin);
}

/** Remove every <script> that loads code from elsewhere, and inline snippets that call out to analytics. */
export function stripThirdPartyScripts(html: string): string {
  return html
    .replace(/<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?\/\/[^>]*>\s*<\/script>/gi, '')
    .replace(/<script\b[^>]*>(?:(?!<\/script>)[\s\S])*?(?:googletagmanager|google-analytics|gtag\(|dataLayer)(?:(?!<\/script>)[\s\S])*<\/script>/gi, '');
}

const SUITE_LABELS = new Set(['parentSuite', 'suite', 'subSuite']);

/**
 * allure-vitest labels each result with suites taken from the describe blocks; the harness labels it with the
 * document, section and requirement. Keep only the harness's (the last of each name), so the report is
 * organised by document -> section -> requirement.
 */
export function normaliseSuiteLabels(resultsDir: string): void {
  for (const f of readdirSync(resultsDir).filter((n) => n.endsWith('-result.json'))) {
    const file = path.join(resultsDir, f);
    const r = JSON.parse(readFileSync(file, 'utf8')) as { labels?: { name: string; value: string }[] };
    const labels = r.labels ?? [];
    const last = new Map<string, number>();
    labels.forEach((l, i) => {
      if (SUITE_LABELS.has(l.name)) last.set(l.name, i);
    });
    r.labels = labels.filter((l, i) => !SUITE_LABELS.has(l.name) || last.get(l.name) === i);
    writeFileSync(file, JSON.stringify(r));
  }
}

export async function generateHtml(resultsDir: string, outDir: string, name: string): Promise<string> {
  normaliseSuiteLabels(resultsDir);
  const args = [
    allureCli(),
    'awesome',
    resultsDir,
    '--single-file',
    '-o',
    outDir,
    '--name',
    name,
    '--group-by',
    'parentSuite,suite,subSuite',
    '--lang',
    'en',
    '--theme',
    'light',
  ];
  const output: string[] = [];
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  const file = path.join(outDir, 'index.html');
  if (code !== 0 || !existsSync(file)) throw new Error(`allure awesome failed (exit ${code}): ${output.join('').slice(-2000)}`);
  writeFileSync(file, stripThirdPartyScripts(readFileSync(file, 'utf8')));
  return file;
}
