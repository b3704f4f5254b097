/**
 * content-feed-service.md — Endpoints: every documented parameter rule, generated from specs/feed/openapi.json.
 * For each bounded query parameter: values inside the rule (boundaries included) are accepted, values outside it
 * (and, for an enum, the values next to the allowed ones) are rejected with 400, and omitting it equals sending its default. Nothing here restates a
 * rule: enums, bounds, trimming and defaults all come from the OpenAPI description.
 */
import { check, expect, precondition, PreconditionFailed, checkGroup, type CheckTools } from '../../src/harness.js';
import { defaultContexts, defaultsCheckId, morePages, type DefaultContext } from '../../src/places.js';
import { field, loadOpenApi, operation, type ParameterObject } from '../../src/spec.js';
import {
  commonTitleWord,
  compareLive,
  DEFAULTS_REQUIREMENT,
  feedGet,
  listOf,
  paramCheckId,
  PARAMETER_RULE_OPERATIONS,
  profile,
  sharedGet,
} from '../../src/feed.js';
import {
  boundaries,
  invalidEnumValues,
  invalidIntegers,
  invalidStrings,
  nearMissEnumValues,
  property,
  validIntegers,
  validStrings,
} from '../../src/generate.js';
import type { HttpResponse } from '../../src/http.js';

/**
 * A rejected value answers 400. Only the status is these checks' requirement: the problem format of every error
 * (problem+json, X-Request-Id) is asserted by the checks citing those requirements.
 */
/** A listing's JSON body; a 200 that is not JSON is feed-success-json's finding (its own check reports it). */
/**
 * What a parameter's default decides, as a comparable key: which entries, in which order, with which fields. Each
 * entry by its id and its field names (values aside: a live feed edits its items between two requests; an entry
 * without an id whole), so edits never look like a difference and a busy writer rarely makes the listing "moving".
 */
function defaultKey(r: HttpResponse, listPath: string): string {
  if (r.status !== 200) return `status ${r.status}`;
  const id = profile().items.id!;
  const entry = (e: unknown) =>
    e !== null && typeof e === 'object' && !Array.isArray(e) && field(e, id) !== undefined ? [field(e, id), Object.keys(e).sort()] : e;
  const body = listingJson(r);
  // Whether the page says more follow (hasMore): the same rows with the paging cut short are not the same answer. The
  // cursor is not compared (it may carry the query as it was spelled), nor whether one is given (hasMore true without
  // one is the paging rule's finding).
  const more = [profile().items.hasMore!, 'hasMore'].map((h) => field(body, h) ?? null);
  return JSON.stringify([listOf(body, listPath).map(entry), more]);
}

function listingJson(res: HttpResponse): unknown {
  try {
    return JSON.parse(res.body);
  } catch {
    throw new PreconditionFailed(`the 200 body of ${res.url} is not JSON`, ['feed-success-json']);
  }
}

/** The If-None-Match a request was sent with, if any. */
const sentValidator = (res: HttpResponse): string | undefined => res.attempts[0]?.requestHeaders?.['if-none-match'];

function expectRejected(res: HttpResponse, value: unknown): void {
  const inm = sentValidator(res);
  expect(
    res.status,
    `${JSON.stringify(value)}, a value the rule refuses${inm ? ` (sent with If-None-Match: ${inm}, as a client that always sends its validator asks: a refused request has no representation a 304 could confirm)` : ''}`,
  ).toBe(400);
}

/** The word (3 code points or more) the most titles of the operation's first page show, or undefined. */
async function commonWord(path: string, listPath: string): Promise<string | undefined> {
  const plain = await sharedGet(path);
  if (plain.status !== 200) return undefined;
  return commonTitleWord(listOf(listingJson(plain), listPath), { lowerCase: true });
}

/**
 * Omitting the parameters `defaults` lists what sending them at their defaults lists, under another parameter's value
 * `c` (none: the bare request). The two requests are compared as a live feed allows: the listing may move on between
 * two requests (compareLive tells that from a real difference). Control: the operation answers 200 under the context
 * alone (whether it does is the anonymous-access check's, or, under a context, that parameter's own rule's). Under a
 * context every default is sent at once; on a difference each is sent alone to name the one that does not hold.
 */
async function sameAsDefaults(
  t: CheckTools,
  path: string,
  listPath: string,
  defaults: Record<string, string>,
  limitRequirement: string | undefined,
  c?: DefaultContext,
): Promise<void> {
  const list = (r: HttpResponse) => defaultKey(r, listPath);
  // A search for a word the feed shows most: it finds more entries than the default page size where the feed holds them.
  const v = c?.search ? ((await commonWord(path, listPath)) ?? c.value) : c?.value;
  const context: Record<string, string> = c ? { [c.name]: v! } : {};
  const under = c ? ` with ${c.name}=${v!}` : '';
  const sent = Object.entries(defaults)
    .map(([k, x]) => `${k}=${x}`)
    .join('&');
  // The request under the context alone is asked once (the place of that value asks it too).
  const plainFirst = await sharedGet(path, context);
  const control = c ? [c.requirement] : ['feed-anonymous-access'];
  precondition(plainFirst.status === 200, `GET ${path}${under} answered ${plainFirst.status}, not 200`, ...control);
  const cmp = await compareLive(
    (x) => feedGet(path, { query: context, ...x }),
    (x) => feedGet(path, { query: { ...context, ...defaults }, ...x }),
    list,
    { firstA: plainFirst },
  );
  t.cite(...cmp.responses);
  const { first: plain, second: explicit } = cmp;
  expect([plain.status, explicit.status], `the statuses without and with ${sent}${under}`).toEqual([200, 200]);
  if (cmp.outcome === 'same') return;
  if (cmp.outcome === 'moving')
    throw new PreconditionFailed(
      `the listing changed between every two requests, each sent at once after the other (${cmp.responses.length} requests): the feed changes faster than the comparison can finish`,
    );
  // An explicit limit that is not honored is the limit rule's defect, which its range check reports, not the default's.
  const n = listOf(listingJson(explicit), listPath).length;
  if (limitRequirement && defaults.limit !== undefined && n > Number(defaults.limit))
    throw new PreconditionFailed(`limit=${defaults.limit} returned ${n} entries: the value is not honored`, [limitRequirement!]);
  // Which default does not hold: each sent alone (only when they differ, so a conformant run asks nothing more).
  const names = Object.keys(defaults);
  const culprits: string[] = [];
  if (names.length > 1)
    for (const k of names) {
      const one = await feedGet(path, { query: { ...context, [k]: defaults[k]! }, continuation: true });
      t.cite(one);
      if (list(one) !== list(plain)) culprits.push(`${k}=${defaults[k]!}`);
    }
  const which = culprits.length ? ` (sent alone, ${culprits.join(', ')} differ${culprits.length === 1 ? 's' : ''})` : '';
  expect(list(explicit), `${sent}${under} lists what the request without them lists${which}`).toBe(list(plain));
}

const doc = await loadOpenApi('feed');
/** The field names of the description's records (Item, HotTopic, ...): values a client may send by mistake. */
const DOCUMENTED_FIELDS = [
  ...new Set(
    Object.values((doc as { components?: { schemas?: Record<string, { properties?: object }> } }).components?.schemas ?? {}).flatMap((x) =>
      Object.keys(x.properties ?? {}),
    ),
  ),
];

/** Operations with bounded query parameters, and where their list is (profile) so a limit can be checked. */
const OPERATIONS = [
  // Accepted values beyond both boundaries (always tried): six a run, each a request a remote target answers (the remote
  // budget of 600 feed requests holds the run's other checks too; --runs lowers them, a seed replays them).
  { operationId: 'listItems', list: () => profile().items.list!, runs: 6 },
  { operationId: 'listDailies', list: () => profile().dailies.list!, runs: 6 },
  // Snapshot pages may carry up to 1000 items: fewer runs.
  { operationId: 'selectedSnapshot', list: () => profile().snapshot.list!, runs: 4 },
];

if (OPERATIONS.map((o) => o.operationId).join() !== PARAMETER_RULE_OPERATIONS.join())
  throw new Error('parameters.checks.ts: OPERATIONS must list PARAMETER_RULE_OPERATIONS');

/**
 * The bounds hold whatever the other parameters are: a bound next to each other enumerated parameter's other value
 * (mode=all, window=24h, by=published, fields=minimal), where a deployment may configure a bound per mode or per view.
 */
function boundsCheck(id: string, path: string, name: string, req: string, bounds: number[], contexts: DefaultContext[], list: string): void {
  if (contexts.length === 0) return;
  check(
    {
      id,
      title: `${bounds.map((n) => `${name}=${n}`).join(' and ')} are accepted next to ${contexts.map((c) => `${c.name}=${c.value}`).join(', ')}`,
      requirements: [req],
    },
    (t) => boundsNextToOtherValues(t, path, name, bounds, contexts, list),
  );
}

/**
 * Each bound of an integer parameter next to each other parameter's other value: served (200), and a limit honoured.
 * A context value refused alone is that parameter's own checks' finding: the bound is not judged next to it.
 */
async function boundsNextToOtherValues(t: CheckTools, path: string, name: string, bounds: number[], contexts: DefaultContext[], list: string): Promise<void> {
  let judged = 0;
  for (const c of contexts) {
    for (const n of bounds) {
      const res = await feedGet(path, { query: { [c.name]: c.value, [name]: n } });
      t.cite(res);
      if (res.status !== 200) {
        const alone = await feedGet(path, { query: { [c.name]: c.value } });
        t.cite(alone);
        if (alone.status !== 200) break;
      }
      judged++;
      expect(res.status, `${name}=${n} with ${c.name}=${c.value}`).toBe(200);
      if (name === 'limit') expect(listOf(listingJson(res), list).length, `items returned for limit=${n} with ${c.name}=${c.value}`).toBeLessThanOrEqual(n);
    }
  }
  t.observe('requests judged', String(judged));
  if (judged === 0) t.notApplicable(`no other value of ${contexts.map((c) => c.name).join(', ')} was served alone (their own checks' finding)`);
}

/** The in-range check of one integer parameter: what it requests and reads. */
interface InRange {
  path: string;
  o: (typeof OPERATIONS)[number];
  name: string;
  s: ParameterObject['schema'];
  get: (v: number) => Promise<HttpResponse>;
}

/** Values in range are accepted; a page size is honoured (at most that many rows, and the largest not cut: limitHonoured). */
async function inRange(t: CheckTools, c: InRange): Promise<void> {
  const { o, name, s } = c;
  let atMaximum: HttpResponse | undefined;
  await property(
    validIntegers(s),
    async (n) => {
      const res = await c.get(n);
      expect(res.status, `${name}=${n}`).toBe(200);
      if (name === 'limit') expect(listOf(listingJson(res), o.list()).length, `items returned for limit=${n}`).toBeLessThanOrEqual(n);
      if (n === s.maximum) atMaximum = res;
    },
    { runs: o.runs, examples: boundaries(s, 'valid') as number[] },
  );
  if (name === 'limit' && atMaximum) await limitHonoured(t, c, atMaximum);
}

/**
 * The largest page size is served, not a smaller one in its place: a page asked with the maximum `limit` that says more
 * rows follow (hasMore) yet holds no more than the default page size, and asked again with one row more than it held
 * holds the same count again (and says more follow), is cut at a cap below the documented maximum (a framework's or
 * the items' own maximum). A deployment that drops rows after reading them (hidden or filtered rows) gives another
 * count for another limit unless a block of more rows than the default page is hidden right after the page's rows;
 * a page that says it is the last is not judged.
 */
async function limitHonoured(t: CheckTools, { path, o, s }: InRange, atMaximum: HttpResponse): Promise<void> {
  const maximum = s.maximum!;
  const rows = (res: HttpResponse) => listOf(listingJson(res), o.list()).length;
  const held = rows(atMaximum);
  if (!morePages(o.operationId, listingJson(atMaximum)) || typeof s.default !== 'number' || held < 1 || held > s.default || held + 1 >= maximum) return;
  const oneMore = await sharedGet(path, { limit: String(held + 1) });
  t.cite(atMaximum, oneMore);
  if (oneMore.status === 200 && morePages(o.operationId, listingJson(oneMore)) && rows(oneMore) === held)
    t.violation(
      `limit=${maximum} gave ${held} rows and said more follow, and limit=${held + 1} gave ${held} again: the page size is capped at ${held}, below the documented maximum ${maximum}`,
    );
}

for (const o of OPERATIONS) {
  const { path, op } = operation(doc, o.operationId);
  const params = (op.parameters ?? []).filter((p): p is ParameterObject & { 'x-requirement': string } => p.in === 'query' && !!p['x-requirement']);

  // The page size's own rule: a limit that is not honored is its finding, not a default's.
  const limitRequirement = params.find((p) => p.name === 'limit')?.['x-requirement'];
  checkGroup(`${o.operationId}: parameter rules`, () => {
    for (const p of params) {
      const s = p.schema;
      const req = p['x-requirement'];
      const id = paramCheckId(o.operationId, p.name);
      const get = async (value: string | number, o: { validator?: boolean } = {}) => {
        // Control: the operation answers 200 without the parameter, so a refusal of everything is not read as a
        // verdict on the parameter's rule (whether it answers 200 is the anonymous-access check's requirement).
        const plain = await sharedGet(path);
        precondition(plain.status === 200, `GET ${path} answered ${plain.status} without parameters, not 200`, 'feed-anonymous-access');
        // "Clients should always send If-None-Match": with `validator`, the one the plain request's 200 gave (a client
        // that polls the operation holds it). A value the rule refuses is still refused: no representation of that
        // request exists for a 304 to confirm (RFC 9110 13.2.1: a response that would not be a 2xx ignores preconditions).
        const etag = o.validator ? plain.header('etag') : undefined;
        return etag ? feedGet(path, { query: { [p.name]: value }, headers: { 'if-none-match': etag } }) : sharedGet(path, { [p.name]: String(value) });
      };
      // Every other refused value is asked with the validator: the rule holds for the client the document describes
      // and for one that sends none.
      const refused = () => {
        let n = 0;
        return (value: string | number) => get(value, { validator: n++ % 2 === 1 });
      };

      if (s.enum) {
        check({ id: `${id}-each-value`, title: `${p.name} accepts each documented value (${s.enum.join(', ')})`, requirements: [req] }, async () => {
          for (const v of s.enum!) {
            const res = await get(String(v));
            expect(res.status, `${p.name}=${String(v)}`).toBe(200);
          }
        });
        check({ id: `${id}-other-values`, title: `${p.name} outside ${s.enum.join(' | ')} is rejected with 400`, requirements: [req] }, async () => {
          // Two random ones: the values next to the allowed ones are tried in full below (the request budget).
          const ask = refused();
          await property(invalidEnumValues(s), async (v) => expectRejected(await ask(v), v), { runs: 2 });
        });
        // Next to the allowed ones too: the value the first other enumerated parameter takes besides its default (window=all).
        const borrowed = defaultContexts(o.operationId, params, p.name)
          .filter((c) => params.some((q) => q.name === c.name && q.schema.enum) && !s.enum!.map(String).includes(c.value))
          .map((c) => c.value)
          .slice(0, 1);
        // And a documented field whose name an allowed value begins (by=publishedAt): the field, not the rule's value.
        const fieldNames = DOCUMENTED_FIELDS.filter((k) => s.enum!.some((v) => k !== String(v) && k.toLowerCase().startsWith(String(v).toLowerCase())));
        const near = [...new Set([...nearMissEnumValues(s), ...borrowed, ...fieldNames])];
        check(
          {
            id: `${id}-near-misses`,
            title: `${p.name} values next to ${s.enum.join(' | ')} (other case, padded, empty, a neighbouring value, another parameter's value) are rejected with 400`,
            requirements: [req],
          },
          async (t) => {
            t.observe('values tried', near.map((v) => JSON.stringify(v)).join(' '));
            const accepted: string[] = [];
            const ask = refused();
            for (const v of near) {
              const res = await ask(v);
              const inm = sentValidator(res);
              if (res.status !== 400) accepted.push(`${p.name}=${JSON.stringify(v)}${inm ? ` (with If-None-Match: ${inm})` : ''} answered ${res.status}`);
            }
            if (accepted.length) t.violation(`values next to the allowed ones must be rejected with 400: ${accepted.join('; ')}`);
          },
        );
      }

      if (s.type === 'integer' && s.minimum !== undefined && s.maximum !== undefined) {
        check({ id: `${id}-in-range`, title: `${p.name} from ${s.minimum} to ${s.maximum} is accepted`, requirements: [req] }, (t) =>
          inRange(t, { path, o, name: p.name, s, get }),
        );
        // Both bounds next to each other enumerated value: a bound configured per mode or per view, or a limit one mode
        // does not apply (the smallest shows it: a page of more rows), one request each.
        const enumContexts = defaultContexts(o.operationId, params, p.name).filter((c) => params.some((q) => q.name === c.name && q.schema.enum));
        boundsCheck(`${id}-bounds-next-to-other-values`, path, p.name, req, [s.minimum!, s.maximum!], enumContexts, o.list());
        check(
          { id: `${id}-out-of-range`, title: `${p.name} outside ${s.minimum}..${s.maximum}, or not an integer, is rejected with 400`, requirements: [req] },
          async () => {
            const ask = refused();
            await property(invalidIntegers(s), async (v) => expectRejected(await ask(v), v), {
              runs: 4,
              examples: boundaries(s, 'invalid') as string[],
            });
          },
        );
      }

      if (s.type === 'string' && s.minLength !== undefined && s.maxLength !== undefined) {
        const trimmed = s['x-trim'] ? ' after trimming' : '';
        check(
          { id: `${id}-in-range`, title: `${p.name} of ${s.minLength} to ${s.maxLength} code points${trimmed} is accepted`, requirements: [req] },
          async () => {
            await property(validStrings(s), async (v) => expect((await get(v)).status, `${p.name}=${JSON.stringify(v)}`).toBe(200), {
              runs: 3,
              examples: boundaries(s, 'valid') as string[],
            });
          },
        );
        check(
          {
            id: `${id}-out-of-range`,
            title: `${p.name} shorter than ${s.minLength} or longer than ${s.maxLength} code points${trimmed} is rejected with 400`,
            requirements: [req],
          },
          async () => {
            const ask = refused();
            await property(invalidStrings(s), async (v) => expectRejected(await ask(v), v), { runs: 3, examples: boundaries(s, 'invalid') as string[] });
          },
        );
      }

      if (s.default !== undefined) {
        // The operation's own defaults requirement when it has one (items), else the parameter's rule: one requirement per check.
        const reqs = [DEFAULTS_REQUIREMENT[o.operationId] ?? req];
        check({ id: `${id}-default`, title: `omitting ${p.name} is the same as ${p.name}=${String(s.default)}`, requirements: reqs }, (t) =>
          sameAsDefaults(t, path, o.list(), { [p.name]: String(s.default) }, limitRequirement),
        );
      }
    }
    // A table default is unconditional: every default holds whatever the other parameters are (one value of each).
    for (const c of defaultContexts(o.operationId, params)) {
      const defaulted = params.filter((p) => p.name !== c.name && p.schema.default !== undefined);
      if (defaulted.length === 0) continue;
      const defaults = Object.fromEntries(defaulted.map((p) => [p.name, String(p.schema.default)]));
      const reqs = DEFAULTS_REQUIREMENT[o.operationId] ? [DEFAULTS_REQUIREMENT[o.operationId]!] : defaulted.map((p) => p['x-requirement']);
      const sent = defaulted.map((p) => `${p.name}=${String(p.schema.default)}`).join(', ');
      check(
        {
          id: defaultsCheckId(o.operationId, c.name),
          title: `with ${c.name}=${c.search ? 'a word the first page shows most' : c.value}, omitting ${defaulted.map((p) => p.name).join(', ')} is the same as ${sent}`,
          requirements: reqs,
        },
        (t) => sameAsDefaults(t, path, o.list(), defaults, limitRequirement, c),
      );
    }
  });
}

checkGroup('listItems: category', () => {
  // Each value the document lists as current (the OpenAPI parameter's examples) is served: a stale list that refuses one is a departure.
  const listed =
    (((operation(doc, 'listItems').op.parameters ?? []) as ParameterObject[]).find((p) => p.name === 'category')?.schema.examples as unknown[] | undefined) ??
    [];
  check(
    {
      id: 'feed-param-list-items-category-each-current-value',
      title: `category accepts each current value (${listed.join(', ')})`,
      requirements: ['feed-items-category-free'],
    },
    async (t) => {
      const plain = await sharedGet('/api/v1/items');
      precondition(plain.status === 200, `GET /api/v1/items answered ${plain.status} without parameters, not 200`, 'feed-anonymous-access');
      const refused: string[] = [];
      for (const v of listed) {
        const res = await sharedGet('/api/v1/items', { category: String(v) });
        if (res.status !== 200) refused.push(`category=${String(v)} answered ${res.status}`);
      }
      if (refused.length) t.violation(`each current value is to be served: ${refused.join('; ')}`);
    },
  );

  check(
    {
      id: 'feed-param-list-items-category-free',
      title: 'category is a free string: a value outside the current list is accepted',
      requirements: ['feed-items-category-free'],
    },
    async (t) => {
      const plain = await sharedGet('/api/v1/items');
      precondition(plain.status === 200, `GET /api/v1/items answered ${plain.status} without parameters, not 200`, 'feed-anonymous-access');
      const res = await feedGet('/api/v1/items', { query: { category: 'conformance-unlisted' } });
      t.observe('unlisted category', String(res.status));
      expect(res.status, 'an unlisted category').toBe(200);
      // A free string: with a space, and in another script, too.
      for (const v of ['conformance unlisted', 'conformance-未列出']) {
        const other = await feedGet('/api/v1/items', { query: { category: v } });
        t.cite(other);
        expect(other.status, `an unlisted category ${JSON.stringify(v)}`).toBe(200);
      }
      // Free whatever the other parameters are: with each enumerated parameter at its other value (mode=all, ...).
      const items = operation(doc, 'listItems');
      const rules = (items.op.parameters ?? []) as (ParameterObject & { 'x-requirement'?: string })[];
      for (const c of defaultContexts('listItems', rules, 'category').filter((x) => rules.some((q) => q.name === x.name && q.schema.enum))) {
        const under = await feedGet('/api/v1/items', { query: { category: 'conformance-unlisted', [c.name]: c.value } });
        t.cite(under);
        t.observe(`unlisted category with ${c.name}=${c.value}`, String(under.status));
        if (under.status !== 200) {
          // Refused: is it the category, or the other value itself (its own rule's finding, c.requirement)?
          const alone = await feedGet('/api/v1/items', { query: { [c.name]: c.value } });
          t.cite(alone);
          if (alone.status !== 200) {
            t.observe(`unlisted category with ${c.name}=${c.value}`, `not judged: ${c.name}=${c.value} alone answered ${alone.status} (${c.requirement})`);
            continue;
          }
        }
        expect(under.status, `an unlisted category with ${c.name}=${c.value}`).toBe(200);
      }
    },
  );
});
