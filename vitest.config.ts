import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The self-test takes far longer than any other file: it starts first, and the other files run beside it. */
class SelfTestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => (/selftest\.test\.ts$/.test(f.moduleId) ? 0 : 1);
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: SelfTestFirst },
    projects: [
      {
        // The conformance suites: run only through `npm run conformance`, which sets the target. One worker, one
        // test file (suites/all.conformance.ts) that loads every suite module: one HTTP client counts every request
        // of the run. With --concurrency above 1 the command runs the checks concurrently (sequence.concurrent, a
        // root-level setting it passes itself); order-dependent checks are in describe.sequential blocks, and each
        // service's modules load in the order suites/order.ts declares (concurrent, sequential, last).
        test: {
          name: 'conformance',
          // One test file loads every suite module (suites/<service>/*.test.ts), each service as a group of its own.
          include: ['suites/all.conformance.ts'],
          setupFiles: ['allure-vitest/setup'],
          isolate: false,
          fileParallelism: false,
          maxWorkers: 1,
          // A worker thread, not a process: about 0.3 CPU-s less per run than 'forks' when one process runs the command
          // again and again, as the self-test's workers do (11 feed runs: 23.4 and 25.2 CPU-s against 26.9 and 29.6);
          // a single run of the command measured the same either way on Node 20, 22 and 24.
          pool: 'threads',
          // vitest's fsModuleCache (the transformed suite modules kept on disk between runs) is set by the command,
          // only where it can write it: see moduleCache() in src/cli.ts.
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
          // One scratch directory for the run's report directories and files, removed at its end (fixtures/scratch.ts).
          globalSetup: ['fixtures/test-scratch.ts'],
          // The self-test runs the conformance command in three worker processes of its own (fixtures/cli-pool.ts);
          // the other files, most of them waiting on child processes and timers, run beside it in two more workers.
          maxConcurrency: 2,
          maxWorkers: 3,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
