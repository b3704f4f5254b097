/** What the report's own pages share: escaping, the verdict badge, the page frame. Self-contained HTML: inline styles, no scripts. */
import type { RequirementVerdict, Summary } from '../verdicts.js';

export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export const COLOURS: Record<RequirementVerdict, string> = {
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

export const badge = (v: RequirementVerdict) => `<span class="badge" style="background:${COLOURS[v]}">${esc(v)}</span>`;

export const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px} h3{font-size:14px;margin:18px 0 6px;color:#57606a}
.meta{color:#57606a;margin-bottom:16px} .verdict{font-size:16px;font-weight:600}
table{border-collapse:collapse;width:100%;margin-bottom:8px} th,td{border-bottom:1px solid #d0d7de;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600} code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.badge{display:inline-block;color:#fff;border-radius:10px;padding:1px 8px;font-size:12px;white-space:nowrap}
.level{font:12px ui-monospace,monospace;color:#57606a} .why{color:#57606a;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere} .text{color:#57606a;font-size:12px;font-style:italic}
.new{background:#ffebe9} .fixed{background:#dafbe1} ul{margin:0;padding-left:18px} a{color:#0969da}
.counts span{margin-right:12px}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>\n`;
}

export function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

export function targetLine(s: Summary): string {
  if (s.targets.embedded) return 'the embedded reference deployments (not a deployment of yours)';
  return [s.targets.feed && `feed ${s.targets.feed}`, s.targets.gateway && `gateway ${s.targets.gateway}`].filter(Boolean).join(', ');
}
