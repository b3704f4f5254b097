/**
 * The places of the feed's every-response rules (ETag and Cache-Control, s-maxage, If-None-Match answered 304, a
 * 304's headers and empty body): not one request per operation, but each page kind and each parameter value a
 * client can ask for, generated from the OpenAPI description's parameter rules (each enum value, each listed value
 * of a free string, an explicit integer, a search string of the rule's length, the continuation cursor of the next
 * page), and HEAD of every operation. suites/feed/places.checks.ts checks each rule at each place; src/facets.ts
 * lists the same places as facets, with the same check ids.
 */
import { loadOpenApi, operation, kebab, field, type ParameterObject } from './spec.js';
import { CACHING_RULES, FEED_OPERATIONS, PARAMETER_RULE_OPERATIONS, profile } from './feed.js';

export interface FeedPlace {
  /** Unique, in check ids: `list-items-mode-all`, `head-get-story`. */
  slug: string;
  operationId: string;
  method: 'GET' | 'HEAD';
  text: string;
  /** A GET: the path and the query (the continuation parameter, when set, is filled from the previous page). */
  path?: string;
  query?: Record<string, string>;
  /** The query parameter that carries the cursor of the page before, and where that page gives it. */
  follows?: { param: string; from: () => string };
  /** The requirements whose checks judge whether this place answers 200 at all (its parameter's, paging's, access). */
  dependsOn: string[];
  /** A listed current value of a free-string filter (its continuation page is a place too). */
  listed?: true;
}

/** The rules checked at every place (the stability of an ETag over time stays the per-operation checks'). */
export const PLACE_RULES = ['etag-cache-control', 's-maxage', 'conditional-304', '304-headers'] as const;
export type PlaceRule = (typeof PLACE_RULES)[number];
export const placeRequirement = (rule: PlaceRule): string => CACHING_RULES[rule];
export const placeCheckId = (rule: PlaceRule, slug: string): string => `feed-${rule}-at-${slug}`;

/**
 * The continuation parameter of each paged operation, where a page gives the next value, and where it says whether more
 * rows follow (the profile's names, or the document's).
 */
const CONTINUATION: Record<string, { param: string; from: () => string; more: () => string }> = {
  listItems: { param: 'cursor', from: () => profile().items.nextCursor!, more: () => profile().items.hasMore! },
  selectedSnapshot: { param: 'page', from: () => 'nextPage', more: () => 'hasMore' },
};
/**
 * The requirement a continuation value asked for again breaks when it is refused: a client asks for a page again
 * (a retry after 429 or 503, a revalidation with If-None-Match), and the value that was just served must serve again
 * — an items cursor "does not expire" (on use no more than on a timer), a snapshot page value is the page's cursor.
 */
export const AGAIN_REQUIREMENT: Record<string, string> = { listItems: 'feed-items-cursor-no-timer', selectedSnapshot: 'feed-snapshot-paging' };
export const againCheckId = (slug: string): string => `feed-continuation-again-at-${slug}`;
/** The requirement of each paged operation's paging (a continuation page that is not served is its finding). */
const PAGING_REQUIREMENT: Record<string, string> = { listItems: 'feed-items-paging', selectedSnapshot: 'feed-snapshot-paging' };
/** Small pages where the operation pages (every place of it asks for them, so bodies stay small). */
const BASE_QUERY: Record<string, Record<string, string>> = { selectedSnapshot: { limit: '2' } };

export type RuleParameter = ParameterObject & { 'x-requirement'?: string };

function parameterPlaces(operationId: string, path: string, p: RuleParameter): FeedPlace[] {
  const s = p.schema as { enum?: unknown[]; examples?: unknown[]; type?: string; minimum?: number; maximum?: number; minLength?: number };
  const base = BASE_QUERY[operationId] ?? {};
  const at = (value: string, what: string): FeedPlace => ({
    slug: `${kebab(operationId)}-${p.name}-${kebab(value) || 'value'}`,
    operationId,
    method: 'GET',
    path,
    query: { ...base, [p.name]: value },
    text: `${operationId} with ${p.name}=${value} (${what})`,
    dependsOn: [p['x-requirement']!, 'feed-anonymous-access'],
  });
  if (s.enum) return s.enum.map((v) => at(String(v), 'a documented value'));
  if (s.type === 'string' && s.examples) return s.examples.map((v) => ({ ...at(String(v), 'a listed current value'), listed: true }));
  if (s.type === 'integer' && s.minimum !== undefined && s.maximum !== undefined) return [at(String(s.minimum + 1), 'an explicit value')];
  if (s.type === 'string' && s.minLength !== undefined) {
    const place = at('ai'.padEnd(s.minLength, 'i'), 'a search');
    return [{ ...place, slug: `${kebab(operationId)}-${p.name}` }];
  }
  return [];
}

/** Every place, in a stable order: the parameter places of each operation with parameter rules, its continuation page, then HEAD of each operation. */
export async function feedPlaces(): Promise<FeedPlace[]> {
  const doc = await loadOpenApi('feed');
  const out: FeedPlace[] = [];
  for (const operationId of PARAMETER_RULE_OPERATIONS) {
    const { path, op } = operation(doc, operationId);
    const next = CONTINUATION[operationId];
    const mine: FeedPlace[] = [];
    for (const p of (op.parameters ?? []) as RuleParameter[])
      if (p.in === 'query' && p['x-requirement'] && p.name !== next?.param) mine.push(...parameterPlaces(operationId, path, p));
    out.push(...mine);
    if (next) {
      const continuation = (slug: string, query: Record<string, string>, text: string, dependsOn: string[] = []): FeedPlace => ({
        slug,
        operationId,
        method: 'GET',
        path,
        query: { ...query, ...(BASE_QUERY[operationId] ?? { limit: '2' }) },
        follows: next,
        text,
        dependsOn: [PAGING_REQUIREMENT[operationId]!, ...dependsOn, 'feed-anonymous-access'],
      });
      out.push(continuation(`${kebab(operationId)}-continuation`, {}, `${operationId}: a continuation page (${next.param} from the page before)`));
      // A filtered listing's continuation too (the first listed value of a free-string filter): a filter applied on
      // first pages only shows there (the run-wide rules judge the rows of every page the run read).
      const filtered = mine.find((place) => place.listed);
      if (filtered)
        out.push(
          continuation(
            `${filtered.slug}-continuation`,
            filtered.query!,
            `${operationId} with ${new URLSearchParams(filtered.query).toString()}: a continuation page (${next.param} from the page before)`,
            filtered.dependsOn.filter((d) => d !== 'feed-anonymous-access'),
          ),
        );
    }
  }
  for (const o of FEED_OPERATIONS)
    out.push({
      slug: `head-${kebab(o.operationId)}`,
      operationId: o.operationId,
      method: 'HEAD',
      text: `HEAD of ${o.operationId}`,
      dependsOn: ['feed-anonymous-access'],
    });
  return out;
}

/** The check of every default of an operation under one context parameter (parameters.checks.ts; facets). */
export const defaultsCheckId = (operationId: string, context: string): string => `feed-param-${kebab(operationId)}-defaults-with-${context}`;

/** Whether an operation pages (its pages say whether more rows follow). */
export const isPaged = (operationId: string): boolean => operationId in CONTINUATION;

/**
 * Whether a page of a paged operation says more rows follow (hasMore true: a continuation value alone is not that, a
 * deployment may hand one out on its last page too); false for an operation that does not page.
 */
export function morePages(operationId: string, body: unknown): boolean {
  const paged = CONTINUATION[operationId];
  return !!paged && field(body, paged.more()) === true;
}

/** The continuation value a first page gives, or undefined (its body not JSON, or no next page). */
export function nextOf(place: FeedPlace, body: string): string | undefined {
  try {
    const v = field(JSON.parse(body), place.follows!.from());
    return typeof v === 'string' && v !== '' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * "Each default holds whatever the other parameters are": the places a default is checked under. For a parameter
 * with a default, every other rule parameter of its operation that chooses what is listed (not the continuation
 * one, not the page size, which only cuts the same listing shorter) at one value that is not its own default: an
 * enum's first other value, a free string's first listed value, a search string of the rule's length. A table's
 * default is unconditional, so omitting the parameter under any of them is the same as sending its default there.
 * Each context is the query of a place (src/places.ts parameterPlaces, a search aside), so its request is shared.
 */
export interface DefaultContext {
  name: string;
  value: string;
  /** The context parameter's own rule: whether the operation serves that value is its checks' finding. */
  requirement: string;
  /** A search string: the check searches for a word the feed's own first page shows most (`value` when none). */
  search?: true;
}
export function defaultContexts(operationId: string, params: RuleParameter[], name?: string): DefaultContext[] {
  const out: DefaultContext[] = [];
  for (const p of params) {
    if (p.in !== 'query' || !p['x-requirement'] || p.name === name || p.name === CONTINUATION[operationId]?.param || p.schema.type === 'integer') continue;
    const s = p.schema as { enum?: unknown[]; examples?: unknown[]; type?: string; minLength?: number; default?: unknown };
    const at = (value: unknown, search?: true) => out.push({ name: p.name, value: String(value), requirement: p['x-requirement']!, ...(search && { search }) });
    const other = s.enum?.find((v) => v !== s.default);
    if (other !== undefined) at(other);
    else if (s.type === 'string' && s.examples?.length) at(s.examples[0]);
    else if (s.type === 'string' && s.minLength !== undefined) at('ai'.padEnd(s.minLength, 'i'), true);
  }
  return out;
}
