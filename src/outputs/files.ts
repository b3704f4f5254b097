/**
 * The machine-readable files of a run, written into the report directory: summary.json, junit.xml, ctrf.json.
 * Written from what was collected so far, so an interrupted run still leaves a (partial) summary.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Summary } from '../verdicts.js';
import { junitXml } from './junit.js';
import { ctrfReport } from './ctrf.js';

export function writeResults(reportDir: string, s: Summary): void {
  mkdirSync(reportDir, { recursive: true });
  writeFileSync(path.join(reportDir, 'summary.json'), `${JSON.stringify(s, null, 2)}\n`);
  writeFileSync(path.join(reportDir, 'junit.xml'), junitXml(s));
  writeFileSync(path.join(reportDir, 'ctrf.json'), `${JSON.stringify(ctrfReport(s), null, 2)}\n`);
}
