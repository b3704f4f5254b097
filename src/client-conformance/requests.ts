/**
 * What a feed request asks for, whatever its spelling: the client rules are about resources (poll a resource no
 * faster than its s-maxage, retry the request that was refused), not about query strings. The normalised form
 * applies the parameter defaults of specs/feed/openapi.json, drops parameters the document does not define
 * (a cache-buster is not a new resource), trims `q` as the document does, writes numbers plainly and sorts the
 * rest; the paging parameters (the items cursor, the snapshot page, the changes cursor) are kept. An operation
 * whose parameters the document does not show (the changes feed) keeps all of them, sorted.
 */
import path from 'node:path';
import { readJson, SPECS_DIR, type Profile } from '../spec.js';

interface Param {
  name: string;
  in: string;
  schema?: { default?: unknown; type?: string };
  $ref?: string;
}
interface OpenApi {
  paths: Record<string, { parameters?: Param[]; get?: { parameters?: Param[] } }>;
  components?: { parameters?: Record<string, Param> };
}

interface Operation {
  pattern: RegExp;
  /** Query parameters the document defines, with their defaults; undefined: not shown (all kept). */
  params?: Map<string, { default?: string; type?: string }>;
}

let operations: Operation[] | undefined;
function feedOperations(): Operation[] {
  if (operations) return operations;
  const doc = readJson<OpenApi>(path.join(SPECS_DIR, 'feed', 'openapi.json'));
  const resolve = (p: Param): Param => (p.$ref ? doc.components!.parameters![p.$ref.split('/').pop()!]! : p);
  operations = Object.entries(doc.paths).map(([p, item]) => {
    const pattern = new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const query = [...(item.parameters ?? []), ...(item.get?.parameters ?? [])].map(resolve).filter((q) => q.in === 'query');
    // The changes operation's parameters are not shown: a document that names none leaves them all in the key.
    if (query.length === 0 && p.endsWith('/changes')) return { pattern };
    return {
      pattern,
      params: new Map(query.map((q) => [q.name, { default: q.schema?.default === undefined ? undefined : String(q.schema.default), type: q.schema?.type }])),
    };
  });
  return operations;
}

/** The paging parameter of a feed path: the items cursor, the snapshot page, the changes cursor (profile name). */
export function pagingParam(pathname: string, names?: Profile['feed']): string {
  if (pathname === '/api/v1/selected/snapshot') return 'page';
  if (pathname === '/api/v1/selected/changes') return names?.changes.cursorParam ?? 'cursor';
  return 'cursor';
}

/**
 * The normalised request: method (HEAD reads as GET), path, and the query as the document reads it. With
 * `paging: false` the paging parameter is left out too (the listing, whichever page).
 */
export function feedRequestKey(x: { method: string; url: string }, o: { names?: Profile['feed']; paging?: boolean } = {}): string {
  const u = new URL(x.url, 'http://x.invalid');
  const op = feedOperations().find((p) => p.pattern.test(u.pathname));
  const paging = pagingParam(u.pathname, o.names);
  const q = new Map<string, string>();
  for (const [k, v] of u.searchParams) {
    if (k === paging) {
      if (o.paging !== false) q.set(k, v);
      continue;
    }
    const def = op?.params?.get(k);
    if (op?.params && !def) continue;
    const value = k === 'q' ? v.trim() : def?.type === 'integer' && /^\s*\d+\s*$/.test(v) ? String(Number(v)) : v;
    if (!q.has(k)) q.set(k, value);
  }
  for (const [k, p] of op?.params ?? []) if (p.default !== undefined && !q.has(k)) q.set(k, p.default);
  const query = [...q].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${x.method === 'HEAD' ? 'GET' : x.method} ${u.pathname}?${new URLSearchParams(query).toString()}`;
}
