/**
 * The pages of a report (html/index.html, the Allure report, and html/matrix.html, the clause matrix with each
 * requirement's facets): two entries of the outputs list (src/outputs/index.ts), written alike by the conformance
 * command, the shard merge and client conformance.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Facet } from '../spec.js';
import type { Summary } from '../verdicts.js';
import { generateHtml, reportPages } from './html.js';
import { matrixHtml } from './matrix.js';

/** The report's title: it says when the embedded references, not a deployment of the reader's, were checked. */
export const reportTitle = (s: Summary) =>
  s.targets.embedded ? 'Service conformance — the embedded reference deployments (not yours)' : 'Service conformance';

let facets: Promise<Facet[]> | undefined;
/**
 * The facets under their requirements, loaded once (they read the suites' helpers and the descriptions: 0.4 s),
 * when the first report is written: writeReport starts this while Allure writes the HTML report in its process.
 */
export function loadFacets(): Promise<Facet[]> {
  facets ??= import('../facets.js').then(async (f) => [...(await f.facetsByKey()).values()]);
  return facets;
}

/** html/index.html: the Allure report of the run's results with the verdict on its first screen. */
export function writeAllureHtml(reportDir: string, summary: Summary, title: string): Promise<string> {
  return generateHtml(path.join(reportDir, 'allure-results'), path.join(reportDir, 'html'), title, summary);
}

/** html/matrix.html: every requirement with its facets, each check linked to its page in the HTML report when there is one. */
export async function writeMatrix(reportDir: string, summary: Summary): Promise<string> {
  const htmlDir = path.join(reportDir, 'html');
  mkdirSync(htmlDir, { recursive: true });
  const matrix = path.join(htmlDir, 'matrix.html');
  writeFileSync(matrix, matrixHtml(summary, reportPages(htmlDir), await loadFacets()));
  return matrix;
}
