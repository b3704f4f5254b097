/**
 * The clause matrix's sentence view: each sentence of the documents (the ledgers) with the requirements it yields,
 * their facets and checks (verdicts of the run) and the faulty variants of the self-test that prove them
 * (specs/variant-index.json, kept in step with fixtures/variants.ts by fixtures/variant-index.test.ts).
 */
import { describe, expect, test } from 'vitest';
import type { Facet } from '../spec.js';
import type { RequirementResult } from '../verdicts.js';
import { loadLedgers, type Ledger } from '../ledger.js';
import { loadVariantIndex, sentenceView, type VariantIndexRow } from './matrix.js';

const requirement = (id: string, checks: [string, RequirementResult['checks'][number]['verdict']][], verdict: RequirementResult['verdict'] = 'pass') =>
  ({
    id,
    service: 'feed',
    document: 'content-feed-service.md',
    section: 'Endpoints',
    level: 'MUST',
    subject: 'server',
    summary: `summary of ${id}`,
    text: 'words',
    verdict,
    checks: checks.map(([c, v]) => ({ id: c, title: c, verdict: v })),
  }) as RequirementResult;

const ledger: Ledger = {
  document: 'content-feed-service.md',
  title: 'Content Feed Service',
  prefix: 'feed',
  entries: [
    { id: 'feed-endpoints-1', section: 'Endpoints', form: 'sentence', words: 'Every 304 carries `ETag`.', requirements: ['feed-304-headers'] },
    {
      id: 'feed-endpoints-2',
      section: 'Endpoints',
      form: 'sentence',
      words: 'Definition: not shown.',
      kind: 'states what is not shown',
      reason: 'nothing to break',
    },
    {
      id: 'feed-endpoints-3',
      section: 'Endpoints',
      form: 'sentence',
      words: 'Every operation accepts If-None-Match.',
      requirements: ['feed-shared-params'],
      gap: 'the forms are sent to two operations only',
    },
    { id: 'feed-endpoints-4', section: 'Endpoints', form: 'sentence', words: 'Every 304 carries `Cache-Control`.', requirements: ['feed-304-headers'] },
  ],
};
const facets: Facet[] = [
  {
    id: 'at-head',
    key: 'feed-304-headers/at-head',
    requirement: 'feed-304-headers',
    kind: 'place',
    text: 'a 304 to HEAD',
    checks: ['feed-304-at-head'],
    source: 'places',
  },
  {
    id: 'at-moment',
    key: 'feed-304-headers/at-moment',
    requirement: 'feed-304-headers',
    kind: 'condition',
    text: 'while the content moves',
    reason: 'not observable',
    source: 'catalogue',
  },
];
const variants: VariantIndexRow[] = [
  { name: 'head-304-drops-etag', service: 'feed', description: 'a 304 to HEAD lacks ETag', breaks: ['feed-304-headers'], facets: ['feed-304-headers/at-head'] },
  { name: 'inm-exact-only', service: 'feed', description: 'If-None-Match lists are ignored', breaks: ['feed-shared-params'] },
];

/** A sentence's row of the view. */
const rowOf = (html: string, id: string) => html.match(new RegExp(`<tr id="sentence-${id}">.*?</tr>`, 's'))?.[0] ?? '';

describe('the sentence view of the clause matrix', () => {
  const html = sentenceView(
    [
      requirement('feed-304-headers', [
        ['feed-304-at-head', 'passed'],
        ['feed-304-headers', 'passed'],
      ]),
      requirement('feed-shared-params', [['feed-forms', 'failed']], 'fail'),
    ],
    facets,
    [ledger],
    variants,
  );
  const row = (id: string) => rowOf(html, id);

  test('a sentence row: its words, then requirement → facet → check (verdict) → the variant that proves it', () => {
    const r = row('feed-endpoints-1');
    expect(r).toContain('Every 304 carries `ETag`.');
    expect(r).toContain('<a href="#feed-304-headers"><code>feed-304-headers</code></a>');
    expect(r).toMatch(
      /\[place\]<\/span> a 304 to HEAD → <code>feed-304-at-head<\/code> <span class="why">passed<\/span> · shown failing on <a href="#variant-feed-head-304-drops-etag">/,
    );
    expect(r).toContain('no check: not observable');
    expect(r).toContain('2 facet(s), 1 shown failing on a variant');
    expect(r).toMatch(/proved by: <a href="#variant-feed-head-304-drops-etag">/);
  });

  test('a sentence with no obligation says its kind and reason; a gap is shown beside its requirement and verdict', () => {
    expect(row('feed-endpoints-2')).toContain('states what is not shown: nothing to break');
    const gap = row('feed-endpoints-3');
    expect(gap).toContain('<b>gap</b>: the forms are sent to two operations only');
    expect(gap).toContain('<code>feed-forms</code> <span class="why">failed</span>');
    expect(gap).toMatch(/badge[^>]*>fail</);
  });

  test("a requirement's chain is listed once, at the first sentence yielding it; a later sentence gives its verdict and links there", () => {
    const later = row('feed-endpoints-4');
    expect(later).toContain('2 check(s), 2 facet(s) (1 shown failing on a variant), 1 faulty variant(s): listed at <a href="#sentence-feed-endpoints-1">');
    expect(later).not.toContain('a 304 to HEAD');
    expect(later).toMatch(/badge[^>]*>pass</);
  });

  test('each variant named is described once, in the table at the end, with what it breaks', () => {
    expect(html.match(/<tr id="variant-feed-head-304-drops-etag">/g)).toHaveLength(1);
    expect(html).toContain('a 304 to HEAD lacks ETag');
    expect(html).toContain('<tr id="variant-feed-inm-exact-only">');
  });

  test("a requirement the run does not hold is named, not linked; a run with none of a ledger's requirements shows no view", () => {
    const partial = sentenceView([requirement('feed-304-headers', [])], facets, [ledger], variants);
    expect(partial).toContain('<code>feed-shared-params</code> <span class="why">not in this run</span>');
    expect(sentenceView([requirement('gw-other', [])], facets, [ledger], variants)).toBe('');
  });

  test('the real ledgers and variant index: every entry of both documents is a row, and the variants prove requirements', () => {
    const ledgers = loadLedgers();
    const ids = [...new Set(ledgers.flatMap((l) => l.entries.flatMap((e) => e.requirements ?? [])))];
    const index = loadVariantIndex();
    expect(index.length).toBeGreaterThan(100);
    const full = sentenceView(
      ids.map((id) => requirement(id, [[`${id}-check`, 'passed']])),
      [],
      ledgers,
      index,
    );
    for (const e of ledgers.flatMap((l) => l.entries)) expect(full, e.id).toContain(`<tr id="sentence-${e.id}">`);
    expect(rowOf(full, 'feed-endpoints-2')).toContain('<a href="#variant-feed-if-none-match-exact-only">');
    expect(full).toContain('<tr id="variant-feed-if-none-match-exact-only">');
  });
});
