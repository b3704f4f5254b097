/**
 * The clause matrix (matrix.html): every requirement, its verdict, its facets, its checks and links to their
 * evidence, and the evidence behind the run's verdict. A function of the summary.
 */
import type { Facet } from '../spec.js';
import type { RequirementResult, RequirementVerdict, Summary } from '../verdicts.js';
import { esc, badge, page, groupBy, targetLine } from './html-page.js';

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
export function matrixHtml(s: Summary, reportPages: Map<string, string>, facets: Facet[] = []): string {
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
<div class="meta">${esc(targetLine(s))} · ${esc(s.finishedAt)} · <a href="index.html">full report</a></div>
<div class="verdict">${esc(s.verdict.toUpperCase())}${s.verdict === 'incomplete' && s.allowIncomplete ? ' (allowed by --allow-incomplete)' : ''} — ${esc(s.message)}</div>
${evidenceHtml(s)}
<p class="counts">${verdicts
    .filter((v) => count(v) > 0)
    .map((v) => `<span>${badge(v)} ${count(v)}</span>`)
    .join('')}</p>
${deviations}${sections.join('')}`;
  return page('Clause matrix', body);
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
