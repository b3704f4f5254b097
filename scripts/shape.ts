/**
 * `npm run shape [-- --root DIR]`: the code's shape, measured, exiting 1 on any violation that is not a known one.
 * src/shape.test.ts holds the project to it and shows each kind failing on a made-up tree.
 *
 * What it measures:
 * - the import graph of src/ (every relative import and re-export, type-only ones too, and every `import()` whose
 *   argument is a string): its circles, and each arrow from a lower layer to a higher one;
 * - each module of src/ that no layer names (LAYERS);
 * - each import from a module of src/ (the product) into fixtures/ (the project's tests): only the commands may
 *   import the reference deployments (REFERENCE_DEPLOYMENTS), which ship with the package as the embedded target;
 * - every function over MAX_FUNCTION_LINES lines and every class over MAX_CLASS_LINES lines, in src/, suites/,
 *   fixtures/ and scripts/ (tests too: a check's body is a function like any other);
 * - each service's check modules against suites/order.ts: listed exactly once, and a module holding a
 *   describe.sequential block listed as sequential or last.
 *
 * Known violations (scripts/shape-known.json: kind, where, size when it has one, and the reason it waits) are
 * reported as known, never left out. The list only shrinks: an entry whose violation is gone, or whose function or
 * class grew past the size it lists, is an error like a new violation.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MAX_FUNCTION_LINES = 80;
/**
 * A class is a handful of methods, each within the function bound, around one piece of state: 250 lines holds
 * three functions at the bound and their fields. The largest classes today: HttpClient (src/http.ts, known, to be
 * split into the layers the Shape section names), FeedState (the feed reference's state, 211 lines).
 */
export const MAX_CLASS_LINES = 250;
/** The known violations, relative to the root measured. */
export const KNOWN_FILE = 'scripts/shape-known.json';

/**
 * The layers of src/, lowest first: a module may import its own layer and the layers below, never one above.
 * contracts (the documents as data) → model (verdicts, findings, the HTTP client) → run (the run's context and
 * the harness) → checks' helpers → outputs (functions of the summary) → commands.
 */
export const LAYERS: [string, RegExp][] = [
  ['contracts', /^src\/(spec|ledger|version|redact|retry-policy|base-url|canonical)\.ts$/],
  ['model', /^src\/(verdicts|origins|http|evidence|findings|config)\.ts$/],
  ['run', /^src\/(context|harness|raw-http)\.ts$/],
  ['checks', /^src\/(feed|gateway|generate|caching|facets|coverage|places|between)\.ts$/],
  ['outputs', /^src\/(collector\.ts|outputs\/)/],
  ['commands', /^src\/(cli\.ts|target-probes\.ts|client-conformance\/)/],
];

/** The reference deployments: the modules of fixtures/ the commands may import (the embedded target ships). */
export const REFERENCE_DEPLOYMENTS = ['fixtures/embedded.ts', 'fixtures/feed/reference.ts', 'fixtures/gateway/reference.ts'];

/** The folders whose functions and classes are measured. */
export const MEASURED = ['src', 'suites', 'fixtures', 'scripts'];

export type Kind = 'import circle' | 'upward import' | 'product imports fixtures' | 'unlayered module' | 'long function' | 'large class' | 'suite order';

export interface Violation {
  kind: Kind;
  /** Where: a module, an arrow "a → b", a function "file name" or class "file Name", a circle "a ⇄ b". */
  at: string;
  /** Lines, for a function or a class. */
  size?: number;
}

export interface KnownViolation extends Violation {
  reason: string;
}

export function layerOf(file: string): number {
  const i = LAYERS.findIndex(([, re]) => re.test(file));
  return i === -1 ? LAYERS.length : i;
}

/** Files under `dir` of `root` (relative to it, with forward slashes) that `keep` accepts. */
export function walk(dir: string, keep: (f: string) => boolean, root = ROOT): string[] {
  if (!existsSync(path.join(root, dir))) return [];
  const out: string[] = [];
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...walk(rel, keep, root));
    else if (keep(rel)) out.push(rel);
  }
  return out.sort();
}

// A project test (*.test.ts) or a module of conformance checks (suites/<service>/*.checks.ts) is no module of a layer.
const isModule = (f: string) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.checks.ts');
const isCode = (f: string) => /\.(ts|mts|mjs)$/.test(f) && !f.endsWith('.d.ts');

function parse(file: string, root = ROOT): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(path.resolve(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** The module specifiers a file imports: static imports, re-exports, and `import('…')` with a string argument. */
export function specifiers(sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      out.push(node.moduleSpecifier.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) out.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every relative import of each module of src/, resolved to a path relative to the root ("src/a.ts", "fixtures/b.ts"). */
export function importGraph(root = ROOT): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of walk('src', isModule, root)) {
    const deps = specifiers(parse(file, root))
      .filter((s) => s.startsWith('.'))
      .map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s.replace(/\.js$/, '.ts'))));
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

/** Imports from a lower layer to a higher one ("src/config.ts → src/context.ts"). */
export function upwardArrows(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, deps] of graph) for (const to of deps) if (to.startsWith('src/') && layerOf(to) > layerOf(from)) out.push(`${from} → ${to}`);
  return out.sort();
}

/** Imports from the product into fixtures/, but a command's import of a reference deployment ("src/x.ts → fixtures/y.ts"). */
export function fixturesImports(graph: Map<string, string[]>): string[] {
  const commands = LAYERS.findIndex(([name]) => name === 'commands');
  const allowed = (from: string, to: string) => layerOf(from) === commands && REFERENCE_DEPLOYMENTS.includes(to);
  const out: string[] = [];
  for (const [from, deps] of graph) for (const to of deps) if (to.startsWith('fixtures/') && !allowed(from, to)) out.push(`${from} → ${to}`);
  return out.sort();
}

/** The modules of src/ that no layer names. */
export function unlayered(graph: Map<string, string[]>): string[] {
  return [...graph.keys()].filter((f) => layerOf(f) === LAYERS.length).sort();
}

/** A readable name for a function without one: the call it is given to and that call's title or check id. */
function callName(node: ts.Node, sf: ts.SourceFile): string | undefined {
  const call = node.parent;
  if (!call || !ts.isCallExpression(call) || !call.arguments.includes(node as ts.Expression)) return undefined;
  const callee = call.expression.getText(sf).replace(/\s+/g, '');
  const first = call.arguments[0];
  if (first && ts.isStringLiteralLike(first)) return `${callee}('${first.text}')`;
  if (first && ts.isTemplateExpression(first)) return `${callee}(${first.getText(sf)})`;
  if (first && ts.isObjectLiteralExpression(first)) {
    const id = first.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(sf) === 'id');
    if (id && ts.isPropertyAssignment(id)) return `${callee}(${id.initializer.getText(sf)})`;
  }
  return `${callee}(…)`;
}

function ownName(node: ts.Node, sf: ts.SourceFile): string {
  const n = node as ts.FunctionLikeDeclaration | ts.ClassLikeDeclaration;
  if (n.name && (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name) || ts.isPrivateIdentifier(n.name))) return n.name.text;
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return callName(node, sf) ?? '(anonymous)';
}

/** Every function over MAX_FUNCTION_LINES and every class over MAX_CLASS_LINES lines: "file owner/name". */
export function oversized(files: string[], root = ROOT): Violation[] {
  const out: Violation[] = [];
  for (const file of files) {
    const sf = parse(file, root);
    const seen = new Map<string, number>();
    const visit = (node: ts.Node, owner: string) => {
      let name = owner;
      const fn = ts.isFunctionLike(node) && 'body' in node && !!node.body;
      if (fn || ts.isClassLike(node)) {
        const own = ownName(node, sf);
        name = owner ? `${owner}/${own}` : own;
        const n = (seen.get(name) ?? 0) + 1;
        seen.set(name, n);
        if (n > 1) name = `${name} #${n}`;
        const lines = sf.getLineAndCharacterOfPosition(node.getEnd()).line - sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        if (lines > (fn ? MAX_FUNCTION_LINES : MAX_CLASS_LINES)) out.push({ kind: fn ? 'long function' : 'large class', at: `${file} ${name}`, size: lines });
      }
      ts.forEachChild(node, (c) => visit(c, name));
    };
    visit(sf, '');
  }
  return out;
}

/** The files whose functions and classes are measured. */
export function measuredFiles(root = ROOT): string[] {
  return MEASURED.flatMap((d) => walk(d, isCode, root));
}

/** Functions over the bound (kept for callers that measure functions alone). */
export function longFunctions(files = measuredFiles(), root = ROOT): { at: string; lines: number }[] {
  return oversized(files, root)
    .filter((v) => v.kind === 'long function')
    .map((v) => ({ at: v.at, lines: v.size! }));
}

/** How a suite's modules are declared in suites/order.ts. */
export type SuiteOrders = Record<string, { concurrent: string[]; sequential: string[]; last: string[] }>;

/** Each check module against suites/order.ts: listed once, existing, and sequential where it holds a describe.sequential block. */
export function suiteOrderProblems(order: SuiteOrders, root = ROOT): string[] {
  const out: string[] = [];
  const services = new Set([
    ...Object.keys(order),
    ...readdirSync(path.join(root, 'suites'), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [e.name] : [])),
  ]);
  for (const service of services) {
    const o = order[service] ?? { concurrent: [], sequential: [], last: [] };
    const listed = [...o.concurrent, ...o.sequential, ...o.last];
    const files = walk(`suites/${service}`, (f) => f.endsWith('.checks.ts'), root).map((f) => path.posix.basename(f));
    for (const f of files) if (!listed.includes(f)) out.push(`suites/${service}/${f} is listed nowhere in suites/order.ts`);
    for (const m of new Set(listed)) {
      if (!files.includes(m)) out.push(`suites/order.ts lists suites/${service}/${m}, which does not exist`);
      else if (listed.filter((x) => x === m).length > 1) out.push(`suites/order.ts lists suites/${service}/${m} more than once`);
    }
    for (const m of o.concurrent.filter((m) => files.includes(m)))
      if (readFileSync(path.join(root, 'suites', service, m), 'utf8').includes('describe.sequential('))
        out.push(`suites/${service}/${m} holds a describe.sequential block but is listed as concurrent`);
    for (const m of o.sequential.filter((m) => files.includes(m)))
      if (!readFileSync(path.join(root, 'suites', service, m), 'utf8').includes('describe.sequential('))
        out.push(`suites/${service}/${m} is listed as sequential but holds no describe.sequential block`);
  }
  return out.sort();
}

/** Every violation of the tree at `root`, of every kind. */
export async function violations(root = ROOT): Promise<Violation[]> {
  const graph = importGraph(root);
  const orderFile = path.join(root, 'suites/order.ts');
  const order = existsSync(orderFile) ? ((await import(pathToFileURL(orderFile).href)) as { SUITE_ORDER: SuiteOrders }).SUITE_ORDER : {};
  return [
    ...circles(graph).map((c): Violation => ({ kind: 'import circle', at: c.join(' ⇄ ') })),
    ...upwardArrows(graph).map((at): Violation => ({ kind: 'upward import', at })),
    ...fixturesImports(graph).map((at): Violation => ({ kind: 'product imports fixtures', at })),
    ...unlayered(graph).map((at): Violation => ({ kind: 'unlayered module', at })),
    ...oversized(measuredFiles(root), root),
    ...(existsSync(path.join(root, 'suites')) ? suiteOrderProblems(order, root) : []).map((at): Violation => ({ kind: 'suite order', at })),
  ];
}

export function loadKnown(root = ROOT): KnownViolation[] {
  const file = path.join(root, KNOWN_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { violations: KnownViolation[] }).violations : [];
}

export interface Judgement {
  /** Violations no entry lists. */
  fresh: Violation[];
  /** Listed violations found, within the size listed. */
  known: (Violation & { reason: string })[];
  /** Listed functions or classes that grew past the size listed. */
  grown: (Violation & { listed: number })[];
  /** Entries whose violation is gone: the list must shrink. */
  stale: KnownViolation[];
}

/** The violations found against the known list. */
export function judge(found: Violation[], known: KnownViolation[]): Judgement {
  const key = (v: Violation) => `${v.kind}: ${v.at}`;
  const listed = new Map(known.map((k) => [key(k), k]));
  const j: Judgement = { fresh: [], known: [], grown: [], stale: [] };
  for (const v of found) {
    const k = listed.get(key(v));
    if (!k) j.fresh.push(v);
    else if (v.size !== undefined && k.size !== undefined && v.size > k.size) j.grown.push({ ...v, listed: k.size });
    else j.known.push({ ...v, reason: k.reason });
  }
  const foundKeys = new Set(found.map(key));
  j.stale = known.filter((k) => !foundKeys.has(key(k)));
  return j;
}

/** The command's report and whether it passes (no fresh, grown or stale entry). */
export function report(j: Judgement): { text: string; ok: boolean } {
  const size = (v: Violation) => (v.size === undefined ? '' : ` (${v.size} lines)`);
  const kinds: Kind[] = ['import circle', 'upward import', 'product imports fixtures', 'unlayered module', 'long function', 'large class', 'suite order'];
  const lines = [`bounds: functions ${MAX_FUNCTION_LINES} lines, classes ${MAX_CLASS_LINES} lines, in ${MEASURED.join('/, ')}/; layers and imports in src/`];
  for (const kind of kinds) {
    const fresh = j.fresh.filter((v) => v.kind === kind);
    const grown = j.grown.filter((v) => v.kind === kind);
    const known = j.known.filter((v) => v.kind === kind);
    lines.push(`${kind}: ${fresh.length + grown.length} new, ${known.length} known`);
    for (const v of fresh) lines.push(`  NEW    ${v.at}${size(v)}`);
    for (const v of grown) lines.push(`  GREW   ${v.at}: ${v.size} lines, listed at ${v.listed}`);
    for (const v of known) lines.push(`  known  ${v.at}${size(v)}: ${v.reason}`);
  }
  for (const k of j.stale) lines.push(`STALE  ${k.kind}: ${k.at} is listed in ${KNOWN_FILE} but no longer found: remove the entry`);
  const ok = j.fresh.length + j.grown.length + j.stale.length === 0;
  lines.push(
    ok
      ? `shape: no new violation (${j.known.length} known, listed in ${KNOWN_FILE})`
      : `shape: ${j.fresh.length} new, ${j.grown.length} grown, ${j.stale.length} stale entr${j.stale.length === 1 ? 'y' : 'ies'}`,
  );
  return { text: `${lines.join('\n')}\n`, ok };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const i = process.argv.indexOf('--root');
  const root = i > 0 && process.argv[i + 1] ? path.resolve(process.argv[i + 1]!) : ROOT;
  const r = report(judge(await violations(root), loadKnown(root)));
  process.stdout.write(r.text);
  process.exitCode = r.ok ? 0 : 1;
}
