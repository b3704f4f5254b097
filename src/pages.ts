/**
 * The report's own pages, beside the Allure report: the clause matrix (every requirement, its verdict, its checks,
 * links to their evidence) and the comparison of runs. Self-contained HTML: inline styles, no scripts.
 */
import type { Facet } from './facets.js';
import type { RequirementResult, RequirementVerdict, Summary } from './results.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const COLOURS: Record<RequirementVerdict, string> = {
  pass: '#1a7f37',
  fail: '#cf222e',
  warning: '#bf8700',
  'known deviation': '#8250df',
  error: '#a40e26',
  'setup error': '#9a6700',
  skipped: '#6e7781',
  'not run': '#8c959f',
  'not exercised': '#6e7781',
  'declared unchecked': '#6e7781',
  unverifiable: '#57606a',
  'not applicable': '#57606a',
  'client rule': '#0969da',
};

const badge = (v: RequirementVerdict) => `<span class="badge" style="background:${COLOURS[v]}">${esc(v)}</span>`;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px} h3{font-size:14px;margin:18px 0 6px;color:#57606a}
.meta{color:#57606a;margin-bottom:16px} .verdict{font-size:16px;font-weight:600}
table{border-collapse:collapse;width:100%;margin-bottom:8px} th,td{border-bottom:1px solid #d0d7de;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600} code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.badge{display:inline-block;color:#fff;border-radius:10px;padding:1px 8px;font-size:12px;white-space:nowrap}
.level{font:12px ui-monospace,monospace;color:#57606a} .why{color:#57606a;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere} .text{color:#57606a;font-size:12px;font-style:italic}
.new{background:#ffebe9} .fixed{background:#dafbe1} ul{margin:0;padding-left:18px} a{color:#0969da}
.counts span{margin-right:12px}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>\n`;
}

function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
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

function targetLine(s: Summary): string {
  if (s.targets.embedded) return 'the embedded reference deployments (not a deployment of yours)';
  return [s.targets.feed && `feed ${s.targets.feed}`, s.targets.gateway && `gateway ${s.targets.gateway}`].filter(Boolean).join(', ');
}

const FAILING: RequirementVerdict[] = ['fail'];

/** Several runs side by side, requirement by requirement; what newly fails in the last run is highlighted. */
export function compareHtml(runs: { name: string; summary: Summary }[]): { html: string; newlyFailing: string[]; fixed: string[] } {
  const ids = [...new Set(runs.flatMap((r) => r.summary.requirements.map((q) => q.id)))];
  const verdictOf = (run: Summary, id: string) => run.requirements.find((q) => q.id === id)?.verdict;
  const last = runs[runs.length - 1]!.summary;
  const before = runs.length > 1 ? runs[runs.length - 2]!.summary : undefined;
  const newlyFailing = before ? ids.filter((id) => FAILING.includes(verdictOf(last, id)!) && !FAILING.includes(verdictOf(before, id)!)) : [];
  const fixed = before ? ids.filter((id) => FAILING.includes(verdictOf(before, id)!) && verdictOf(last, id) === 'pass') : [];
  const info = new Map(runs.flatMap((r) => r.summary.requirements).map((q) => [q.id, q]));
  const rows = ids.map((id) => {
    const cls = newlyFailing.includes(id) ? ' class="new"' : fixed.includes(id) ? ' class="fixed"' : '';
    const q = info.get(id)!;
    const cells = runs.map((r) => {
      const v = verdictOf(r.summary, id);
      return `<td>${v ? badge(v) : '<span class="why">—</span>'}</td>`;
    });
    const mark = newlyFailing.includes(id) ? ' <strong>newly failing</strong>' : fixed.includes(id) ? ' <strong>fixed</strong>' : '';
    return `<tr${cls}><td><code>${esc(id)}</code><div class="level">${q.level}</div></td><td>${esc(q.summary)}${mark}</td>${cells.join('')}</tr>`;
  });
  const head = runs.map((r) => `<th>${esc(r.name)}<div class="why">${esc(r.summary.verdict)} · ${esc(r.summary.finishedAt)}</div></th>`).join('');
  const body = `<h1>Comparison of runs</h1>
<div class="meta">${runs.map((r) => `${esc(r.name)}: ${esc(targetLine(r.summary))}`).join(' · ')}</div>
<div class="verdict">${before ? `${newlyFailing.length} requirement(s) newly failing in ${esc(runs[runs.length - 1]!.name)}, ${fixed.length} fixed` : 'one run'}</div>
${newlyFailing.length ? `<p>Newly failing: ${newlyFailing.map((id) => `<code>${esc(id)}</code>`).join(', ')}</p>` : ''}
<table><thead><tr><th style="width:22%">requirement</th><th>summary</th>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
  return { html: page('Comparison of runs', body), newlyFailing, fixed };
}
