// `node allure-awesome.mjs ALLURE_PACKAGE_JSON RESULTS_DIR OUT_DIR NAME`: the Allure 3 "awesome" report as one
// self-contained file, written by Allure's own API (what `allure awesome --single-file` runs) in a process of its
// own. Not through Allure's command line: it loads every plugin Allure ships (classic, dashboard, jira, slack, …)
// before it parses its arguments, 0.8 s of a 2 s generation; this loads the report core and the awesome plugin
// only (0.3 s). Run by src/outputs/html.ts; the packages resolve from the allure package the suite depends on.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [allurePackage, resultsDir, output, name] = process.argv.slice(2);
const fromAllure = createRequire(allurePackage);
const load = (id) => import(pathToFileURL(fromAllure.resolve(id)).href);
const [{ AllureReport, readConfig }, { default: AwesomePlugin }] = await Promise.all([load('@allurereport/core'), load('@allurereport/plugin-awesome')]);

// The configuration `allure awesome` builds from its options (allure/dist/commands/awesome.js), read from the results'
// directory (no allurerc of the caller's working directory applies).
const config = await readConfig(resultsDir, undefined, { output, name });
const options = { singleFile: true, theme: 'light', reportLanguage: 'en', groupBy: ['parentSuite', 'suite', 'subSuite'] };
config.plugins = [{ id: 'awesome', enabled: true, options, plugin: new AwesomePlugin(options) }];
const report = new AllureReport(config);
await report.start();
await report.readDirectory(resultsDir);
await report.done();
