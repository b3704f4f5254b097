import { defineConfig } from 'vitest/config';
import { PathOrderSequencer } from './src/sequencer.js';

export default defineConfig({
  test: {
    // Files in path order: each service's run-wide checks (z-run-wide.test.ts) come after its other checks.
    sequence: { shuffle: false, sequencer: PathOrderSequencer },
    projects: [
      {
        // The conformance suites: run only through `npm run conformance`, which sets the target.
        // One worker, files in sequence, shared modules: one HTTP client counts every request of the run. With
        // --concurrency above 1 the command runs the checks within a file concurrently (sequence.concurrent, a
        // root-level setting it passes itself); a file's order-dependent checks are in describe.sequential blocks.
        test: {
          name: 'conformance',
          include: ['suites/**/*.test.ts'],
          setupFiles: ['allure-vitest/setup'],
          isolate: false,
          fileParallelism: false,
          maxWorkers: 1,
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 120_000,
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
