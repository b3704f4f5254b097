// `node allure-awesome.mjs ALLURE_PACKAGE_JSON [RESULTS_DIR OUT_DIR NAME]`: the Allure 3 "awesome" report as one
// self-contained file, written by Allure's own API (what `allure awesome --single-file` runs) in a process of its
// own. Not through Allure's command line: it loads every plugin Allure ships (classic, dashboard, jira, slack, …)
// before it parses its arguments, 0.8 s of a 2 s generation; this loads the report core and the awesome plugin
// only (0.3 s). Without the three paths it loads them and waits for them as a message (src/outputs/html.ts starts
// it so while the checks run, and sends the paths once the results are complete); it ends when its parent does.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [allurePackage, ...paths] = process.argv.slice(2);
const fromAllure = createRequire(allurePackage);
const load = (id) => import(pathToFileURL(fromAllure.resolve(id)).href);
const modules = Promise.all([load('@allurereport/core'), load('@allurereport/plugin-awesome')]);

async function generate(resultsDir, output, name) {
  const [{ AllureReport, readConfig }, { default: AwesomePlugin }] = await modules;
  // The configuration `allure awesome` builds from its options (allure/dist/commands/awesome.js), read from the
  // results' directory (no allurerc of the caller's working directory applies).
  const config = await readConfig(resultsDir, undefined, { output, name });
  const options = { singleFile: true, theme: 'light', reportLanguage: 'en', groupBy: ['parentSuite', 'suite', 'subSuite'] };
  config.plugins = [{ id: 'awesome', enabled: true, options, plugin: new AwesomePlugin(options) }];
  const report = new AllureReport(config);
  await report.start();
  await report.readDirectory(resultsDir);
  await report.done();
}

const fail = (e) => {
  console.error(e?.stack ?? String(e));
  process.exit(1);
};
if (paths.length === 3) await generate(...paths).catch(fail);
else {
  process.once('message', (m) => generate(m.resultsDir, m.output, m.name).then(() => process.exit(0), fail));
  process.once('disconnect', () => process.exit(0));
  await modules.catch(fail);
  process.send?.('ready');
}
