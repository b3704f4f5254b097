/** Runs suite files in path order, so each service's run-wide checks (z-run-wide.test.ts) come after its other checks. */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export class PathOrderSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId));
  }
}
