/**
 * File order and sharding for the conformance suites.
 * - Files run in path order, so each service's run-wide checks (z-run-wide.test.ts) come after its other checks.
 * - With --shard i/n, whole service folders go to shards (feed to one, gateway to another): run-wide checks stay
 *   with the traffic they inspect. More shards than services leave the extra shards empty.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const serviceOf = (moduleId: string) => /suites[/\\]([^/\\]+)[/\\]/.exec(moduleId)?.[1] ?? moduleId;

export class PathOrderSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId));
  }

  override async shard(files: TestSpecification[]): Promise<TestSpecification[]> {
    const shard = this.ctx.config.shard;
    if (!shard) return files;
    const services = [...new Set(files.map((f) => serviceOf(f.moduleId)))].sort();
    return files.filter((f) => services.indexOf(serviceOf(f.moduleId)) % shard.count === shard.index - 1);
  }
}
