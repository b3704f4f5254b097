/**
 * `npm run coverage [-- --json]`: every requirement of both catalogues with the checks that verify it.
 * Server requirements are covered by conformance checks (collected from the suites, not run); client rules by
 * project tests whose declared name (describe and title, collected by vitest) says "client rule <id>"; a requirement marked `unverifiable` or `notApplicable` is listed with
 * its reason. Anything else is pending.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVitest } from 'vitest/node';
import { loadCatalogue, loadProfile, type CatalogueEntry } from './spec.js';
import { CONTEXT_VAR, type RunContext } from './context.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface CoverageRow {
  id: string;
  service: string;
  level: string;
  subject: string;
  section: string;
  summary: string;
  status: 'covered' | 'unverifiable' | 'not applicable' | 'pending';
  checks: string[];
  reason?: string;
}

/** Check ids by requirement id, from the conformance suites' metadata (collected, not run). */
export async function collectChecks(): Promise<Map<string, string[]>> {
  const ctx: RunContext = {
    services: ['feed', 'gateway'],
    feedUrl: 'http://collect.invalid',
    gatewayUrl: 'http://collect.invalid',
    embedded: false,
    reportDir: path.join(ROOT, 'reports'),
    runs: 1,
    timeoutMs: 1000,
    budget: 0,
    maxRetries: 0,
    maxRetryWaitMs: 0,
    concurrency: 1,
    maxBodyBytes: 0,
    profile: loadProfile(),
    realtimePath: '/v1/realtime',
    probeRateLimit: false,
  };
  process.env[CONTEXT_VAR] = JSON.stringify(ctx);
  const vitest = await createVitest('test', { root: ROOT, config: path.join(ROOT, 'vitest.config.ts'), project: ['conformance'], watch: false, reporters: [] });
  try {
    const result = await vitest.collect();
    const errors = [...result.unhandledErrors, ...result.testModules.flatMap((m) => m.errors())];
    if (errors.length) throw new Error(`collecting the suites failed: ${errors.map((e) => (e as Error).message).join('; ')}`);
    const by = new Map<string, string[]>();
    for (const mod of result.testModules) {
      for (const tc of mod.children.allTests()) {
        const meta = tc.meta();
        for (const r of meta.requirements ?? []) by.set(r, [...(by.get(r) ?? []), meta.check ?? tc.name]);
      }
    }
    return by;
  } finally {
    await vitest.close();
  }
}

/**
 * Client rules verified by project tests: a test whose full name (its describe blocks and title, as declared in
 * code) says "client rule <id>". Collected by vitest, so a comment or a string elsewhere in a file covers nothing.
 */
export async function clientRuleTests(): Promise<Map<string, string[]>> {
  const vitest = await createVitest('test', { root: ROOT, config: path.join(ROOT, 'vitest.config.ts'), project: ['project'], watch: false, reporters: [] });
  try {
    // Only the test files whose text says "client rule" can declare such a name: the others are not collected
    // (collecting all of them loads every test file's modules, about 8 CPU-s).
    const files = (await vitest.globTestSpecifications()).map((s) => s.moduleId).filter((f) => readFileSync(f, 'utf8').includes('client rule'));
    if (files.length === 0) return new Map();
    const result = await vitest.collect(files);
    const by = new Map<string, string[]>();
    for (const mod of result.testModules) {
      for (const tc of mod.children.allTests()) {
        for (const m of tc.fullName.matchAll(/client rule ([a-z0-9-]+)/g)) by.set(m[1]!, [...(by.get(m[1]!) ?? []), `${mod.relativeModuleId} › ${tc.name}`]);
      }
    }
    return by;
  } finally {
    await vitest.close();
  }
}

export async function coverage(): Promise<CoverageRow[]> {
  const checks = await collectChecks();
  const clientTests = await clientRuleTests();
  const catalogue = loadCatalogue();
  for (const id of [...checks.keys(), ...clientTests.keys()]) if (!catalogue.has(id)) throw new Error(`a check cites unknown requirement ${id}`);
  return [...catalogue.values()].map((r: CatalogueEntry) => {
    const found = r.subject === 'client' ? [...new Set(clientTests.get(r.id) ?? [])] : (checks.get(r.id) ?? []);
    const status = found.length > 0 ? 'covered' : r.unverifiable ? 'unverifiable' : r.notApplicable ? 'not applicable' : 'pending';
    return {
      id: r.id,
      service: r.service,
      level: r.level,
      subject: r.subject,
      section: r.section,
      summary: r.summary,
      status,
      checks: found,
      reason: status === 'unverifiable' ? r.unverifiable : status === 'not applicable' ? r.notApplicable : undefined,
    };
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const rows = await coverage();
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  } else {
    for (const service of ['feed', 'gateway']) {
      const mine = rows.filter((r) => r.service === service);
      process.stdout.write(`\n${service}: ${mine.length} requirements\n`);
      for (const r of mine) {
        const what =
          r.status === 'covered'
            ? `${r.checks.length} check(s): ${r.checks.slice(0, 3).join(', ')}${r.checks.length > 3 ? ', …' : ''}`
            : r.status === 'pending'
              ? 'PENDING — no check yet'
              : `${r.status}: ${r.reason}`;
        process.stdout.write(`  ${r.status.padEnd(14)} ${r.level.padEnd(6)} ${r.id.padEnd(38)} ${what}\n`);
      }
    }
    const count = (s: CoverageRow['status']) => rows.filter((r) => r.status === s).length;
    process.stdout.write(
      `\n${rows.length} requirements: ${count('covered')} covered, ${count('unverifiable')} unverifiable from outside and ${count('not applicable')} not applicable to the suite (each with its reason), ${count('pending')} pending\n`,
    );
  }
}
