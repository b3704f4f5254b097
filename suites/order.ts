/**
 * Each service's check modules (suites/<service>/), in the order suites/all.conformance.ts loads them, and how they
 * run: the one place that decides it. A new module goes in one of its service's three lists (`npm run shape` and
 * src/shape.test.ts find a module listed nowhere, a list naming a module that does not exist, and a module holding a
 * describe.sequential block that is listed as concurrent).
 *
 * With --concurrency above 1 every check of the `concurrent` modules may run at once (the HTTP client bounds the
 * requests in flight per origin). Each describe.sequential block of the `sequential` modules then runs one check at
 * a time, after the checks loaded before it have ended and before those loaded after it start: loading them after
 * the concurrent modules keeps every other check in one concurrent batch. The `last` modules hold the run-wide
 * checks, which read every exchange the run has recorded with their service: they come after all the others. At
 * --concurrency 1 everything runs one check after another, in this order.
 */
import type { Service } from '../src/spec.js';

export interface SuiteOrder {
  /** Modules whose checks do not depend on order: loaded first, every check free to run beside the others. */
  concurrent: string[];
  /** Modules with a describe.sequential block (order-dependent checks, or checks that need a quiet origin). */
  sequential: string[];
  /** Modules loaded after every other one: the run-wide checks, which read the whole run's traffic. */
  last: string[];
}

export const SUITE_ORDER: Record<Service, SuiteOrder> = {
  feed: {
    concurrent: [
      'conditional-requests.checks.ts',
      'dailies.checks.ts',
      'hot-topics.checks.ts',
      'items.checks.ts',
      'live.checks.ts',
      'methods-and-errors.checks.ts',
      'parameters.checks.ts',
      'places.checks.ts',
      'stories.checks.ts',
      'versioning.checks.ts',
    ],
    sequential: ['snapshot.checks.ts'],
    last: ['run-wide.checks.ts'],
  },
  gateway: {
    concurrent: [
      'error-bodies.checks.ts',
      'key-placement.checks.ts',
      'key-states.checks.ts',
      'models.checks.ts',
      'payloads.checks.ts',
      'requests.checks.ts',
      'responses.checks.ts',
      'streams.checks.ts',
    ],
    sequential: ['official-clients.checks.ts', 'rate-limits.checks.ts', 'realtime.checks.ts'],
    last: ['run-wide.checks.ts'],
  },
};

/** The modules of one service's suite (file names in suites/<service>/), in load order. */
export function suiteModules(service: Service): string[] {
  const o = SUITE_ORDER[service];
  return [...o.concurrent, ...o.sequential, ...o.last];
}
