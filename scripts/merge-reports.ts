/**
 * `npm run merge-reports -- --out DIR SHARD_DIR [...]`: one report from the report dirs of shards (CI jobs that
 * ran `npm run conformance -- --shard I/N`): summary.json, junit.xml, exchanges, Allure results, HTML and the
 * clause matrix. Exit status is the merged run's, as for a single run.
 */
import { parseArgs } from 'node:util';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { summarize, writeResults, type Summary } from '../src/results.js';
import { generateHtml, reportPages } from '../src/html.js';
import { matrixHtml } from '../src/pages.js';
import type { Service } from '../src/spec.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' }, 'no-html': { type: 'boolean' } } });
if (!values.out || positionals.length === 0) {
  console.error('usage: npm run merge-reports -- --out DIR SHARD_DIR [SHARD_DIR ...]');
  process.exit(2);
}
const out = path.resolve(values.out);
const shards = positionals.map((dir) => {
  const file = path.join(dir, 'summary.json');
  if (!existsSync(file)) {
    console.error(`merge-reports: ${file} does not exist`);
    process.exit(2);
  }
  return { dir, summary: JSON.parse(readFileSync(file, 'utf8')) as Summary };
});

rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'allure-results'), { recursive: true });
const exchanges: string[] = [];
for (const { dir } of shards) {
  const results = path.join(dir, 'allure-results');
  if (existsSync(results)) for (const f of readdirSync(results)) cpSync(path.join(results, f), path.join(out, 'allure-results', f));
  const ex = path.join(dir, 'exchanges.jsonl');
  if (existsSync(ex)) exchanges.push(readFileSync(ex, 'utf8'));
}
writeFileSync(path.join(out, 'exchanges.jsonl'), exchanges.join(''));

const all = shards.map((s) => s.summary);
const pick = (k: 'feed' | 'gateway') => all.map((s) => s.targets[k]).find((t) => t) ?? null;
const byService: Record<string, number> = {};
for (const s of all) for (const [k, v] of Object.entries(s.requestsByService)) byService[k] = (byService[k] ?? 0) + v;
const merged = summarize(
  all.flatMap((s) =>
    s.checks.map((c) => (c.verdict === 'known-deviation' ? { ...c, verdict: c.level === 'MUST' ? ('failed' as const) : ('warning' as const) } : c)),
  ),
  {
    harnessErrors: all.flatMap((s) => s.harnessErrors),
    startedAt: Math.min(...all.map((s) => Date.parse(s.startedAt))),
    targets: { feed: pick('feed'), gateway: pick('gateway'), embedded: all.every((s) => s.targets.embedded) },
    requests: all.reduce((a, s) => a + s.requests, 0),
    requestsByService: byService,
    billableCalls: all.reduce((a, s) => a + s.billableCalls, 0),
    budget: all.reduce((a, s) => a + s.budget, 0),
    complete: all.every((s) => s.complete),
    services: [...new Set(all.flatMap((s) => s.requirements.map((r) => r.service)))] as Service[],
    knownDeviations: [...new Map(all.flatMap((s) => s.knownDeviations).map((d) => [d.id, { id: d.id, reason: d.reason, link: d.link }])).values()],
  },
);
writeResults(out, merged);
const htmlDir = path.join(out, 'html');
if (!values['no-html']) await generateHtml(path.join(out, 'allure-results'), htmlDir, 'Service conformance', merged);
mkdirSync(htmlDir, { recursive: true });
writeFileSync(path.join(htmlDir, 'matrix.html'), matrixHtml(merged, reportPages(htmlDir)));
console.log(`merged ${shards.length} shard(s) into ${out}: ${merged.verdict} — ${merged.message}`);
process.exitCode = merged.exitCode;
