/**
 * The one test file of a conformance run. Each service's checks are a group of their own, loaded from the
 * `suites/<service>/*.test.ts` modules (order below). With --concurrency above 1 the two groups run side by side
 * (they are different origins), and within a group every check runs concurrently except those in
 * describe.sequential blocks: such a block runs one check at a time, after the checks loaded before it have ended
 * and before those loaded after it start (each service's run-wide checks, in z-run-wide.test.ts, come last). At
 * --concurrency 1 everything runs one check after another, in that order.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'vitest';
import { serviceGroup } from '../src/harness.js';
import { runContext } from '../src/context.js';
import { SERVICES } from '../src/spec.js';

const here = path.dirname(fileURLToPath(import.meta.url));

for (const service of SERVICES) {
  if (!runContext().services.includes(service)) continue;
  serviceGroup(service, async () => {
    // Path order, except that modules holding a describe.sequential block come after the others (their blocks split
    // the concurrent checks into a before and an after; this way every other check is in one concurrent batch), and
    // the run-wide checks (z-run-wide) come last of all.
    const holdsSequential = (m: string) => readFileSync(path.join(here, service, m), 'utf8').includes('describe.sequential(');
    const rank = (m: string) => (m.startsWith('z-') ? 2 : holdsSequential(m) ? 1 : 0);
    const modules = readdirSync(path.join(here, service))
      .filter((f) => f.endsWith('.test.ts'))
      .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    for (const m of modules) {
      try {
        await import(/* @vite-ignore */ pathToFileURL(path.join(here, service, m)).href);
      } catch (e) {
        // A module that cannot be loaded is a harness error of its own; the other modules still run.
        const error = e as Error;
        test(`suites/${service}/${m} could not be loaded`, () => {
          throw new Error(`suites/${service}/${m} could not be loaded: ${error.message}`);
        });
      }
    }
  });
}
