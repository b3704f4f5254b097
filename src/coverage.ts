/**
 * `npm run coverage [-- --json]`: every sentence of both documents (specs/<service>/ledger.json, src/ledger.ts) with the
 * requirements it yields, and every requirement of both catalogues with the checks that verify it.
 * Server requirements are covered by conformance checks (collected from the suites, not run); client rules by
 * project tests whose declared name (describe and title, collected by vitest) says "client rule <id>"; a requirement marked `unverifiable` or `notApplicable` is listed with
 * its reason. Anything else is pending.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVitest } from 'vitest/node';
import { loadCatalogue, type CatalogueEntry } from './spec.js';
import { setCollectContext } from './context.js';
import { facets as allFacets, type Facet } from './facets.js';
import { entryStatus, loadLedgers, type LedgerEntry } from './ledger.js';

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
  /** The facts the requirement states (src/facets.ts), each with its checks or the reason none decides it. */
  facets: FacetRow[];
  /** Faulty variants that break the requirement (when the caller gave the variants). */
  variants: string[];
}

export interface FacetRow extends Pick<Facet, 'key' | 'kind' | 'text' | 'reason' | 'source'> {
  checks: string[];
  /** Faulty variants declared to break this facet (the self-test shows one of its checks failing on each). */
  variants: string[];
  /** What is wrong with the facet: a check it names that does not exist or does not cite the requirement. */
  problems: string[];
}

/** A faulty variant as coverage sees it: its name, what it breaks, and the facets it breaks (if declared). */
export interface VariantRef {
  name: string;
  breaks: string[];
  facets?: string[];
}

/** Check ids by requirement id, from the conformance suites' metadata (collected, not run). */
export async function collectChecks(): Promise<Map<string, string[]>> {
  setCollectContext();
  return collectWith(
    await createVitest('test', { root: ROOT, config: path.join(ROOT, 'vitest.config.ts'), project: ['conformance'], watch: false, reporters: [] }),
  );
}

async function collectWith(vitest: Awaited<ReturnType<typeof createVitest>>): Promise<Map<string, string[]>> {
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

export async function coverage(variants: VariantRef[] = []): Promise<CoverageRow[]> {
  const checks = await collectChecks();
  const clientTests = await clientRuleTests();
  const catalogue = loadCatalogue();
  for (const id of [...checks.keys(), ...clientTests.keys()]) if (!catalogue.has(id)) throw new Error(`a check cites unknown requirement ${id}`);
  const facetList = await allFacets(catalogue);
  const keys = new Set(facetList.map((f) => f.key));
  for (const v of variants) for (const k of v.facets ?? []) if (!keys.has(k)) throw new Error(`variant ${v.name} declares unknown facet ${k}`);
  const facetRow = (f: Facet): FacetRow => {
    const citing = new Set(checks.get(f.requirement) ?? []);
    const problems = (f.checks ?? []).filter((c) => !citing.has(c)).map((c) => `check ${c} does not exist or does not cite ${f.requirement}`);
    if (!f.checks?.length && !f.reason) problems.push('neither a check nor a reason');
    const { key, kind, text, reason, source } = f;
    return {
      key,
      kind,
      text,
      checks: f.checks ?? [],
      reason,
      source,
      variants: variants.filter((v) => v.facets?.includes(f.key)).map((v) => v.name),
      problems,
    };
  };
  return [...catalogue.values()].map((r: CatalogueEntry) => {
    const found = r.subject === 'client' ? [...new Set(clientTests.get(r.id) ?? [])] : (checks.get(r.id) ?? []);
    const status = found.length > 0 ? 'covered' : r.unverifiable ? 'unverifiable' : r.notApplicable ? 'not applicable' : 'pending';
    return {
      facets: facetList.filter((f) => f.requirement === r.id).map(facetRow),
      variants: variants.filter((v) => v.breaks.includes(r.id)).map((v) => v.name),
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

/** The facets that fail the gate: neither a check nor a reason, or a check that does not exist or cite the requirement. */
export function facetProblems(rows: CoverageRow[]): string[] {
  return rows.flatMap((r) => r.facets.flatMap((f) => f.problems.map((p) => `${f.key}: ${p}`)));
}

/** The listing of `npm run coverage`: requirement → facets → checks → faulty variants. */
export function coverageText(rows: CoverageRow[]): string {
  const out: string[] = [];
  for (const service of ['feed', 'gateway']) {
    const mine = rows.filter((r) => r.service === service);
    out.push(`\n${service}: ${mine.length} requirements, ${mine.reduce((n, r) => n + r.facets.length, 0)} facets`);
    for (const r of mine) {
      const what =
        r.status === 'covered'
          ? `${r.checks.length} check(s): ${r.checks.slice(0, 3).join(', ')}${r.checks.length > 3 ? ', …' : ''}`
          : r.status === 'pending'
            ? 'PENDING — no check yet'
            : `${r.status}: ${r.reason}`;
      out.push(`  ${r.status.padEnd(14)} ${r.level.padEnd(6)} ${r.id.padEnd(38)} ${what}`);
      if (r.variants.length) out.push(`${' '.repeat(24)}variants: ${r.variants.join(', ')}`);
      for (const f of r.facets) {
        const by = f.checks.length ? f.checks.join(', ') : `no check: ${f.reason}`;
        const proof = f.variants.length ? ` · shown failing on ${f.variants.join(', ')}` : '';
        out.push(
          `${' '.repeat(24)}${f.problems.length ? '✗' : '·'} [${f.kind}] ${f.text} → ${by}${proof}${f.problems.length ? ` — ${f.problems.join('; ')}` : ''}`,
        );
      }
    }
  }
  const count = (s: CoverageRow['status']) => rows.filter((r) => r.status === s).length;
  const facets = rows.flatMap((r) => r.facets);
  out.push(
    `\n${rows.length} requirements: ${count('covered')} covered, ${count('unverifiable')} unverifiable from outside and ${count('not applicable')} not applicable to the suite (each with its reason), ${count('pending')} pending`,
    `${facets.length} facets: ${facets.filter((f) => f.checks.length).length} decided by checks, ${facets.filter((f) => !f.checks.length && f.reason).length} with a stated reason, ${facets.filter((f) => f.variants.length).length} shown failing on a named faulty variant, ${facetProblems(rows).length} without a check or a reason (the gate)`,
  );
  return `${out.join('\n')}\n`;
}

/** One sentence, list item or table row of a document (specs/<service>/ledger.json) with what it yields. */
export interface LedgerRow extends LedgerEntry {
  service: string;
  status: ReturnType<typeof entryStatus>;
  /** Each requirement the entry yields: its status, checks, facets and the faulty variants that break it. */
  yields: Pick<CoverageRow, 'id' | 'level' | 'status' | 'checks' | 'variants' | 'facets'>[];
}

/** The ledgers of both documents joined to the coverage rows: sentence → requirement → facet → check(s) → variant(s). */
export function ledgerRows(rows: CoverageRow[]): LedgerRow[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return loadLedgers().flatMap((l) =>
    l.entries.map((e) => ({
      ...e,
      service: rows.find((r) => r.id.startsWith(`${l.prefix}-`))?.service ?? l.prefix,
      status: entryStatus(e),
      yields: (e.requirements ?? []).flatMap((id) => {
        const r = byId.get(id);
        return r ? [{ id, level: r.level, status: r.status, checks: r.checks, variants: r.variants, facets: r.facets }] : [];
      }),
    })),
  );
}

const quote = (words: string, n = 110) => `"${words.length > n ? `${words.slice(0, n - 1)}…` : words}"`;
const first = (xs: string[], n: number) => `${xs.slice(0, n).join(', ')}${xs.length > n ? `, … (${xs.length})` : ''}`;

/** The listing of the ledgers: each entry with what it yields down to checks and variants, then every gap in full. */
export function ledgerText(entries: LedgerRow[]): string {
  const out: string[] = [];
  for (const service of [...new Set(entries.map((e) => e.service))]) {
    const mine = entries.filter((e) => e.service === service);
    const kinds = new Map<string, number>();
    for (const e of mine) if (e.status === 'no obligation') kinds.set(e.kind!, (kinds.get(e.kind!) ?? 0) + 1);
    const n = (s: LedgerRow['status']) => mine.filter((e) => e.status === s).length;
    out.push(
      `\n${service} document, sentence by sentence: ${mine.length} entries: ${n('mapped')} mapped to requirements, ${n('gap')} gaps, ${n('no obligation')} with no obligation (${[...kinds].map(([k, c]) => `${c} ${k}`).join(', ')})`,
    );
    let section = '';
    for (const e of mine) {
      if (e.section !== section) out.push(`  § ${(section = e.section)}`);
      const mark = e.status === 'gap' ? '✗' : e.status === 'mapped' ? '→' : '·';
      out.push(`    ${mark} ${e.id.padEnd(44)} ${quote(e.words)}`);
      for (const y of e.yields) {
        const proven = y.facets.filter((f) => f.variants.length).length;
        const facets = y.facets.length ? `, ${y.facets.length} facet(s), ${proven} shown failing` : '';
        const checks = y.status === 'covered' ? `${y.checks.length} check(s): ${first(y.checks, 2)}` : y.status;
        out.push(`        ${y.id} [${y.level}] ${checks}${facets}${y.variants.length ? `; variants: ${first(y.variants, 3)}` : ''}`);
      }
      if (e.status === 'no obligation') out.push(`        ${e.kind}: ${e.reason}`);
      else if (e.reason) out.push(`        note: ${e.reason}`);
      if (e.gap) out.push(`        GAP: ${e.gap}`);
    }
  }
  const gaps = entries.filter((e) => e.gap);
  out.push(`\n${gaps.length} gap(s): sentences whose obligation no requirement covers, or covers only in part (the work list)`);
  for (const g of gaps) out.push(`  ${g.id}: ${quote(g.words, 400)}\n    uncovered: ${g.gap}`);
  return `${out.join('\n')}\n`;
}
