/**
 * The one test file of a conformance run. Each service's checks are a group of their own, loaded from the
 * `suites/<service>/` modules in the order suites/order.ts declares (concurrent, sequential, last). With
 * --concurrency above 1 the two groups run side by side (they are different origins), and within a group every
 * check runs concurrently except those in describe.sequential blocks (see suites/order.ts). At --concurrency 1
 * everything runs one check after another, in that order.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'vitest';
import { serviceGroup } from '../src/harness.js';
import { runContext } from '../src/context.js';
import { SERVICES } from '../src/spec.js';
import { suiteModules } from './order.js';

const here = path.dirname(fileURLToPath(import.meta.url));

for (const service of SERVICES) {
  if (!runContext().services.includes(service)) continue;
  serviceGroup(service, async () => {
    const modules = suiteModules(service);
    // A module the order does not list would never run: a harness error of its own, so it cannot go unnoticed.
    for (const m of readdirSync(path.join(here, service)).filter((f) => f.endsWith('.checks.ts') && !modules.includes(f))) {
      test(`suites/${service}/${m} is not listed in suites/order.ts`, () => {
        throw new Error(`suites/${service}/${m} is not listed in suites/order.ts: add it to one of ${service}'s lists (concurrent, sequential, last)`);
      });
    }
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
