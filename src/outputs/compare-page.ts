/** The comparison of runs (compare.html): which requirements newly fail, which were fixed. A function of the summaries. */
import type { RequirementVerdict, Summary } from '../verdicts.js';
import { esc, badge, page, targetLine } from './html-page.js';

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
