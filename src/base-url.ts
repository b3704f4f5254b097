/**
 * Paths under a base URL. A deployment may be served under a path prefix (a feed at https://host/feed, behind
 * `location /feed/` of a proxy; a gateway at https://host/llm): the base URL's own path is then a prefix of every
 * documented path. Every URL the suite builds from a documented path is made by underBase, and every documented
 * path read back from a recorded URL is taken off by pathUnderBase, so no check compares a raw pathname.
 */

/** The URL of `path` (a documented path, "/api/v1/items") under `base` ("https://host/feed"). */
export function underBase(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path.startsWith('/') ? '' : '/'}${path}`;
}

/** scheme://host[:port], a ws(s): URL as its http(s): twin (a realtime handshake is made on the base URL's origin). */
const originOf = (u: URL) => `${u.protocol.replace(/^ws/, 'http')}//${u.host}`;

/**
 * The documented path of a URL sent to the deployment at `base`, without the query: "/api/v1/items" for
 * https://host/feed/api/v1/items?limit=1 under https://host/feed. Undefined for a URL on another origin or outside
 * the base path (https://host/api/v1/items under https://host/feed is not the feed's).
 */
export function pathUnderBase(base: string, url: string): string | undefined {
  const key = `${base} ${url}`;
  if (UNDER.has(key)) return UNDER.get(key);
  const p = pathNow(base, url);
  if (UNDER.size >= 20_000) UNDER.clear();
  UNDER.set(key, p);
  return p;
}
/** The paths taken so far (a run asks for the path of each recorded URL again and again: URL parsing was 0.25 s of a feed run). */
const UNDER = new Map<string, string | undefined>();
function pathNow(base: string, url: string): string | undefined {
  let u: URL;
  let b: URL;
  try {
    u = new URL(url);
    b = new URL(base);
  } catch {
    return undefined;
  }
  if (originOf(u) !== originOf(b)) return undefined;
  const prefix = b.pathname.replace(/\/+$/, '');
  if (u.pathname !== prefix && !u.pathname.startsWith(`${prefix}/`)) return undefined;
  return u.pathname.slice(prefix.length) || '/';
}
