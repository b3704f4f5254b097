/**
 * The clause matrix (matrix.html): every requirement, its verdict, its facets, its checks and links to their
 * evidence, and the evidence behind the run's verdict; then the documents sentence by sentence (the ledgers,
 * specs/<service>/ledger.json): sentence → requirement → facet → check → the faulty variant that proves it. A function
 * of the summary, the facets, the ledgers and the index of the self-test's faulty variants.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Facet } from '../spec.js';
import type { RequirementResult, RequirementVerdict, Summary } from '../verdicts.js';
import { entryStatus, loadLedgers, type Ledger, type LedgerEntry } from '../ledger.js';
import { esc, badge, page, groupBy, targetLine } from './html-page.js';

/** specs/variant-index.json: the self-test's faulty variants as data (generated from fixtures/variants.ts by scripts/variant-index.ts). */
export const VARIANT_INDEX_FILE = 'specs/variant-index.json';

/** One faulty variant of the self-test: what it breaks (requirements), and the facets it declares. */
export interface VariantIndexRow {
  name: string;
  service: string;
  description: string;
  breaks: string[];
  facets?: string[];
}

export interface VariantIndex {
  generatedBy: string;
  variants: VariantIndexRow[];
}

/** The committed index of the self-test's variants; none where the file is not there. */
export function loadVariantIndex(): VariantIndexRow[] {
  const file = fileURLToPath(new URL(`../../${VARIANT_INDEX_FILE}`, import.meta.url));
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as VariantIndex).variants : [];
}

/**
 * The facets of a requirement (src/facets.ts), each with what its checks showed in this run: passed when every one
 * of them that ran passed, failed when one failed, not run when none ran; a facet no check decides shows its reason.
 */
function facetList(r: RequirementResult, facets: Facet[]): string {
  const mine = facets.filter((f) => f.requirement === r.id);
  if (mine.length === 0) return '';
  const verdicts = new Map(r.checks.map((c) => [c.id, c.verdict]));
  const items = mine.map((f) => {
    const seen = (f.checks ?? []).flatMap((id) => (verdicts.has(id) ? [verdicts.get(id)!] : []));
    const state = !f.checks?.length
      ? `no check: ${f.reason ?? ''}`
      : seen.length === 0
        ? 'not run'
        : seen.some((v) => v === 'failed' || v === 'warning')
          ? 'failed'
          : seen.every((v) => v === 'passed')
            ? 'passed'
            : seen.join(', ');
    return `<li><span class="why">[${esc(f.kind)}]</span> ${esc(f.text)} — <span class="why">${esc(state)}</span></li>`;
  });
  return `<details class="facets"><summary>${mine.length} facet(s)</summary><ul>${items.join('')}</ul></details>`;
}

/**
 * The clause matrix. `reportPages` maps a check title to its page id in the Allure report (index.html#/<id>), so
 * each check links to its evidence: requests, responses, curl.
 */
export function matrixHtml(
  s: Summary,
  reportPages: Map<string, string>,
  facets: Facet[] = [],
  sentences: { ledgers: Ledger[]; variants: VariantIndexRow[] } = { ledgers: loadLedgers(), variants: loadVariantIndex() },
): string {
  const count = (v: RequirementVerdict) => s.requirements.filter((r) => r.verdict === v).length;
  const verdicts: RequirementVerdict[] = [
    'pass',
    'fail',
    'known deviation',
    'warning',
    'error',
    'setup error',
    'skipped',
    'not exercised',
    'declared unchecked',
    'not run',
    'client rule',
    'unverifiable',
    'not applicable',
  ];
  const checkLink = (c: RequirementResult['checks'][number]) => {
    const id = reportPages.get(c.title);
    const label = `<code>${esc(c.id)}</code> <span class="why">${esc(c.verdict)}</span>`;
    return id ? `<a href="index.html#/${esc(id)}">${label}</a>` : label;
  };
  const sections = [...groupBy(s.requirements, (r) => r.document)].map(([doc, reqs]) => {
    const bySection = [...groupBy(reqs, (r) => r.section)].map(([section, rs]) => {
      const rows = rs.map((r) => {
        const why = r.knownDeviation
          ? `known deviation: ${esc(r.knownDeviation.reason)}${r.knownDeviation.link ? ` (<a href="${esc(r.knownDeviation.link)}">${esc(r.knownDeviation.link)}</a>)` : ''}`
          : r.reason
            ? esc(r.reason)
            : '';
        return `<tr id="${esc(r.id)}"><td><code>${esc(r.id)}</code><div class="level">${r.level}</div></td><td>${esc(r.summary)}<div class="text">${esc(r.text.slice(0, 400))}</div>${facetList(r, facets)}</td><td>${badge(r.verdict)}${why ? `<div class="why">${why}</div>` : ''}</td><td><ul>${r.checks.map((c) => `<li>${checkLink(c)}</li>`).join('')}</ul></td></tr>`;
      });
      return `<h3>${esc(section)}</h3><table><thead><tr><th style="width:22%">requirement</th><th>what the document says</th><th style="width:18%">verdict</th><th style="width:28%">checks (evidence)</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
    });
    return `<h2>${esc(doc)}</h2>${bySection.join('')}`;
  });
  const deviations = s.knownDeviations.length
    ? `<h2>Known deviations</h2><table><thead><tr><th>id</th><th>reason</th><th>this run</th></tr></thead><tbody>${s.knownDeviations
        .map(
          (d) =>
            `<tr><td><code>${esc(d.id)}</code></td><td>${esc(d.reason)}${d.link ? ` <a href="${esc(d.link)}">${esc(d.link)}</a>` : ''}</td><td>${esc(d.status)}${d.status === 'no longer seen' ? ' — every check it covers passed: remove the entry' : ''}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : '';
  const body = `<h1>Clause matrix</h1>
<div class="meta">${esc(targetLine(s))} · ${esc(s.finishedAt)} · <a href="index.html">full report</a> · <a href="#sentences">the documents sentence by sentence</a></div>
<div class="verdict">${esc(s.verdict.toUpperCase())}${s.verdict === 'incomplete' && s.allowIncomplete ? ' (allowed by --allow-incomplete)' : ''} — ${esc(s.message)}</div>
${evidenceHtml(s)}
<p class="counts">${verdicts
    .filter((v) => count(v) > 0)
    .map((v) => `<span>${badge(v)} ${count(v)}</span>`)
    .join('')}</p>
${deviations}${sections.join('')}
${sentenceView(s.requirements, facets, sentences.ledgers, sentences.variants)}`;
  return page('Clause matrix', body);
}

/** What a requirement of the run brings to the sentence view: its result, its facets, the variants that break it or a facet of it. */
interface Yield {
  id: string;
  result?: RequirementResult;
  facets: Facet[];
  variants: VariantIndexRow[];
  facetVariants: Map<string, VariantIndexRow[]>;
  /** The earlier sentence whose row lists its checks, facets and variants (each requirement's chain is on the page once). */
  listedAt?: string;
}

const MAX_LISTED = 4;
/** The first few, then the rest behind a toggle: every one is on the page (the variants named are all in the table at the end). */
const some = <T>(xs: T[], show: (x: T) => string) =>
  `${xs.slice(0, MAX_LISTED).map(show).join(', ')}${xs.length > MAX_LISTED ? ` <details class="more" style="display:inline"><summary>and ${xs.length - MAX_LISTED} more</summary>${xs.slice(MAX_LISTED).map(show).join(', ')}</details>` : ''}`;
const variantAnchor = (v: VariantIndexRow) => `variant-${v.service}-${v.name}`;
const variantName = (v: VariantIndexRow) => `<a href="#${esc(variantAnchor(v))}"><code>${esc(v.name)}</code></a>`;

/** The variants named in the sentence view, each once: what it does and what it breaks. */
function variantTable(named: VariantIndexRow[]): string {
  if (named.length === 0) return '';
  const rows = named.map(
    (v) =>
      `<tr id="${esc(variantAnchor(v))}"><td><code>${esc(v.name)}</code><div class="level">${esc(v.service)}</div></td><td>${esc(v.description)}</td><td>${v.breaks.map((b) => `<a href="#${esc(b)}"><code>${esc(b)}</code></a>`).join(' ')}</td></tr>`,
  );
  return `<h3 id="variants">The faulty variants named above</h3><table><thead><tr><th style="width:22%">variant</th><th>what it does</th><th style="width:28%">breaks</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Checks with their verdicts in this run (a check that did not run says so). */
function checksHtml(ids: string[], verdicts: Map<string, string>): string {
  return some(ids, (id) => `<code>${esc(id)}</code> <span class="why">${esc(verdicts.get(id) ?? 'not run')}</span>`);
}

/** A requirement's chain in full: its checks (verdicts), facet → check(s) → variant(s), and the variants that break it. */
function chainHtml(y: Yield, r: RequirementResult): string {
  const verdicts = new Map(r.checks.map((c) => [c.id, c.verdict as string]));
  const facetItems = y.facets.map((f) => {
    const proof = y.facetVariants.get(f.key) ?? [];
    const by = f.checks?.length ? `→ ${checksHtml(f.checks, verdicts)}` : `<span class="why">no check: ${esc(f.reason ?? '')}</span>`;
    return `<li><span class="why">[${esc(f.kind)}]</span> ${esc(f.text)} ${by}${proof.length ? ` · shown failing on ${some(proof, variantName)}` : ''}</li>`;
  });
  const proven = y.facets.filter((f) => y.facetVariants.get(f.key)?.length).length;
  const facetBlock = facetItems.length
    ? `<details class="facets"><summary>${facetItems.length} facet(s), ${proven} shown failing on a variant</summary><ul>${facetItems.join('')}</ul></details>`
    : '';
  const ids = r.checks.map((c) => c.id);
  const checks = ids.length ? `<div>checks: ${checksHtml(ids, verdicts)}</div>` : '';
  const variants = y.variants.length
    ? `<div>proved by: ${some(y.variants, variantName)}</div>`
    : ids.length
      ? '<div class="why">no faulty variant of the self-test breaks it</div>'
      : '';
  return `${checks}${facetBlock}${variants}`;
}

/** One requirement under a sentence: its verdict, then its chain, or where an earlier sentence lists it. */
function yieldHtml(y: Yield): string {
  if (!y.result) return `<li><code>${esc(y.id)}</code> <span class="why">not in this run</span></li>`;
  const r = y.result;
  const head = `<a href="#${esc(r.id)}"><code>${esc(r.id)}</code></a> <span class="level">${esc(r.level)}</span> ${badge(r.verdict)}`;
  if (!y.listedAt) return `<li>${head}${chainHtml(y, r)}</li>`;
  const proven = y.facets.filter((f) => y.facetVariants.get(f.key)?.length).length;
  const counts = `${r.checks.length} check(s), ${y.facets.length} facet(s) (${proven} shown failing on a variant), ${y.variants.length} faulty variant(s)`;
  return `<li>${head}<div class="why">${counts}: listed at <a href="#sentence-${esc(y.listedAt)}">${esc(y.listedAt)}</a></div></li>`;
}

/** One ledger entry as a row: its words, then what it yields (requirements), or why it yields no obligation, and its gap. */
function sentenceRow(e: LedgerEntry, yields: Yield[]): string {
  const status = entryStatus(e);
  const words = e.words.length > 400 ? `${e.words.slice(0, 399)}…` : e.words;
  const parts: string[] = [];
  if (yields.length) parts.push(`<ul>${yields.map(yieldHtml).join('')}</ul>`);
  if (status === 'no obligation') parts.push(`<div class="why">${esc(e.kind ?? '')}: ${esc(e.reason ?? '')}</div>`);
  else if (e.reason) parts.push(`<div class="why">note: ${esc(e.reason)}</div>`);
  if (e.gap) parts.push(`<div class="why"><b>gap</b>: ${esc(e.gap)}</div>`);
  return `<tr id="sentence-${esc(e.id)}"><td><code>${esc(e.id)}</code><div class="level">${esc(e.form)} · ${esc(status)}</div></td><td>${esc(words)}</td><td>${parts.join('')}</td></tr>`;
}

/**
 * The documents sentence by sentence: each ledger whose requirements this run has, every entry in document order with
 * what it yields down to the faulty variants. A variant is listed under a requirement it breaks (the self-test shows it
 * failing a check citing that requirement and no other) and under a facet it declares (shown failing a check of it);
 * which of a requirement's several checks it fails is the self-test's record, not this index's.
 */
export function sentenceView(requirements: RequirementResult[], facets: Facet[], ledgers: Ledger[], variants: VariantIndexRow[]): string {
  const byId = new Map(requirements.map((r) => [r.id, r]));
  const shown = ledgers.filter((l) => l.entries.some((e) => e.requirements?.some((id) => byId.has(id))));
  if (shown.length === 0) return '';
  const yieldOf = (id: string): Yield => {
    const mine = facets.filter((f) => f.requirement === id);
    const facetVariants = new Map(mine.map((f) => [f.key, variants.filter((v) => v.facets?.includes(f.key))]));
    return { id, result: byId.get(id), facets: mine, variants: variants.filter((v) => v.breaks.includes(id)), facetVariants };
  };
  const named = new Set<VariantIndexRow>();
  const firstAt = new Map<string, string>();
  const yieldsOf = (e: LedgerEntry) =>
    (e.requirements ?? []).map((id) => {
      const y = { ...yieldOf(id), listedAt: firstAt.get(id) };
      if (!firstAt.has(id)) firstAt.set(id, e.id);
      for (const v of [...y.variants, ...[...y.facetVariants.values()].flat()]) named.add(v);
      return y;
    });
  const docs = shown.map((l) => {
    const count = (st: ReturnType<typeof entryStatus>) => l.entries.filter((e) => entryStatus(e) === st).length;
    const sections = [...groupBy(l.entries, (e) => e.section)].map(
      ([section, es]) => `<tr><th colspan="3">${esc(section)}</th></tr>${es.map((e) => sentenceRow(e, yieldsOf(e))).join('')}`,
    );
    return `<h3>${esc(l.document)}</h3><p class="counts">${l.entries.length} entries: ${count('mapped')} mapped to requirements, ${count('gap')} with a gap, ${count('no obligation')} with no obligation a deployment can break from outside</p>
<table><thead><tr><th style="width:18%">sentence</th><th style="width:34%">the document's words</th><th>requirement → facet → check → faulty variant</th></tr></thead><tbody>${sections.join('')}</tbody></table>`;
  });
  return `<h2 id="sentences">The documents, sentence by sentence</h2>
<p class="why">Every sentence, list item and table row of the documents (specs/&lt;service&gt;/ledger.json), with the requirements it yields, their facets and checks (verdicts of this run), and the faulty variants of the project's self-test that prove them (specs/variant-index.json): the self-test shows each variant failing a check citing the requirement it breaks and no check citing another, and a variant listed on a facet failing a check of that facet. Each variant links to what it does.</p>
${docs.join('')}${variantTable([...named].sort((a, b) => a.service.localeCompare(b.service) || a.name.localeCompare(b.name)))}`;
}

/** Per service: how many MUST requirements were verified, failed, left undecided; what would decide the rest. */
export function evidenceHtml(s: Summary): string {
  if (!s.evidence?.length) return '';
  const rows = s.evidence
    .map(
      (e) =>
        `<tr><td>${esc(e.service)}</td><td>${e.must}</td><td>${e.verified}</td><td>${e.failed}</td><td>${e.knownDeviations}</td><td>${e.undecided}</td><td>${e.notExercised}</td><td>${e.declaredUnchecked}</td><td>${e.unverifiable}</td></tr>`,
    )
    .join('');
  const link = (id: string) => `<a href="#${esc(id)}"><code>${esc(id)}</code></a>`;
  const failing = s.requirements.filter((q) => q.verdict === 'fail');
  const list = (title: string, items: string[]) => (items.length ? `<h3>${esc(title)}</h3><ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : '');
  return `<h2>Evidence: MUST requirements</h2>
<table><thead><tr><th>service</th><th>MUST (checkable)</th><th>verified</th><th>failed</th><th>known deviations</th><th>undecided</th><th>not exercised</th><th>declared unchecked</th><th>unverifiable from outside</th></tr></thead><tbody>${rows}</tbody></table>
${list(
  'Failed',
  failing.map((q) => `${link(q.id)} (${q.level}) — ${esc(q.reason ?? '')}`),
)}${list(
    'Undecided, and what would decide them',
    s.undecided.map((u) => `${link(u.id)} (${u.level}, ${esc(u.verdict)}) — ${esc(u.toDecide)}`),
  )}${list(
    'Not exercised (only a condition the suite does not provoke by default would exercise them)',
    s.notExercised.map((u) => `${link(u.id)} (${u.level}) — ${esc(u.why)}`),
  )}${list(
    'Declared unchecked',
    s.declaredUnchecked.map((u) => `<code>${esc(u.id)}</code> — ${esc(u.reason)} (${esc(u.status)})`),
  )}`;
}
