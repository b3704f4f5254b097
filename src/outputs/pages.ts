/**
 * The pages of a report (html/index.html, the Allure report, and html/matrix.html, the clause matrix with each
 * requirement's facets), written alike by the conformance command and the shard merge from a summary and its
 * Allure results: one writer, so a merged report has every part a single run's has.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Summary } from '../verdicts.js';
import { generateHtml, reportPages } from './html.js';
import { matrixHtml } from './matrix.js';

export interface WrittenPages {
  /** The HTML report, when it was asked for and could be generated. */
  html?: string;
  /** Why the HTML report could not be generated. */
  htmlError?: string;
  matrix: string;
}

/** The report's title: it says when the embedded references, not a deployment of the reader's, were checked. */
export const reportTitle = (s: Summary) =>
  s.targets.embedded ? 'Service conformance — the embedded reference deployments (not yours)' : 'Service conformance';

export async function writePages(reportDir: string, summary: Summary, o: { html: boolean }): Promise<WrittenPages> {
  const htmlDir = path.join(reportDir, 'html');
  const written: Partial<WrittenPages> = {};
  if (o.html) {
    try {
      written.html = await generateHtml(path.join(reportDir, 'allure-results'), htmlDir, reportTitle(summary), summary);
    } catch (e) {
      written.htmlError = (e as Error).message;
    }
  }
  mkdirSync(htmlDir, { recursive: true });
  // The facets under their requirements (loaded here, at the end: they read the suites' helpers and the descriptions).
  const facets = [...(await (await import('../facets.js')).facetsByKey()).values()];
  const matrix = path.join(htmlDir, 'matrix.html');
  writeFileSync(matrix, matrixHtml(summary, reportPages(htmlDir), facets));
  return { ...written, matrix };
}
