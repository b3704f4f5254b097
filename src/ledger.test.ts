import { describe, expect, test } from 'vitest';
import { loadCatalogue } from './spec.js';
import { DOCUMENTS_DIR, documentProblems, entryStatus, ledgerProblems, loadLedgers, readDocument, splitDocument, type Ledger } from './ledger.js';
import { ledgerRows, ledgerText, type CoverageRow } from './coverage.js';

const ledgers = loadLedgers();
const catalogue = loadCatalogue();

describe('the documents as a ledger (specs/<service>/ledger.json)', () => {
  test('both ledgers validate; every requirement id exists, every requirement is cited, every entry accounts for itself', () => {
    expect(ledgers.map((l) => l.prefix)).toEqual(['feed', 'gw']);
    expect(ledgerProblems(ledgers, catalogue)).toEqual([]);
  });

  // The documents sit at ../shared/specs/ beside the clone (CI keeps a copy of shared/ there). Without them the
  // ledger still holds every unit's words, so the map works; only this comparison cannot run.
  for (const l of ledgers) {
    const doc = readDocument(l);
    test.skipIf(doc === undefined)(
      `${l.document}: every sentence, list item and table row is in the ledger, in order, in the same words and section${doc === undefined ? ` (skipped: the document is not at ${DOCUMENTS_DIR})` : ''}`,
      () => {
        expect(documentProblems(l, doc!)).toEqual([]);
      },
    );
  }

  test('the gaps are listed, each with a statement of the facts no requirement covers (the work list)', () => {
    const gaps = ledgers.flatMap((l) => l.entries.filter((e) => entryStatus(e) === 'gap'));
    for (const g of gaps) expect(g.gap!.length, g.id).toBeGreaterThanOrEqual(40);
    console.log(`${gaps.length} gap(s) in the ledgers:\n${gaps.map((g) => `  ${g.id}: ${g.gap}`).join('\n')}`);
  });
});

describe('the gate fails where it should', () => {
  const doc = '# T: Specification\n\nIntro one. Intro two.\n\n## A\n\n- Item `x`. Second.\n  - sub;\n\n| H | V |\n|---|---|\n| a | 1 |\n';
  const units = splitDocument(doc);
  const ledger = (over: Partial<Ledger['entries'][number]>[] = []): Ledger => ({
    document: 'd.md',
    title: 'T',
    prefix: 'feed',
    entries: units.map((u, i) => ({ id: `feed-u-${i}`, section: u.section, form: u.form, words: u.words, requirements: ['feed-get-only'], ...over[i] })),
  });

  test('the splitter yields sentences, list items (marker dropped) and table rows with their heading path', () => {
    expect(units.map((u) => [u.section, u.form, u.words])).toEqual([
      ['T: Specification', 'sentence', 'Intro one.'],
      ['T: Specification', 'sentence', 'Intro two.'],
      ['A', 'list-item', 'Item `x`.'],
      ['A', 'list-item', 'Second.'],
      ['A', 'list-item', 'sub;'],
      ['A', 'table-header', '| H | V |'],
      ['A', 'table-row', '| a | 1 |'],
    ]);
    expect(documentProblems(ledger(), doc)).toEqual([]);
  });

  test('a sentence missing from the ledger, or in other words, fails', () => {
    const short = ledger();
    short.entries.pop();
    expect(documentProblems(short, doc)).toEqual(['line 12: "| a | 1 |" (A) is not in the ledger']);
    expect(documentProblems(ledger([{}, { words: 'Intro 2.' }]), doc)).toEqual([
      'feed-u-1 differs from line 3: ledger ["T: Specification","sentence","Intro 2."], document ["T: Specification","sentence","Intro two."]',
    ]);
    // A sentence added to the document, and one taken out of it: each named once, the rest still aligned.
    expect(documentProblems(ledger(), doc.replace('Intro two.', 'Intro two. Intro three.'))).toEqual([
      'line 3: "Intro three." (T: Specification) is not in the ledger',
    ]);
    expect(documentProblems(ledger(), doc.replace(' Intro two.', ''))).toEqual(['feed-u-1: "Intro two." is not in the document']);
  });

  test('an unknown requirement, an uncited requirement and an entry that accounts for nothing fail', () => {
    const cat = new Map([
      ['feed-get-only', { service: 'feed' as const }],
      ['feed-other', { service: 'feed' as const }],
    ]);
    const problems = ledgerProblems([ledger([{ requirements: ['feed-nope'] }, { requirements: undefined }])], cat);
    expect(problems).toEqual([
      'feed-u-0: unknown requirement feed-nope',
      'feed-u-1: neither requirements, a gap nor a kind with its reason',
      'feed-other: cited by no ledger entry',
    ]);
    expect(ledgerProblems([ledger([{ requirements: undefined, kind: 'advice' }])], cat)).toContain('feed-u-0: kind "advice" without a reason');
  });

  test('npm run coverage joins each entry to its requirements, checks and variants, and lists the gaps', () => {
    const rows = [...catalogue.values()].map((r): CoverageRow => ({
      ...r,
      status: 'covered',
      checks: [`${r.id}-check`],
      facets: [],
      variants: r.id === 'feed-get-only' ? ['post-accepted'] : [],
    }));
    const entries = ledgerRows(rows);
    expect(entries.length).toBe(ledgers.reduce((n, l) => n + l.entries.length, 0));
    const e = entries.find((x) => x.requirements?.includes('feed-get-only'))!;
    expect(e.yields.find((y) => y.id === 'feed-get-only')).toMatchObject({ checks: ['feed-get-only-check'], variants: ['post-accepted'] });
    const text = ledgerText(entries);
    const gaps = entries.filter((x) => x.gap);
    expect(text).toContain(`${gaps.length} gap(s)`);
    for (const g of gaps) expect(text).toContain(`${g.id}: `);
  });
});
