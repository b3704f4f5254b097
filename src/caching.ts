/** HTTP caching semantics the feed checks rely on (RFC 9110 / RFC 9111). */

/** Entity-tag grammar: [W/] DQUOTE *etagc DQUOTE. */
export const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7E\x80-\xFF]*"$/;

export function isWeak(etag: string): boolean {
  return etag.startsWith('W/');
}

/** Weak comparison: the opaque tags match, whether either is weak or not. */
export function weakMatch(a: string, b: string): boolean {
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return opaque(a) === opaque(b);
}

/** Cache-Control directives, lowercased names; a directive without a value maps to true. */
export function parseCacheControl(value: string): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (const part of value.split(',')) {
    const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*(?:"([^"]*)"|([^,\s]*)))?\s*$/.exec(part);
    if (m) out.set(m[1]!.toLowerCase(), m[2] ?? m[3] ?? true);
  }
  return out;
}

/** Every value a directive is given in a Cache-Control (lowercased names; true for one without a value), in order. */
export function directiveValues(value: string, name: string): (string | true)[] {
  return value.split(',').flatMap((part) => {
    const d = parseCacheControl(part);
    return d.has(name) ? [d.get(name)!] : [];
  });
}

/**
 * The s-maxage delta-seconds, or undefined when absent, not a non-negative integer, or given twice with two values
 * (RFC 9111 4.2.1: a cache may then take the response as stale; the freshness it states is not one number).
 */
export function sMaxAge(cacheControl: string | undefined): number | undefined {
  if (!cacheControl) return undefined;
  const values = new Set(directiveValues(cacheControl, 's-maxage'));
  const v = values.size === 1 ? [...values][0] : undefined;
  return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** A day: the longest a cache may keep the daily archive or the latest report without asking again, a report coming every day. */
const DAY_SECONDS = 86_400;

/** What in a Cache-Control keeps a cache from asking again within a day: `immutable`, or a freshness lifetime longer than a day. */
export function staleForADay(cc: string): string[] {
  const d = parseCacheControl(cc);
  const out: string[] = [];
  if (d.has('immutable')) out.push('immutable (the response will not change)');
  for (const name of ['s-maxage', 'max-age']) {
    const v = d.get(name);
    if (typeof v === 'string' && /^\d+$/.test(v) && Number(v) > DAY_SECONDS) out.push(`${name}=${v} (fresh for more than a day)`);
  }
  return out;
}
