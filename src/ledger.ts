/**
 * The documents as a ledger (specs/<service>/ledger.json): each document split into its sentences, list items and
 * table rows, in document order, each with a stable id, its heading path and its exact words, and each mapped to the
 * requirement ids it yields, or marked with the kind of sentence it is and why it yields no obligation a deployment
 * can break from outside, or recorded as a gap: an obligation no requirement (or only part of one) covers yet.
 * `splitDocument` is the one splitter the gate (src/ledger.test.ts) compares a ledger with its document by.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICES, SPECS_DIR, formatAjvErrors, readJson, schemaFileValidator, type Service } from './spec.js';

/** Where the two documents sit beside a clone (CI keeps a copy of shared/ next to it). */
export const DOCUMENTS_DIR = fileURLToPath(new URL('../../shared/specs/', import.meta.url));

export type UnitForm = 'sentence' | 'list-item' | 'table-row' | 'table-header';

/** One unit of a document: a sentence of a paragraph or list item, or a whole table row. */
export interface DocumentUnit {
  /** Heading path, `>`-joined, without the document's title (the title itself where no heading is above). */
  section: string;
  form: UnitForm;
  /** The unit's exact words, Markdown included; a list item's marker and indentation are not part of them. */
  words: string;
  /** 1-based line of the document. */
  line: number;
}

export interface LedgerEntry {
  id: string;
  section: string;
  form: UnitForm;
  words: string;
  /** Requirement ids the sentence yields. */
  requirements?: string[];
  /** What kind of sentence it is when it yields no obligation (or a note beside its requirements). */
  kind?: string;
  /** Why it yields no obligation a deployment can break from outside, or how it relates to its requirements. */
  reason?: string;
  /** An obligation a deployment can break from outside that no requirement covers, or covers only in part: the uncovered facts. */
  gap?: string;
}

export interface Ledger {
  document: string;
  title: string;
  prefix: string;
  entries: LedgerEntry[];
}

/** Sentence ends: `.`, `?` or `!` followed by white space and a capital, a backtick or an opening brace. */
const SENTENCE_END = /(?<=[.?!])\s+(?=[A-Z`{(])/;
const LIST_ITEM = /^\s*(?:-|\d+\.)\s+/;

export function splitSentences(text: string): string[] {
  return text
    .split(SENTENCE_END)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A document's units in document order (headings build the section path; table separator rows carry no words). */
export function splitDocument(markdown: string): DocumentUnit[] {
  const units: DocumentUnit[] = [];
  const heads: string[] = [];
  let title = '';
  let tableRow = 0;
  markdown.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\s+$/, '');
    const h = /^(#+)\s+(.*)$/.exec(line);
    if (h) {
      const depth = h[1]!.length;
      if (depth === 1) title = h[2]!;
      else heads.splice(depth - 2, heads.length, h[2]!);
      return;
    }
    const section = heads.length ? heads.join(' > ') : title;
    if (!line.trim()) {
      tableRow = 0;
      return;
    }
    if (line.startsWith('|')) {
      if (/^\|[-:| ]+\|$/.test(line)) return;
      units.push({ section, form: tableRow++ === 0 ? 'table-header' : 'table-row', words: line, line: i + 1 });
      return;
    }
    tableRow = 0;
    const item = LIST_ITEM.exec(line);
    const text = item ? line.slice(item[0].length) : line;
    for (const words of splitSentences(text)) units.push({ section, form: item ? 'list-item' : 'sentence', words, line: i + 1 });
  });
  return units;
}

/** The ledger of one service, validated against specs/ledger.schema.json. */
export function loadLedger(service: Service): Ledger {
  const file = path.join(SPECS_DIR, service, 'ledger.json');
  const ledger = readJson<Ledger>(file);
  const validate = schemaFileValidator('ledger.schema.json');
  if (!validate(ledger)) throw new Error(`${file}: ${formatAjvErrors(validate.errors)}`);
  return ledger;
}

export function loadLedgers(): Ledger[] {
  return SERVICES.map(loadLedger);
}

/** The document a ledger describes, read from beside the clone; undefined where it is not there. */
export function readDocument(ledger: Pick<Ledger, 'document'>, dir = DOCUMENTS_DIR): string | undefined {
  const file = path.join(dir, ledger.document);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** How an entry accounts for itself: mapped to requirements, a gap, or a stated kind and reason. */
export function entryStatus(e: LedgerEntry): 'gap' | 'mapped' | 'no obligation' | 'unaccounted' {
  if (e.gap) return 'gap';
  if (e.requirements?.length) return 'mapped';
  if (e.kind && e.reason) return 'no obligation';
  return 'unaccounted';
}

/**
 * What is wrong with the ledgers against the catalogue, the documents aside: unknown or uncited requirements,
 * entries that account for nothing, duplicate or unprefixed ids.
 */
export function ledgerProblems(ledgers: Ledger[], catalogue: Map<string, { service: Service }>): string[] {
  const problems: string[] = [];
  const cited = new Set<string>();
  const ids = new Set<string>();
  for (const l of ledgers) {
    for (const e of l.entries) {
      if (ids.has(e.id)) problems.push(`${e.id}: duplicate entry id`);
      ids.add(e.id);
      if (!e.id.startsWith(`${l.prefix}-`)) problems.push(`${e.id}: lacks the prefix ${l.prefix}-`);
      for (const r of e.requirements ?? []) {
        if (!catalogue.has(r)) problems.push(`${e.id}: unknown requirement ${r}`);
        cited.add(r);
      }
      if (entryStatus(e) === 'unaccounted') problems.push(`${e.id}: neither requirements, a gap nor a kind with its reason`);
      if (e.kind && !e.reason) problems.push(`${e.id}: kind "${e.kind}" without a reason`);
    }
  }
  for (const id of catalogue.keys()) if (!cited.has(id)) problems.push(`${id}: cited by no ledger entry`);
  return problems;
}

/**
 * Where a ledger and its document's text differ: a unit the ledger lacks, an entry the document lacks, or a unit in
 * other words, section or form. Walks both in order; a unit found further on in the other list is an insertion there.
 */
export function documentProblems(ledger: Ledger, markdown: string): string[] {
  const units = splitDocument(markdown);
  const entries = ledger.entries;
  const same = (u: DocumentUnit, e: LedgerEntry) => u.words === e.words && u.section === e.section && u.form === e.form;
  const problems: string[] = [];
  let i = 0;
  let j = 0;
  while ((i < units.length || j < entries.length) && problems.length < 10) {
    const u = units[i];
    const e = entries[j];
    const unitLater = e !== undefined && units.slice(i + 1).some((x) => same(x, e));
    const entryLater = u !== undefined && entries.slice(j + 1).some((x) => same(u, x));
    if (u && e && same(u, e)) {
      i++;
      j++;
    } else if (u && (!e || (unitLater && !entryLater))) {
      problems.push(`line ${u.line}: ${JSON.stringify(u.words)} (${u.section}) is not in the ledger`);
      i++;
    } else if (e && (!u || (entryLater && !unitLater))) {
      problems.push(`${e.id}: ${JSON.stringify(e.words)} is not in the document`);
      j++;
    } else {
      problems.push(
        `${e!.id} differs from line ${u!.line}: ledger ${JSON.stringify([e!.section, e!.form, e!.words])}, document ${JSON.stringify([u!.section, u!.form, u!.words])}`,
      );
      i++;
      j++;
    }
  }
  return problems;
}
