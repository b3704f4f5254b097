/**
 * The HTML report: Allure 3 "awesome", one self-contained file, grouped document → section → requirement.
 * Allure embeds a third-party analytics script; it is removed so the report loads nothing from elsewhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { readingsOf, type Summary } from '../verdicts.js';
import { esc, targetLine } from './html-page.js';
import { asShown, onFileWritten, type AllureResult } from './allure-results.js';

const require = createRequire(import.meta.url);

/** The allure package's package.json (not exported, so walk up from its entry point): where its report packages resolve from. */
function allurePackageJson(): string {
  let dir = path.dirname(require.resolve('allure'));
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') dir = path.dirname(dir);
  return path.join(dir, 'package.json');
}

/** The script that writes the report through Allure's API (what `allure awesome --single-file` runs, without its CLI's load). */
const AWESOME = fileURLToPath(new URL('allure-awesome.mjs', import.meta.url));

interface Allure {
  child: ChildProcess;
  output: string[];
}

/** The Allure process: given the paths, it writes the report at once; without, it loads and waits for them (prewarmHtml). */
function start(paths: string[] = []): Allure {
  const child = spawn(process.execPath, [AWESOME, allurePackageJson(), ...paths], {
    stdio: ['ignore', 'pipe', 'pipe', ...(paths.length ? [] : ['ipc' as const])],
    env: { ...process.env, NO_COLOR: '1' },
  });
  const output: string[] = [];
  child.stdout!.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  return { child, output };
}

/** Whether the process and its pipes keep this one alive: not while it only waits, so a run that ends early is not held. */
function referenced(child: ChildProcess, on: boolean): void {
  for (const h of [child, child.channel, child.stdout, child.stderr] as ({ ref?: () => void; unref?: () => void } | null | undefined)[])
    if (on) h?.ref?.();
    else h?.unref?.();
}

/** The warm process, with the report it has opened (prewarmHtml given the report directory). */
type Warm = Allure & { resultsDir?: string; htmlDir?: string; stopListening?: () => void };
let warm: Warm | undefined;
/**
 * Start the HTML report's Allure process now, while the checks run: it loads its modules (0.3 s) meanwhile and
 * writes the report as soon as generateHtml gives it the paths. It ends with this process if it is never used.
 * Given the report directory, it also opens the report there now and reads each attachment as the run writes it
 * (some 1,900 files, the bulk of what the report embeds) and each check's result once it is final (the writer was
 * given the run's verdicts), so that the run's end leaves it little to read.
 */
export function prewarmHtml(reportDir?: string): void {
  if (warm) return;
  const w: Warm = start();
  warm = w;
  w.child.on('error', () => {
    w.stopListening?.();
    if (warm === w) warm = undefined;
  });
  referenced(w.child, false);
  if (reportDir === undefined) return;
  w.resultsDir = path.resolve(reportDir, 'allure-results');
  w.htmlDir = path.resolve(reportDir, 'html');
  w.child.send({ type: 'open', resultsDir: w.resultsDir, output: w.htmlDir });
  w.stopListening = onFileWritten((dir, name) => {
    if (path.resolve(dir) === w.resultsDir && w.child.connected) w.child.send({ type: 'file', name });
  });
}

function takeWarm(): Allure | undefined {
  const w = warm;
  warm = undefined;
  w?.stopListening?.();
  return w?.child.connected ? w : undefined;
}

/** Remove every <script> that loads code from elsewhere, and inline snippets that call out to analytics. */
export function stripThirdPartyScripts(html: string): string {
  return html
    .replace(/<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?\/\/[^>]*>\s*<\/script>/gi, '')
    .replace(/<script\b[^>]*>(?:(?!<\/script>)[\s\S])*?(?:googletagmanager|google-analytics|gtag\(|dataLayer)(?:(?!<\/script>)[\s\S])*<\/script>/gi, '');
}

/**
 * Prepare the Allure results for the HTML report: each result as the report shows it (asShown in
 * src/outputs/allure-results.ts: the harness's suite labels, the suite's verdict as the status). A result this run's
 * writer already wrote so is left as it is; gives the names of the files it rewrote.
 */
export function prepareResults(resultsDir: string, summary?: Summary): string[] {
  const byCheck = new Map((summary?.checks ?? []).map((c) => [c.id, c]));
  const rewritten: string[] = [];
  for (const f of readdirSync(resultsDir).filter((n) => n.endsWith('-result.json'))) {
    const file = path.join(resultsDir, f);
    const text = readFileSync(file, 'utf8');
    const r = JSON.parse(text) as AllureResult;
    // Fit to publish here too: a merge's shards may come from a version that wrote traces.
    const prepared = JSON.stringify(asShown(r, (id) => byCheck.get(id)));
    if (prepared !== text) {
      writeFileSync(file, prepared);
      rewritten.push(f);
    }
  }
  return rewritten;
}

/** The Allure report's page id of each test, by title (titles are unique: the harness enforces it). */
export function reportPages(htmlDir: string): Map<string, string> {
  const file = path.join(htmlDir, 'test-results.json');
  if (!existsSync(file)) return new Map();
  const t = JSON.parse(readFileSync(file, 'utf8')) as { byId?: Record<string, { id: string; name: string }> };
  return new Map(Object.values(t.byId ?? {}).map((x) => [x.name, x.id]));
}

/**
 * The report's first screen: Allure shows the results directory's environment.properties as "Metadata" on the
 * overview. It carries the run's verdict in the suite's own terms, the evidence per service, what was left
 * undecided, and where the clause matrix is.
 */
export function environmentProperties(s: Summary): string {
  const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\r?\n/g, ' ').replace(/^\s+/, '');
  const lines: [string, string][] = [
    ['Verdict', `${s.verdict.toUpperCase()}${s.verdict === 'incomplete' && s.allowIncomplete ? ' (allowed by --allow-incomplete)' : ''}`],
    ['Why', s.message],
  ];
  if (s.targets.embedded) lines.push(['Target', 'the embedded reference deployments, not a deployment of yours']);
  for (const e of s.evidence ?? []) {
    lines.push([
      e.service === 'feed' ? 'Feed' : 'Gateway',
      `${e.verified}/${e.must} MUST verified · ${e.failed} failed · ${e.undecided} undecided · ${e.notExercised} not exercised · ${e.declaredUnchecked} declared unchecked (${e.target ?? ''})`,
    ]);
  }
  const c = s.counts;
  lines.push([
    'Checks',
    `${c.passed} passed, ${c.failed} failed (MUST), ${c.warnings} warnings (SHOULD/MAY), ${c.knownDeviations} known deviations, ${c.skipped} skipped, ${c.setupErrors} setup errors ("broken" in this report), ${c.unavailable} target unavailable, ${c.errors} harness errors`,
  ]);
  const undecided = (s.undecided ?? []).filter((u) => u.level === 'MUST');
  if (undecided.length) lines.push(['Undecided', undecided.map((u) => `${u.id}: ${u.toDecide.split('\n')[0]}`).join(' · ')]);
  if (s.notExercised?.length) lines.push(['NotExercised', s.notExercised.map((u) => u.id).join(', ')]);
  lines.push(['ClauseMatrix', 'matrix.html, beside this index.html: every requirement, failures and undecided ones first']);
  return `${lines.map(([k, v]) => `${k}=${esc(v)}`).join('\n')}\n`;
}

/** Run the Allure process to its end (a warm one is sent its message first); its exit code and what it printed. */
function writeWith(a: Allure, message?: object): Promise<{ code: number; output: string[] }> {
  return new Promise((resolve, reject) => {
    a.child.on('error', reject);
    a.child.on('close', (c) => resolve({ code: c ?? 1, output: a.output }));
    if (message && a.child.connected) {
      referenced(a.child, true);
      // With the files rewritten since they were sent: a result it read while the run went on is read again.
      a.child.send(message);
    }
  });
}

export async function generateHtml(resultsDir: string, outDir: string, name: string, summary?: Summary): Promise<string> {
  const rewritten = prepareResults(resultsDir, summary);
  if (summary) writeFileSync(path.join(resultsDir, 'environment.properties'), environmentProperties(summary));
  const title = summary ? `${name} — ${summary.verdict.toUpperCase()}` : name;
  const paths = { resultsDir: path.resolve(resultsDir), output: path.resolve(outDir), name: title };
  const warmed = takeWarm();
  let { code, output } = await writeWith(warmed ?? start([paths.resultsDir, paths.output, paths.name]), { type: 'generate', ...paths, rewritten });
  // The process that read the results while the run went on failed (it held them in memory the whole run, and a
  // signal to the run's process group reaches it too): once more with a process of its own, reading them from disk.
  if (code !== 0 && warmed) ({ code, output } = await writeWith(start([paths.resultsDir, paths.output, paths.name])));
  const file = path.join(outDir, 'index.html');
  if (code !== 0 || !existsSync(file)) throw new Error(`the Allure report failed (exit ${code}): ${output.join('').slice(-2000)}`);
  // The page's bytes as latin1 (one character a byte, no decoding of its 20 MB): the patterns below are ASCII, and
  // the block put in is its UTF-8 bytes, so every byte of the page is kept as Allure wrote it (0.1 s less).
  const html = stripThirdPartyScripts(readFileSync(file, 'latin1'));
  const block = summary ? Buffer.from(firstScreen(summary), 'utf8').toString('latin1') : '';
  writeFileSync(file, block ? html.replace(/<body[^>]*>/, (body) => `${body}${block}`) : html, 'latin1');
  return file;
}

/**
 * The verdict and why, above the Allure report: its own static block (no script), the report beneath it in the rest
 * of the window. Allure opens its tree scrolled to the first failure and cuts its metadata values to one short
 * line; this block stays on the first screen, whole: the verdict with its sentence, the MUST requirements that
 * failed or were left undecided, the evidence per service, the target, and the clause matrix one click away.
 */
export function firstScreen(s: Summary): string {
  const ids = (xs: string[], n = 12) => `${xs.slice(0, n).join(', ')}${xs.length > n ? `, … (${xs.length} in all)` : ''}`;
  const failed = s.requirements.filter((r) => r.verdict === 'fail').map((r) => r.id);
  const undecided = (s.undecided ?? []).filter((u) => u.level === 'MUST');
  const lines = [
    `<p class="cs-verdict"><b style="color:${VERDICT_COLOURS[s.verdict]}">${esc(s.verdict.toUpperCase())}</b> — ${esc(s.message)}</p>`,
    failed.length ? `<p>MUST requirement${failed.length === 1 ? '' : 's'} failed: ${esc(ids(failed))}</p>` : '',
    undecided.length
      ? `<p>Undecided: ${esc(
          ids(
            undecided.map((u) => `${u.id} (${u.toDecide.split('\n')[0]})`),
            4,
          ),
        )}</p>`
      : '',
    ...(s.evidence ?? []).map(
      (e) =>
        `<p>${e.service === 'feed' ? 'Feed' : 'Gateway'}: ${e.verified}/${e.must} MUST verified · ${e.failed} failed · ${e.undecided} undecided · ${e.notExercised} not exercised · ${e.declaredUnchecked} declared unchecked</p>`,
    ),
    readingsLine(s),
    `<p>Target: ${esc(targetLine(s))} · <a href="matrix.html">the clause matrix</a>: every requirement, failures and undecided ones first</p>`,
  ];
  return `<style>${FIRST_SCREEN_STYLE}</style><header id="conformance-verdict">${lines.join('')}</header>`;
}

/** Where the documents are open and the checks accept each reading: the one this target showed, per point. */
function readingsLine(s: Summary): string {
  const byPoint = new Map<string, { question: string; answer: string; checks: string[] }>();
  for (const r of readingsOf(s.checks)) {
    const key = `${r.question}\n${r.answer}`;
    byPoint.set(key, { ...r, checks: [...(byPoint.get(key)?.checks ?? []), r.check] });
  }
  const readings = [...byPoint.values()];
  if (!readings.length) return '';
  const items = readings.map((r) => `${esc(r.question)}: <b>${esc(r.answer)}</b> (${esc(r.checks.join(', '))})`);
  return `<p>Where the documents are open, this target's reading${readings.length === 1 ? '' : 's'} (accepted, not failed): ${items.join(' · ')}</p>`;
}

const VERDICT_COLOURS: Record<Summary['verdict'], string> = { conformant: '#1a7f37', nonconformant: '#cf222e', incomplete: '#9a6700', error: '#a40e26' };

/** The block on top, the Allure app in the rest of the window (its own layout fills the height it is given). */
const FIRST_SCREEN_STYLE = `
html,body{height:100%;margin:0}
body{display:flex;flex-direction:column}
#conformance-verdict{flex:none;max-height:45vh;overflow:auto;padding:10px 24px;border-bottom:1px solid #d0d7de;background:#f6f8fa;
  font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2328;overflow-wrap:anywhere}
#conformance-verdict p{margin:2px 0} #conformance-verdict .cs-verdict{font-size:16px} #conformance-verdict a{color:#0969da}
#app{flex:1 1 auto;min-height:0;position:relative}
#app>div{height:100%!important;max-height:100%}`;
