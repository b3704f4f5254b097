/**
 * `npm run shape`: the code's shape, measured. The import graph of src/ (every relative import, type-only ones
 * too): its circles, and each arrow against the layers below. And every function in src/ and the reference
 * deployments over MAX_FUNCTION_LINES lines. src/shape.test.ts holds the project to it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MAX_FUNCTION_LINES = 80;

/**
 * The layers of src/, lowest first: a module may import its own layer and the layers below, never one above.
 * contracts (the documents as data) → model (verdicts, findings, the HTTP client) → run (the run's context and
 * the harness) → checks' helpers → outputs (functions of the summary) → commands.
 */
export const LAYERS: [string, RegExp][] = [
  ['contracts', /^src\/(spec|ledger|version|redact|retry-policy|base-url)\.ts$/],
  ['model', /^src\/(verdicts|origins|http|evidence|findings|config)\.ts$/],
  ['run', /^src\/(context|harness|raw-http)\.ts$/],
  ['checks', /^src\/(feed|gateway|generate|caching|facets|coverage)\.ts$/],
  ['outputs', /^src\/(collector\.ts|outputs\/)/],
  ['commands', /^src\/(cli\.ts|target-probes\.ts|client-conformance\/)/],
];

export function layerOf(file: string): number {
  const i = LAYERS.findIndex(([, re]) => re.test(file));
  return i === -1 ? LAYERS.length : i;
}

function walk(dir: string, keep: (f: string) => boolean): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...walk(rel, keep));
    else if (keep(rel)) out.push(rel);
  }
  return out;
}

const isModule = (f: string) => f.endsWith('.ts') && !f.endsWith('.test.ts');

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(path.resolve(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** Every relative import (and re-export) of each module of src/, resolved to a repository path. */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of walk('src', isModule)) {
    const deps: string[] = [];
    for (const st of parse(file).statements) {
      const spec =
        (ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)
          ? st.moduleSpecifier.text
          : undefined;
      if (spec?.startsWith('.')) deps.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec.replace(/\.js$/, '.ts'))));
    }
    graph.set(file, [...new Set(deps)]);
  }
  return graph;
}

/** The import circles: each strongly connected component of more than one module (Tarjan). */
export function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** Imports from a lower layer to a higher one ("src/config.ts → src/context.ts"). Modules outside src/ are not layered. */
export function upwardArrows(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, deps] of graph) for (const to of deps) if (to.startsWith('src/') && layerOf(to) > layerOf(from)) out.push(`${from} → ${to}`);
  return out.sort();
}

/** Every function over the bound: "file:line name (n lines)". */
export function longFunctions(
  files = [...walk('src', isModule), 'fixtures/feed/reference.ts', 'fixtures/gateway/reference.ts'],
): { at: string; lines: number }[] {
  const out: { at: string; lines: number }[] = [];
  for (const file of files) {
    const sf = parse(file);
    const visit = (node: ts.Node, owner: string) => {
      let name = owner;
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const n = node as ts.FunctionLikeDeclaration;
        const own =
          n.name && ts.isIdentifier(n.name)
            ? n.name.text
            : ts.isVariableDeclaration(node.parent) && ts.isIdentifier(node.parent.name)
              ? node.parent.name.text
              : '(anonymous)';
        name = owner ? `${owner}/${own}` : own;
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = end - start + 1;
        if (lines > MAX_FUNCTION_LINES) out.push({ at: `${file} ${name}`, lines });
      }
      ts.forEachChild(node, (c) => visit(c, name));
    };
    visit(sf, '');
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const graph = importGraph();
  const c = circles(graph);
  const up = upwardArrows(graph);
  const long = longFunctions();
  console.log(`import circles in src/: ${c.length}${c.map((x) => `\n  ${x.join(' ⇄ ')}`).join('')}`);
  console.log(`arrows from a lower layer to a higher one: ${up.length}${up.map((x) => `\n  ${x}`).join('')}`);
  console.log(`functions over ${MAX_FUNCTION_LINES} lines: ${long.length}${long.map((f) => `\n  ${f.lines} ${f.at}`).join('')}`);
}
