import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        // The conformance suites: run only through `npm run conformance`, which sets the target. One worker, one
        // test file (suites/all.conformance.ts) that loads every suite module: one HTTP client counts every request
        // of the run. With --concurrency above 1 the command runs the checks concurrently (sequence.concurrent, a
        // root-level setting it passes itself); order-dependent checks are in describe.sequential blocks.
        test: {
          name: 'conformance',
          // One test file loads every suite module (suites/<service>/*.test.ts), each service as a group of its own.
          include: ['suites/all.conformance.ts'],
          setupFiles: ['allure-vitest/setup'],
          isolate: false,
          fileParallelism: false,
          maxWorkers: 1,
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Every check may start at once when checks run concurrently: the HTTP client, not vitest, bounds the
          // requests in flight per origin (--concurrency), so a check waiting for a shared probe, a Retry-After or
          // an official client's module never holds back a check that could send now.
          maxConcurrency: 1000,
        },
      },
      {
        // The project's own tests: engine units, reference deployments, the self-test.
        test: {
          name: 'project',
          include: ['src/**/*.test.ts', 'fixtures/**/*.test.ts', 'test/**/*.test.ts'],
          // The self-test runs the conformance command in child processes: two at a time on two cores.
          maxConcurrency: 2,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
