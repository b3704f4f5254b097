/**
 * Every output of a report directory, in one list (OUTPUTS). The conformance command (src/cli.ts), the shard merge
 * (scripts/merge-reports.ts) and client conformance (src/client-conformance/cli.ts) all write through it:
 * prepareReportDir removes each output of an earlier run, writeReport writes each, reportLines says where each went.
 * A new output is one entry here, and every command writes it.
 *
 * Two outputs are recorded by the run as it goes (exchanges.jsonl by the HTTP client or the observer, the Allure
 * results by the reporter or the client judge): their entries write them only for a merge, from the shards'. The
 * others are written from the summary once the verdict is known.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Summary } from '../verdicts.js';
import { EXCHANGES_FILE } from '../context.js';
import { ctrfReport } from './ctrf.js';
import { junitXml } from './junit.js';
import { prewarmHtml } from './html.js';
import { loadFacets, writeAllureHtml, writeMatrix } from './pages.js';

/** What a command gives its outputs. */
export interface Report {
  dir: string;
  /** The run's summary in the verdict model's terms (src/verdicts.ts): what every output is written from. */
  summary: Summary;
  /** What summary.json holds when the command keeps a record of its own around the summary (client conformance's). */
  record?: object;
  /** The report's title (the HTML report's name). */
  title: string;
  /** Whether to write the HTML report (--no-html). */
  html: boolean;
  /** The report directories merged into this one (the shard merge); none for a run, whose recorded outputs are in place. */
  shards?: string[];
}

/** What warming the outputs knows: whether the HTML report is wanted, and the report directory when it is the run's. */
export interface Warm {
  html: boolean;
  /** The report directory the run writes its Allure results to (the HTML report's process reads them as they come). */
  dir?: string;
}

export interface Output {
  /** Its file or folder in the report directory. */
  name: string;
  /** How the closing lines name it ("junit:"); unnamed outputs are not listed. */
  label?: string;
  /** Written by the run as it goes (a merge joins the shards'), not from the summary. */
  recorded?: boolean;
  /** Written after an interruption too, with the partial summary. */
  partial?: boolean;
  /** The output whose files it reads: written once that one is (the others are written at once, side by side). */
  after?: string;
  /** Starts what it takes long to load, while the run goes on (warmOutputs). */
  warm?(o: Warm): void;
  /** Writes it; gives what it wrote (undefined when there was nothing to write), or throws why it could not. */
  write(r: Report): string | undefined | Promise<string | undefined>;
}

/** Client conformance's page of the rules as judged (an output it records). */
export const RULES_PAGE = 'report.html';

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
const file = (r: Report, name: string) => path.join(r.dir, name);

export const OUTPUTS: Output[] = [
  {
    name: EXCHANGES_FILE,
    recorded: true,
    write: (r) => {
      if (!r.shards) return undefined;
      const parts = r.shards.map((d) => path.join(d, EXCHANGES_FILE)).filter((f) => existsSync(f));
      writeFileSync(file(r, EXCHANGES_FILE), parts.map((f) => readFileSync(f, 'utf8')).join(''));
      return file(r, EXCHANGES_FILE);
    },
  },
  {
    name: 'allure-results',
    recorded: true,
    write: (r) => {
      if (!r.shards) return undefined;
      const to = file(r, 'allure-results');
      mkdirSync(to, { recursive: true });
      for (const d of r.shards) if (existsSync(path.join(d, 'allure-results'))) cpSync(path.join(d, 'allure-results'), to, { recursive: true });
      return to;
    },
  },
  {
    // Client conformance's page of the rules as judged, with the exchanges that show each (recorded by
    // src/client-conformance/report.ts recordClientRun; the conformance command has no client rules to show).
    name: RULES_PAGE,
    label: 'rules page',
    recorded: true,
    write: (r) => (existsSync(file(r, RULES_PAGE)) ? file(r, RULES_PAGE) : undefined),
  },
  { name: 'summary.json', label: 'summary', partial: true, write: (r) => write(r, 'summary.json', json(r.record ?? r.summary)) },
  { name: 'junit.xml', label: 'junit', partial: true, write: (r) => write(r, 'junit.xml', junitXml(r.summary)) },
  { name: 'ctrf.json', label: 'ctrf', partial: true, write: (r) => write(r, 'ctrf.json', json(ctrfReport(r.summary))) },
  // The HTML report (Allure, in a process of its own, from the Allure results) and the clause matrix (each check
  // linked to its page in the report): one folder.
  {
    name: 'html',
    label: 'HTML report',
    after: 'allure-results',
    warm: (o) => o.html && prewarmHtml(o.dir),
    write: (r) => (r.html ? writeAllureHtml(r.dir, r.summary, r.title) : undefined),
  },
  {
    name: path.join('html', 'matrix.html'),
    label: 'matrix',
    after: 'html',
    warm: () => void loadFacets().catch(() => undefined), // a failure is the matrix's, reported when it is written
    write: (r) => writeMatrix(r.dir, r.summary),
  },
];

function write(r: Report, name: string, content: string): string {
  mkdirSync(r.dir, { recursive: true });
  writeFileSync(file(r, name), content);
  return file(r, name);
}

/**
 * An earlier run's outputs are moved aside under this prefix (the suite's own, so no file of the user's is taken for
 * one) at once and removed while the run goes on (an earlier run's Allure results are some 2,500 files: 0.2 s removed
 * in place, before the first check). A run interrupted before they were gone leaves them for the next run to remove.
 */
const REMOVING = '.conformance-removing-';
let removing: Promise<unknown> = Promise.resolve();

/** Settles when what prepareReportDir moved aside is removed (writeReport waits for it before it writes). */
export function earlierOutputsRemoved(): Promise<unknown> {
  return removing;
}

/**
 * Every output of an earlier run moved aside (removed as the run goes on) and the directory shown writable; the
 * problem if it is not.
 */
export function prepareReportDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true });
    const aside: string[] = [];
    for (const o of OUTPUTS) {
      const p = path.join(dir, o.name);
      if (!existsSync(p)) continue;
      const to = path.join(dir, `${REMOVING}${o.name}-${process.pid}-${Date.now().toString(36)}-${aside.length}`);
      try {
        renameSync(p, to);
        aside.push(to);
      } catch {
        rmSync(p, { recursive: true, force: true });
      }
    }
    for (const e of readdirSync(dir)) {
      const p = path.join(dir, e);
      if (e.startsWith(REMOVING) && !aside.includes(p)) aside.push(p);
    }
    removing = Promise.all(aside.map((p) => rm(p, { recursive: true, force: true }).catch(() => undefined)));
    writeFileSync(path.join(dir, '.write-test'), '');
    rmSync(path.join(dir, '.write-test'));
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Start what the outputs need and takes long to load while the run goes on (it costs the run nothing on a second
 * core): the HTML report's Allure process (0.3 s of loading) and the matrix's facets (0.4 s). Each command calls it
 * before its checks or its client run; writeReport works without it too.
 */
export function warmOutputs(o: Warm): void {
  for (const output of OUTPUTS) output.warm?.(o);
}

/** What each output wrote (its path), or why it could not. */
export type Written = { output: Output; path?: string; error?: string }[];

/**
 * Every output of the list (with `partial`, those an interruption writes), each as soon as the output it reads is
 * written, the others side by side: the HTML report waits on Allure in its process while the files are written
 * and the matrix's facets load here. What a command did not warm starts now. Gives what each wrote, in the list's order.
 */
export async function writeReport(r: Report, o: { partial?: boolean } = {}): Promise<Written> {
  await earlierOutputsRemoved();
  const outputs = OUTPUTS.filter((x) => !o.partial || x.partial);
  if (!o.partial) warmOutputs({ html: r.html });
  const done = new Map<string, Promise<Written[number]>>();
  for (const output of outputs) {
    const before = (output.after && done.get(output.after)) || Promise.resolve();
    done.set(
      output.name,
      before.then(() => attempt(output, r)),
    );
  }
  return Promise.all(outputs.map((x) => done.get(x.name)!));
}

async function attempt(output: Output, r: Report): Promise<Written[number]> {
  try {
    return { output, path: await output.write(r) };
  } catch (e) {
    return { output, error: (e as Error).message };
  }
}

/** The closing lines that say where each output went ("junit:       <path>"), in the list's order. */
export function reportLines(written: Written): string[] {
  const named = written.filter((w) => w.output.label && w.path);
  const width = Math.max(0, ...OUTPUTS.map((o) => o.label?.length ?? 0)) + 2;
  return named.map((w) => `${`${w.output.label}:`.padEnd(width)}${w.path}`);
}

/** The outputs that could not be written, each with why. */
export function failedOutputs(written: Written): string[] {
  return written.filter((w) => w.error).map((w) => `the ${w.output.label ?? w.output.name} could not be written: ${w.error}`);
}

/** The entries of a report directory that are no output of the list (a test holds it empty: nothing is written outside the list). */
export function unlisted(dir: string): string[] {
  const names = new Set(OUTPUTS.map((o) => o.name.split(path.sep)[0]));
  return readdirSync(dir).filter((n) => !names.has(n));
}
