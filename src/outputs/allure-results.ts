/**
 * The Allure results writer of a run. allure-vitest writes every result and attachment through a temporary file,
 * fsync and rename: about 450 files per run, each flushed to disk one after another on the main thread. That was
 * a third of the wall time of a warm run on this project's CI machine (measured with --cpu-prof: open and fsync
 * were 0.6 s of a 2 s run). The files are written whole with one call each instead; a run that is killed still
 * leaves every file it finished, which is all a partial report needs. Each result is written fit to publish
 * (src/outputs/publishable.ts: no stack trace, no runner path or label) and with the harness's suite labels only
 * (lastSuiteLabels), as the HTML report reads it.
 */
import { mkdirSync } from 'node:fs';
import { copyFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import AllureVitestReporter, { type AllureVitestReporterConfig } from 'allure-vitest/reporter';
import { FileSystemWriter } from 'allure-js-commons/sdk/reporter';
import type { TestCase, Vitest } from 'vitest/node';
import { publishableAllure } from './publishable.js';
import type { CheckResult } from '../verdicts.js';

type Written = Parameters<FileSystemWriter['writeResult']>[0];
type Group = Parameters<FileSystemWriter['writeGroup']>[0];
type Categories = Parameters<FileSystemWriter['writeCategoriesDefinitions']>[0];
type Globals = Parameters<FileSystemWriter['writeGlobals']>[1];

const SUITE_LABELS = new Set(['parentSuite', 'suite', 'subSuite']);

/**
 * allure-vitest labels each result with suites taken from the describe blocks; the harness labels it with the
 * document, section and requirement. Only the harness's are kept (the last of each name), so the HTML report is
 * organised by document -> section -> requirement.
 */
export function lastSuiteLabels<L extends { name: string }>(labels: L[]): L[] {
  const last = new Map<string, number>();
  labels.forEach((l, i) => {
    if (SUITE_LABELS.has(l.name)) last.set(l.name, i);
  });
  return labels.filter((l, i) => !SUITE_LABELS.has(l.name) || last.get(l.name) === i);
}

/** What the HTML report reads of an Allure result. */
export interface AllureResult {
  labels?: { name: string; value: string }[];
  status?: string;
  statusDetails?: { message?: string; trace?: string };
  steps?: AllureResult[];
  fullName?: string;
}

/** A check's verdict as the run's summary gives it (the known deviation it matched, the level, the message). */
export type ShownCheck = Pick<CheckResult, 'verdict' | 'knownDeviation' | 'level' | 'message'>;

/**
 * An Allure result as the HTML report shows it:
 * - allure-vitest labels each result with suites taken from the describe blocks; the harness labels it with the
 *   document, section and requirement. Only the harness's are kept (the last of each name), so the report is
 *   organised by document -> section -> requirement.
 * - the status shows the suite's verdict: a known deviation is skipped with its reason, a SHOULD/MAY warning is
 *   "unknown" with the warning (not a plain pass).
 * - fit to publish (src/outputs/publishable.ts).
 */
export function asShown<R extends AllureResult>(r: R, checkOf: (id: string) => ShownCheck | undefined): R {
  const labels = r.labels ?? [];
  const check = checkOf(labels.find((l) => l.name === 'check')?.value ?? '');
  let out: R = { ...r, labels: lastSuiteLabels(labels) };
  if (check?.verdict === 'known-deviation') {
    const d = check.knownDeviation!;
    out = {
      ...out,
      status: 'skipped',
      statusDetails: { ...r.statusDetails, message: `Known deviation: ${d.reason}${d.link ? ` (${d.link})` : ''}\n\n${check.message ?? ''}` },
    };
  } else if (check?.verdict === 'warning') {
    out = {
      ...out,
      status: 'unknown',
      statusDetails: { ...r.statusDetails, message: `Warning: a ${check.level} requirement is not met (this does not fail the run)\n\n${check.message ?? ''}` },
    };
  }
  return publishableAllure(out);
}

/**
 * Told of each file once it is on disk whole and final (the HTML report's process reads it then, while the run goes
 * on): every attachment, and each result when the writer knows the run's verdicts (see PlainFileWriter.shownAs).
 */
type FileListener = (resultsDir: string, name: string) => void;
const fileListeners = new Set<FileListener>();
/** Listen for files written from now on; gives the function that stops listening. */
export function onFileWritten(fn: FileListener): () => void {
  fileListeners.add(fn);
  return () => fileListeners.delete(fn);
}

export class PlainFileWriter extends FileSystemWriter {
  private readonly dir: string;
  private made = false;
  /** The writes not finished yet; flush() waits for them. */
  private readonly pending = new Set<Promise<void>>();
  private failed: unknown;
  /** Files given so far (each temporary name is its own). */
  private written = 0;
  /**
   * Each check's verdict as the summary will give it, when known as its result is written: the result is then
   * written as the HTML report shows it (asShown), final, and listeners are told of it.
   */
  shownAs?: (checkId: string) => ShownCheck | undefined;

  constructor(resultsDir: string) {
    super({ resultsDir });
    this.dir = resultsDir;
  }

  private file(name: string): string {
    if (!this.made) mkdirSync(this.dir, { recursive: true });
    this.made = true;
    return path.join(this.dir, name);
  }

  /**
   * Each file is written in the background (libuv's thread pool), not on the main thread: that thread also serves the
   * embedded reference deployments, and creating some 2,000 files one after another there held their answers back
   * (open alone was 1.3 s of a zero-config run's 5.8 s on this project's CI machine, measured with --cpu-prof).
   */
  private put(name: string, write: (file: string) => Promise<void>, final = /-attachment\./.test(name)): void {
    // Written whole under a temporary name, then renamed: a reader (a partial report of an interrupted run) never
    // reads a file half written.
    const file = this.file(name);
    const temp = `${file}.${process.pid}.${++this.written}.tmp`;
    const p: Promise<void> = write(temp)
      .then(() => rename(temp, file))
      .then(() => {
        // A listener's failure is its own (the HTML report reads the directory at the end anyway), not this file's.
        if (final)
          for (const fn of fileListeners)
            try {
              fn(this.dir, name);
            } catch {
              // nothing
            }
      })
      .catch((e: unknown) => {
        this.failed ??= e;
      })
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Resolves when every file given so far is written; rejects with the first write that failed. */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
    if (this.failed !== undefined) throw this.failed instanceof Error ? this.failed : new Error(String(this.failed));
  }

  override writeAttachment(distFileName: string, content: Buffer): void {
    this.put(distFileName, (f) => writeFile(f, content));
  }
  override writeAttachmentFromPath(distFileName: string, from: string): void {
    this.put(distFileName, (f) => copyFile(from, f));
  }
  override writeCategoriesDefinitions(categories: Categories): void {
    this.put('categories.json', (f) => writeFile(f, JSON.stringify(categories)));
  }
  override writeGroup(result: Group): void {
    const text = JSON.stringify(publishableAllure(result));
    this.put(`${result.uuid}-container.json`, (f) => writeFile(f, text));
  }
  override writeResult(result: Written): void {
    // Without the run's verdicts, the statuses as they came (prepareResults shows them at the end).
    const text = JSON.stringify(asShown(result, this.shownAs ?? (() => undefined)));
    this.put(`${result.uuid}-result.json`, (f) => writeFile(f, text), !!this.shownAs);
  }
  override writeGlobals(distFileName: string, info: Globals): void {
    const text = JSON.stringify(info);
    this.put(distFileName, (f) => writeFile(f, text));
  }
}

/** allure-vitest's reporter, writing through PlainFileWriter. */
export class AllureResultsReporter extends AllureVitestReporter {
  private readonly writer: PlainFileWriter;

  constructor(resultsDir: string, shownAs?: PlainFileWriter['shownAs']) {
    super({ resultsDir, reportMatchers: false } satisfies AllureVitestReporterConfig);
    this.writer = new PlainFileWriter(resultsDir);
    this.writer.shownAs = shownAs;
  }

  override onInit(vitest: Vitest): void {
    super.onInit(vitest);
    const runtime = (this as unknown as { allureReporterRuntime?: { writer: unknown } }).allureReporterRuntime;
    if (!runtime) throw new Error('allure-vitest changed: its reporter has no runtime to write through');
    runtime.writer = this.writer;
  }

  /** Resolves when every result and attachment given so far is on disk (the report's outputs read them). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** The tasks whose results are written already (each check's, as it ended). */
  private readonly written = new Set<unknown>();

  /**
   * Each check's result and attachments are written as the check ends, not all at the run's end as allure-vitest
   * does (about 2,000 files: 0.45 s after the last check of a zero-config run, on the main thread, which waits on
   * the checks' worker meanwhile). A run that is interrupted has written every check that ended.
   */
  onTestCaseResult(tc: TestCase): void {
    const task = (tc as unknown as { task?: Parameters<AllureVitestReporter['handleTask']>[0] }).task;
    if (!task) return; // the task is vitest's internal object: without it, the run's end writes the result
    this.handleTask(task);
    this.written.add(task);
  }

  override handleTask(task: Parameters<AllureVitestReporter['handleTask']>[0]): void {
    if (!this.written.has(task)) super.handleTask(task);
  }
}
