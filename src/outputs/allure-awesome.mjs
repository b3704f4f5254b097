// `node allure-awesome.mjs ALLURE_PACKAGE_JSON [RESULTS_DIR OUT_DIR NAME]`: the Allure 3 "awesome" report as one
// self-contained file, written by Allure's own API (what `allure awesome --single-file` runs) in a process of its
// own. Not through Allure's command line: it loads every plugin Allure ships (classic, dashboard, jira, slack, …)
// before it parses its arguments, 0.8 s of a 2 s generation; this loads the report core and the awesome plugin
// only (0.3 s).
//
// Without the three paths it loads them and waits for messages (src/outputs/html.ts starts it so while the checks
// run): `open` (the results and output directories) starts the report; each `file` after it (an attachment, final
// once written) and each final result is read into the report then, while the checks go on; `generate` (the
// report's name, and the files rewritten since they were sent) reads what is left in the directory, or all of it
// again when a file it read was rewritten, and writes the report. A `generate`
// with all three paths and no `open` before it reads the whole directory then. It ends when its parent does.
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [allurePackage, ...paths] = process.argv.slice(2);
const fromAllure = createRequire(allurePackage);
const load = (id) => import(pathToFileURL(fromAllure.resolve(id)).href);
const modules = Promise.all([load('@allurereport/core'), load('@allurereport/plugin-awesome'), load('@allurereport/reader-api')]);
/**
 * The Markdown renderer the awesome plugin renders each result's description with at the end (`new MarkdownIt()`,
 * its converters.js): a result read while the run goes on is rendered then, the same way, and carries it as its
 * descriptionHtml, which the plugin uses as it is. Without it (Allure's layout changed), the plugin renders as before.
 */
const markdown = (async () => {
  const plugin = createRequire(fromAllure.resolve('@allurereport/plugin-awesome'));
  const { default: MarkdownIt } = await import(pathToFileURL(plugin.resolve('markdown-it')).href);
  return new MarkdownIt();
})().catch(() => undefined);

/** The report's name until `generate` gives it (Allure adds a CI job's name to what it is given: that part is kept). */
const PLACEHOLDER = 'conformance-report-name-placeholder';

/**
 * Allure's descriptor of a run outside a known CI service reads the repository's name, branch and remote from git each
 * time the report asks (five git processes as the page is written, 0.1 s at the run's end): each is read once, here,
 * while the checks run. What the report shows is the same. If Allure's layout changes, the report is written as before.
 */
async function settleLocalCi() {
  try {
    const ci = createRequire(fromAllure.resolve('@allurereport/core')).resolve('@allurereport/ci');
    const { local } = await import(pathToFileURL(path.join(path.dirname(ci), 'detectors', 'local.js')).href);
    for (const key of ['repoName', 'jobRunBranch', 'provider', 'repository', 'sourceBranch'])
      Object.defineProperty(local, key, { value: local[key], configurable: true, enumerable: true });
  } catch {
    // left as Allure has it
  }
}

async function openReport(resultsDir, output) {
  const [{ AllureReport, readConfig }, { default: AwesomePlugin }] = await modules;
  await settleLocalCi();
  // The configuration `allure awesome` builds from its options (allure/dist/commands/awesome.js), read from the
  // results' directory (no allurerc of the caller's working directory applies).
  const config = await readConfig(resultsDir, undefined, { output, name: PLACEHOLDER });
  const options = { singleFile: true, theme: 'light', reportLanguage: 'en', groupBy: ['parentSuite', 'suite', 'subSuite'] };
  config.plugins = [{ id: 'awesome', enabled: true, options, plugin: new AwesomePlugin(options) }];
  const report = new AllureReport(config);
  await report.start();
  return report;
}

async function withDescriptionHtml(content) {
  const md = await markdown;
  if (!md) return content;
  try {
    const r = JSON.parse(content.toString('utf8'));
    if (typeof r.description !== 'string' || !r.description || r.descriptionHtml) return content;
    return Buffer.from(JSON.stringify({ ...r, descriptionHtml: md.render(r.description) }));
  } catch {
    return content; // not JSON: Allure's reader says so
  }
}

/** One report being written: the files read into it so far, one after another. */
class Streamed {
  constructor(resultsDir, output) {
    this.resultsDir = resultsDir;
    this.output = output;
    this.read = new Set();
    this.report = openReport(resultsDir, output);
    this.queue = this.report.then(() => undefined);
  }

  /** Read one file into the report, after those before it (held in memory: the report's end reads no file again). */
  add(name) {
    if (this.read.has(name)) return this.queue;
    this.read.add(name);
    this.queue = this.queue.then(async () => {
      const [, , { BufferResultFile }] = await modules;
      const report = await this.report;
      let content;
      try {
        content = await readFile(path.join(this.resultsDir, name));
      } catch {
        this.read.delete(name); // gone or not readable now: the directory's read at the end tries it again
        return;
      }
      if (name.endsWith('-result.json')) content = await withDescriptionHtml(content);
      await report.readResult(new BufferResultFile(content, name));
    });
    return this.queue;
  }

  async generate(name) {
    const entries = await readdir(this.resultsDir, { withFileTypes: true });
    for (const e of entries.filter((d) => d.isFile() && !d.name.endsWith('.tmp')).sort((a, b) => a.name.localeCompare(b.name))) this.add(e.name);
    await this.queue;
    const report = await this.report;
    report.reportName = report.reportName.replace(PLACEHOLDER, () => name);
    await report.done();
  }
}

const fail = (e) => {
  console.error(e?.stack ?? String(e));
  process.exit(1);
};

if (paths.length === 3) {
  const [resultsDir, output, name] = paths;
  await new Streamed(resultsDir, output).generate(name).catch(fail);
} else {
  let streamed;
  process.on('message', (m) => {
    if (m.type === 'open') {
      streamed = new Streamed(m.resultsDir, m.output);
      streamed.report.catch(fail);
    } else if (m.type === 'file') streamed?.add(m.name).catch(fail);
    else if (m.type === 'generate') {
      // A file it read and that was rewritten since (a result whose verdict the end of the run changed): read anew.
      const same = streamed?.resultsDir === m.resultsDir && streamed.output === m.output;
      const stale = same && (m.rewritten ?? []).some((n) => streamed.read.has(n));
      const s = same && !stale ? streamed : new Streamed(m.resultsDir, m.output);
      s.generate(m.name).then(() => process.exit(0), fail);
    }
  });
  process.once('disconnect', () => process.exit(0));
  await modules.catch(fail);
  process.send?.('ready');
}
