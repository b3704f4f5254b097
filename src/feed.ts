/**
 * The feed suite's view of the target: requests that keep the feed's client rules, and discovery of real ids
 * (story ids, daily dates, snapshot cursors) from the target's own answers. Nothing is guessed: a check whose
 * input cannot be discovered ends as a setup error.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { http, once, runContext, serviceUrl } from './context.js';
import { clientRules, field, kebab } from './spec.js';
import { attributeHere, type HttpResponse, type SendOptions } from './http.js';
import { AssertionViolation, NotConfigured, PreconditionFailed, jsonBody } from './harness.js';

const rules = clientRules('feed');

/** The URL of a documented path on the feed, under the base URL's path prefix if any (context.ts serviceUrl). */
export function feedUrl(path: string): string {
  return serviceUrl('feed', path);
}

/**
 * A GET of the feed under its client rules: a documented path ("/api/v1/items"), or a URL the target gave, already
 * resolved (a redirect's Location, resolved against the request URL). A request that carries a cursor (the items
 * listing's, or the changes feed's) is a continuation: it goes before requests not sent yet (SendOptions.continuation).
 */
export function feedGet(path: string | URL, o: Omit<SendOptions, 'rules' | 'service'> & { again?: boolean } = {}): Promise<HttpResponse> {
  const { again = readingAgainScope.getStore() === true, ...send } = o;
  if (again) {
    if (readAgain.sent >= READ_AGAIN_AT_MOST) return Promise.reject(new NotConfigured(READ_AGAIN_SPENT, 'not applicable'));
    readAgain.sent++;
  }
  const cursorParams = ['cursor', runContext().profile.feed.changes.cursorParam];
  const continuation = send.continuation ?? Object.keys(send.query ?? {}).some((k) => cursorParams.includes(k));
  return http().send(typeof path === 'string' ? feedUrl(path) : path.href, { ...send, rules, service: 'feed', continuation });
}

/** The remote budget (README): a full run sends at most this many feed requests. */
export const FEED_BUDGET = 600;
/**
 * The requests a run sends only because the target moved while a check read it (`again`: a comparison or a
 * revalidation tried again, a mirror compared again, a page after arrivals asked again, a changes feed read a third
 * time to catch up): at most this many in a run, so that what a check reads again does not grow with how often the
 * target changes during the run. A check that needs one more is then not applicable (READ_AGAIN_SPENT): the target
 * moved more often than the budget lets the suite look again, never a failure. (A changes backlog is read to its end,
 * ten pages at most per read: the procedure itself, not a look again.)
 */
export const READ_AGAIN_AT_MOST = 40;
const readAgain = { sent: 0 };
export const READ_AGAIN_SPENT = `the target kept moving while this was read, and the run's ${READ_AGAIN_AT_MOST} requests for reading again (the remote budget of ${FEED_BUDGET} feed requests) were spent`;
const readingAgainScope = new AsyncLocalStorage<boolean>();
/** Run `f` with each feed request it sends counted as reading again (READ_AGAIN_AT_MOST); `when` false: as it is. */
export const readingAgain = <T>(when: boolean, f: () => Promise<T>): Promise<T> => (when ? readingAgainScope.run(true, f) : f());

export { once };

/** The once key of a plain GET of `path` with `query` (sharedGet). */
const getKey = (path: string, query: Record<string, string> = {}): string =>
  `plain:${path}${Object.keys(query).length ? `?${new URLSearchParams(query).toString()}` : ''}`;

/**
 * A plain GET (no validator, no other header) whose one answer every check that judges only that answer shares: the
 * places' first requests, the parameter rules' accepted values, the default checks' contexts. Asked once per run
 * (the remote budget), and attributed as evidence to each check that reads it. Checks that watch a resource change,
 * or compare two answers asked one after the other, send their own requests.
 */
export async function sharedGet(path: string, query: Record<string, string> = {}): Promise<HttpResponse> {
  const res = await once(getKey(path, query), () => feedGet(path, Object.keys(query).length ? { query } : {}));
  attributeHere(res);
  return res;
}

function lastSegment(url: string): string | undefined {
  try {
    const parts = new URL(url).pathname.split('/').filter(Boolean);
    return parts.length ? decodeURIComponent(parts[parts.length - 1]!) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A body read only to discover an input (an id, a date, a cursor): not JSON gives nothing to discover (undefined),
 * and the JSON body check reports it, so the checks that needed the input end undecided rather than failed.
 */
export function discoveryJson(res: HttpResponse): unknown {
  try {
    return JSON.parse(res.body);
  } catch {
    return undefined;
  }
}

/** Story ids the target itself names: hot-topic story links, then the references of those stories. */
export function discoveredStoryIds(): Promise<{ ids: string[]; evidence: HttpResponse[] }> {
  return once('story-ids', async () => {
    const p = runContext().profile.feed;
    const res = await feedGet('/api/v1/hot-topics');
    const evidence = [res];
    if (res.status !== 200) return { ids: [], evidence };
    const list = field(discoveryJson(res), p.hotTopics.list!);
    const ids = new Set<string>();
    for (const entry of Array.isArray(list) ? list : []) {
      const link = field(entry, p.hotTopics.storyLink!);
      const id = typeof link === 'string' ? lastSegment(link) : undefined;
      if (id) ids.add(id);
    }
    return { ids: [...ids], evidence };
  });
}

/** A story id the target names that is not merged or missing (normally one answering 200). */
export function liveStory(): Promise<{ id: string; evidence: HttpResponse[] }> {
  return once('live-story', async () => {
    const { ids, evidence } = await discoveredStoryIds();
    for (const id of ids.slice(0, 4)) {
      const res = await storyResponse(id);
      evidence.push(res);
      // The first story that is neither merged nor missing: a 200, or whatever error the story endpoint gives.
      if (res.status < 300 || res.status >= 400) {
        if (res.status !== 404) return { id, evidence };
      }
    }
    throw new PreconditionFailed('setup error (precondition): no hot topic links a story the story endpoint serves, so no story id is known');
  });
}

/** The newest date of the daily archive. */
export function archiveDate(): Promise<{ date: string; evidence: HttpResponse[] }> {
  return once('archive-date', async () => {
    const p = runContext().profile.feed;
    const res = await feedGet('/api/v1/dailies', { query: { limit: 1 } });
    const list = res.status === 200 ? field(discoveryJson(res), p.dailies.list!) : undefined;
    const date = Array.isArray(list) ? field(list[0], p.dailies.date!) : undefined;
    if (typeof date !== 'string')
      throw new PreconditionFailed(`setup error (precondition): /api/v1/dailies?limit=1 gave no archive date (status ${res.status})`);
    return { date, evidence: [res] };
  });
}

/** The sync cursor of a one-page snapshot asked now (`query`: limit=1 by default), for the changes endpoint. */
export async function takeSnapshotCursor(query: SendOptions['query'] = { limit: 1 }): Promise<{ cursor: string; evidence: HttpResponse[] }> {
  const res = await feedGet('/api/v1/selected/snapshot', { query });
  const cursor = res.status === 200 ? field(discoveryJson(res), 'cursor') : undefined;
  if (typeof cursor !== 'string') throw new PreconditionFailed(`setup error (precondition): the snapshot gave no cursor (status ${res.status})`);
  return { cursor, evidence: [res] };
}

/** The run's shared sync cursor: one one-page snapshot (limit=1), asked once. */
export function snapshotCursor(): Promise<{ cursor: string; evidence: HttpResponse[] }> {
  return once('snapshot-cursor', () => takeSnapshotCursor());
}

/** The changes endpoint's pages after a cursor, as readChanges read them. */
export interface ChangesRead {
  /** Every answer, in order (the last may be one `accept` refused). */
  res: HttpResponse[];
  /** The bodies of the accepted pages, parsed. */
  bodies: unknown[];
  /** The last cursor a page handed out (the one given when none did). */
  cursor: string;
  /** Whether the last page read said hasMore false (the reading reached the feed's end). */
  complete: boolean;
}

/**
 * The change feed after `cursor`, as the document's client reads it: page after page while hasMore is true, at most
 * `maxPages`. Each answer goes to `accept` first, which judges its status as its check does (it may end the check,
 * or return false to stop the reading there); an accepted answer's body is read by `parse` (a body read only to
 * discover something is discoveryJson's, undefined when not JSON). `enough`, asked after each page, ends the reading
 * before the feed's end when the reader has what it came for.
 */
export async function readChanges(
  cursor: string,
  maxPages: number,
  accept: (res: HttpResponse, page: number) => boolean,
  parse: (res: HttpResponse) => unknown = discoveryJson,
  enough: () => boolean = () => false,
  firstRes?: HttpResponse,
): Promise<ChangesRead> {
  const p = profile().changes;
  const read: ChangesRead = { res: [], bodies: [], cursor, complete: false };
  for (let i = 0; i < maxPages; i++) {
    const r = i === 0 && firstRes ? firstRes : await feedGet('/api/v1/selected/changes', { query: { [p.cursorParam!]: read.cursor }, continuation: true });
    read.res.push(r);
    if (!accept(r, i)) break;
    const body = parse(r);
    read.bodies.push(body);
    const next = field(body, p.nextCursor!);
    if (typeof next === 'string') read.cursor = next;
    read.complete = field(body, p.hasMore!) !== true;
    // hasMore true with no cursor to follow: nothing more can be read, and the end was not reached.
    if (read.complete || typeof next !== 'string' || enough()) break;
  }
  return read;
}

/** What fields=minimal drops (the document: "`summary` and the original-article link") that an item carries. */
export const minimalDropped = (item: unknown): string[] => ['summary', 'links.original'].filter((f) => field(item, f) !== undefined);

/** A change entry through the profile: its op, and the id it names (removedId for a removal, itemId otherwise). */
export function changeOf(ch: unknown): { op: unknown; id: unknown; item: unknown } {
  const p = profile().changes;
  const op = field(ch, 'op');
  return { op, id: field(ch, op === 'remove' ? p.removedId! : p.itemId!), item: field(ch, 'item') };
}

/**
 * The ids the changes feed lists as removed from the selected set after a sync cursor (its pages while hasMore, with
 * the answers), read until every id of `wanted` is among them or the feed's end (thirty pages at most, 3,000 changes at
 * the changes' own page size: a feed that changes fast fills many pages while a slow run pages; the living reference,
 * about 125 changes a second, filled more than twelve while a loaded CI machine walked one listing). On a live feed an
 * item can leave the selection and come back while a client pages.
 */
export async function removedSince(cursor: string, wanted: readonly string[] = []): Promise<{ ids: Set<string>; res: HttpResponse[]; complete: boolean }> {
  const ids = new Set<string>();
  const read = await readChanges(
    cursor,
    30,
    (r) => r.status === 200,
    (r) => {
      const body = discoveryJson(r);
      for (const ch of listOf(body, profile().changes.list!)) if (changeOf(ch).op === 'remove') ids.add(String(changeOf(ch).id));
      return body;
    },
    () => wanted.length > 0 && wanted.every((id) => ids.has(id)),
  );
  return { ids, res: read.res, complete: read.complete };
}

export interface FeedOperation {
  operationId: string;
  /** A concrete request for it, built from values the target returned. */
  resolve(): Promise<{ path: string; query?: SendOptions['query']; evidence: HttpResponse[] }>;
  /**
   * Where its body holds the resource's content, through the profile: the listed entries and the paging state (a
   * cursor is content: a new one means the listing moved). The rest of a body is its envelope (schemaVersion, a
   * per-request asOf or request stamp), which says nothing about whether the resource changed.
   */
  content(): string[];
  /** The requirements whose checks judge the input resolve() builds from the target's answers (an id, a date, a cursor, a limit). */
  input?: string[];
}

export interface OperationProbe {
  /** A plain GET, with no credential of any kind. */
  first: HttpResponse;
  /** The same GET again. */
  again: HttpResponse;
  /** The same GET with If-None-Match: the first ETag (when there was one). */
  conditional?: HttpResponse;
  evidence: HttpResponse[];
}

/** 404 is a documented answer of these operations; it leaves nothing to check, but is no violation. */
export const MAY_BE_ABSENT = new Set(['latestDaily', 'getDaily', 'getStory']);

/**
 * Each operation probed once per run (GET, GET again, conditional GET), shared by every check that needs it. The
 * second and third requests follow the first at once (before requests not sent yet): on a live feed, the less time
 * between them, the less chance the content moves in between.
 */
export function operationProbe(op: FeedOperation): Promise<OperationProbe> {
  return once(`probe:${op.operationId}`, async () => {
    const { path, query, evidence } = await op.resolve();
    const first = await feedGet(path, { query });
    const again = await feedGet(path, { query, continuation: true });
    const etag = first.header('etag');
    const conditional = etag ? await feedGet(path, { query, headers: { 'if-none-match': etag }, continuation: true }) : undefined;
    return { first, again, conditional, evidence: [...evidence, first, again, ...(conditional ? [conditional] : [])] };
  });
}

/** An answer a cache gave from storage: its Age is above 0. */
export const fromCache = (r: HttpResponse) => Number(r.header('age') ?? 0) > 0;
/**
 * Whether an answer is dated (its Date header) well before it was read, 15 s or more: a stored copy, Age or not. An
 * answer without a Date that parses is not.
 */
export const datedWellBefore = (date: string | undefined, readAt: number): boolean => Date.parse(date ?? '') < readAt - 15_000;

/**
 * Whether request `b` gives the same `key` as request `a`, on a feed that may change between any two requests.
 * `a`, then at once `b`; when they differ, at once `a` again: equal to `b`, the feed moved before `b` (the same);
 * equal to the first `a`, nothing moved and `b` differs, unless one of the three came from a cache (Age above 0: an
 * older answer) or a fourth, `b` again, answers otherwise (a change undone at once: a row deselected and selected
 * again). When they all differ the feed moved twice, and the comparison is tried again, `tries` times in all (default
 * 3); then it is undecided ('moving').
 */
export async function compareLive(
  a: (o: { continuation: boolean; again?: boolean }) => Promise<HttpResponse>,
  b: (o: { continuation: boolean; again?: boolean }) => Promise<HttpResponse>,
  key: (res: HttpResponse) => string,
  o: { tries?: number; firstA?: HttpResponse } = {},
): Promise<{ outcome: 'same' | 'different' | 'moving'; first: HttpResponse; second: HttpResponse; responses: HttpResponse[] }> {
  const tries = o.tries ?? 3;
  const responses: HttpResponse[] = [];
  for (let attempt = 0; ; attempt++) {
    // A first `a` taken earlier in the run may stand in for the first one: it can only be older, and the third
    // request shows whether the feed moved since.
    // A try after the first is sent only because the feed moved: it reads again (feedGet's `again`, bounded per run).
    const later = attempt > 0;
    const first = attempt === 0 && o.firstA ? o.firstA : await a({ continuation: later, again: later });
    const second = await b({ continuation: true, again: later });
    responses.push(first, second);
    if (key(first) === key(second)) return { outcome: 'same', first, second, responses };
    const again = await a({ continuation: true, again: later });
    responses.push(again);
    if (key(again) === key(second)) return { outcome: 'same', first: again, second, responses };
    // Nothing moved, unless a cache answered: a stored answer may be older than `b`'s fresh one (Age above 0). A live
    // feed may also undo a change at once (a row deselected and selected again an instant later): `b` is asked once
    // more, and differs only when it answers as it did.
    if (key(again) === key(first) && ![first, second, again].some(fromCache)) {
      const twice = await b({ continuation: true, again: later });
      responses.push(twice);
      if (key(twice) === key(second) && !fromCache(twice)) return { outcome: 'different', first, second, responses };
      if (key(twice) === key(again)) return { outcome: 'same', first: again, second: twice, responses };
    }
    if (attempt + 1 >= tries) return { outcome: 'moving', first, second, responses };
  }
}

/** One concrete request per documented GET operation. */
export const FEED_OPERATIONS: FeedOperation[] = [
  {
    operationId: 'listItems',
    resolve: async () => ({ path: '/api/v1/items', evidence: [] }),
    content: () => [profile().items.list!, profile().items.hasMore!, profile().items.nextCursor!],
  },
  { operationId: 'hotTopics', resolve: async () => ({ path: '/api/v1/hot-topics', evidence: [] }), content: () => [profile().hotTopics.list!] },
  {
    operationId: 'getStory',
    resolve: async () => {
      const s = await liveStory();
      return { path: `/api/v1/stories/${encodeURIComponent(s.id)}`, evidence: s.evidence };
    },
    content: () => [profile().story.root!],
    input: ['feed-hot-topics-story-link', 'feed-story-references'],
  },
  { operationId: 'listDailies', resolve: async () => ({ path: '/api/v1/dailies', evidence: [] }), content: () => [profile().dailies.list!] },
  { operationId: 'latestDaily', resolve: async () => ({ path: '/api/v1/dailies/latest', evidence: [] }), content: () => [profile().daily.root!] },
  {
    operationId: 'getDaily',
    resolve: async () => {
      const d = await archiveDate();
      return { path: `/api/v1/dailies/${d.date}`, evidence: d.evidence };
    },
    content: () => [profile().daily.root!],
    input: ['feed-dailies-by-date'],
  },
  {
    operationId: 'selectedSnapshot',
    resolve: async () => ({ path: '/api/v1/selected/snapshot', query: { limit: 1 }, evidence: [] }),
    // The document's own names for the paging state of a snapshot page.
    content: () => [profile().snapshot.list!, 'hasMore', 'nextPage', 'cursor'],
    input: ['feed-snapshot-limit-range'],
  },
  {
    operationId: 'selectedChanges',
    resolve: async () => {
      const c = await snapshotCursor();
      return { path: '/api/v1/selected/changes', query: { [runContext().profile.feed.changes.cursorParam!]: c.cursor }, evidence: c.evidence };
    },
    content: () => [profile().changes.list!, profile().changes.hasMore!, profile().changes.nextCursor!],
    input: ['feed-changes-accepts-snapshot-cursor'],
  },
];

/**
 * The content of a response to `op`, as a string to compare: its status and the body's content fields (see
 * FeedOperation.content); the whole body when it is not a JSON object. Two responses of equal content show an
 * unchanged resource, whatever their envelopes (a per-request asOf) say.
 */
export function contentOf(op: FeedOperation, res: Pick<HttpResponse, 'status' | 'body'>): string {
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return `${res.status} ${res.body}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `${res.status} ${res.body}`;
  return `${res.status} ${JSON.stringify(op.content().map((path) => field(body, path) ?? null))}`;
}

// ---------------------------------------------------------------- reading responses through the profile

export function profile() {
  return runContext().profile.feed;
}

/** The words of an item's title a search can use: runs of letters and digits of 3 to 200 code points, in order. */
export function titleWords(item: unknown): string[] {
  return String((item as { title?: unknown } | null)?.title ?? '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => [...w].length >= 3 && [...w].length <= 200);
}

/** The title word (titleWords) the most of `items` show, each title counted once; lower-cased first if asked. Undefined when none. */
export function commonTitleWord(items: unknown[], o: { lowerCase?: boolean } = {}): string | undefined {
  const counts = new Map<string, number>();
  for (const item of items) for (const w of new Set(titleWords(item).map((x) => (o.lowerCase ? x.toLowerCase() : x)))) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
}

export function listOf(body: unknown, path: string): unknown[] {
  const v = field(body, path);
  if (!Array.isArray(v)) throw new AssertionViolation(`no list at "${path}" in the body (deployment profile field ${path})`);
  return v;
}

export function idOf(item: unknown, path = profile().items.id!): string {
  const v = field(item, path);
  if (typeof v !== 'string' && typeof v !== 'number') throw new AssertionViolation(`an item has no id at "${path}": ${JSON.stringify(item).slice(0, 200)}`);
  return String(v);
}

/**
 * A problem response: the given status (or any 4xx when `status` is '4xx') and a JSON object body, returned
 * parsed. Its content type and X-Request-Id are not asserted here: they are feed-problem-json's and
 * feed-problem-request-id's, checked by the checks citing them (direct and run-wide), so a defect there fails
 * those checks only, not every check that reads an error.
 */
export function expectProblem(res: HttpResponse, status: number | '4xx'): Record<string, unknown> {
  const where = `${res.attempts.at(-1)?.method ?? 'GET'} ${new URL(res.url).pathname}`;
  if (status === '4xx') {
    if (res.status < 400 || res.status > 499) throw new AssertionViolation(`${where}: ${res.status}, where a 4xx problem response is required`);
  } else if (res.status !== status) {
    throw new AssertionViolation(`${where}: ${res.status}, where ${status} is required: ${res.body.slice(0, 200)}`);
  }
  const body = jsonBody<unknown>(res);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AssertionViolation(`the problem body of ${new URL(res.url).pathname}: ${res.body.slice(0, 120)}, where a JSON object is required`);
  return body as Record<string, unknown>;
}

export function problemCode(body: Record<string, unknown>): unknown {
  return field(body, profile().problem.code!);
}

/** The target refused the request for lack of a credential (the anonymous-access checks judge that). */
export function refused(res: HttpResponse): boolean {
  return res.status === 401 || res.status === 403;
}

/** Undecided when a request a check needs as input was refused for lack of a credential. */
export function needsAccess(res: HttpResponse, what: string): void {
  if (refused(res))
    throw new PreconditionFailed(
      `setup error (precondition): ${what} answered ${res.status} without a credential (feed-anonymous-access judges that); nothing to check here`,
    );
}

/** The JSON body of a response a check needs as input; a body that is not JSON leaves it undecided (feed-success-json). */
export function inputJson<T = unknown>(res: Pick<HttpResponse, 'body' | 'status'>, what: string): T {
  try {
    return JSON.parse(res.body) as T;
  } catch {
    throw new PreconditionFailed(`setup error (precondition): ${what} answered ${res.status} with a body that is not JSON (feed-success-json judges that)`);
  }
}

/** The target's own clock (its Date header), so window checks do not depend on the runner's clock. */
export function serverNow(res: HttpResponse): number {
  return targetNow(res).now;
}

/**
 * How far an item's time may stray past a window's edge before it counts as outside: the Date header has
 * one-second resolution and dates the response, not the moment each row was read, so an item at the very edge may
 * be off by the time a request takes. Two minutes, stated in every observation that uses it.
 */
export const CLOCK_TOLERANCE_MS = 2 * 60_000;

/**
 * "Now" for the target: its Date header (RFC 9110 6.6.1), so a runner whose clock is off by minutes judges edge
 * items as the target does. Only without a Date header does the runner's clock stand in, and `source` says so.
 */
export function targetNow(res: HttpResponse): { now: number; source: string; fromTarget: boolean } {
  const d = Date.parse(res.header('date') ?? '');
  if (Number.isNaN(d)) return { now: Date.now(), source: "the runner's clock (the response carried no Date header)", fromTarget: false };
  const skew = Math.round((d - Date.now()) / 1000);
  return { now: d, source: `the target's Date header (${skew >= 0 ? '+' : ''}${skew} s from the runner's clock)`, fromTarget: true };
}

/** An RFC 3339 timestamp as an instant (any offset: Z, +08:00, -05:00), or undefined when it is not one. */
export function instant(v: unknown): number | undefined {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/.test(v)) return undefined;
  const ms = Date.parse(v.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(ms) ? undefined : ms;
}

const HOUR = 3_600_000;
/** The document's timestamp rule for `by`: timeline uses publication time for items back-filled > 72 h, else discovery. */
export function effectiveTime(item: Record<string, unknown>, by: 'timeline' | 'published'): number | undefined {
  const published = instant(item.publishedAt);
  const discovered = instant(item.discoveredAt);
  if (by === 'published') return published;
  if (discovered === undefined) return undefined;
  return published !== undefined && discovered - published > 72 * HOUR ? published : discovered;
}

/** Two neighbours of a page, their ids and times under a rule. */
interface Placed {
  id: string;
  at: number;
}
/**
 * The order of pages under a timestamp rule: each page's neighbours with different times under `by` (ties and items
 * without that time are not placed) read as newest first or oldest first, in one direction over all the pages. The
 * first pair against the direction the pages began with is returned with the page it is on and the page that set it.
 */
export function pagesOrder(
  pages: FeedItem[][],
  by: 'timeline' | 'published',
): { pairs: number; direction?: string; broken?: { page: number; a: Placed; b: Placed; direction: string; firstPage: number } } {
  let first: { direction: string; page: number } | undefined;
  let pairs = 0;
  for (const [page, items] of pages.entries()) {
    const timed = items.map((i) => ({ id: idOf(i), at: effectiveTime(i, by) })).filter((x): x is Placed => x.at !== undefined);
    for (let i = 1; i < timed.length; i++) {
      const [a, b] = [timed[i - 1]!, timed[i]!];
      if (a.at === b.at) continue;
      pairs++;
      const direction = a.at > b.at ? 'newest first' : 'oldest first';
      first ??= { direction, page };
      if (direction !== first.direction) return { pairs, direction: first.direction, broken: { page, a, b, direction, firstPage: first.page } };
    }
  }
  return { pairs, direction: first?.direction };
}

export const WINDOW_MS: Record<string, number> = { '24h': 24 * HOUR, '7d': 7 * 24 * HOUR };

// ---------------------------------------------------------------- items paging

export type Query = Record<string, string | number>;
export type FeedItem = Record<string, unknown>;
export interface ItemsPage {
  res: HttpResponse;
  items: FeedItem[];
  next: string | null;
  hasMore: boolean;
}

/** A listing a check needed answered another status than 200: a setup error that says which request and status. */
export class ListingNotServed extends PreconditionFailed {
  /** The request, in words (its query included), and the status it got. */
  readonly request: string;
  constructor(
    readonly status: number,
    readonly query: Query,
  ) {
    const request = `GET /api/v1/items?${new URLSearchParams(query as Record<string, string>)} answered ${status}`;
    super(
      `setup error (precondition): ${request}; this check needs that listing (its status is judged by the checks citing the listing's parameters and access)`,
    );
    this.request = request;
  }
}

export async function itemsPage(query: Query): Promise<ItemsPage> {
  return readItemsPage(await feedGet('/api/v1/items', { query }), query);
}

/**
 * A listing a check needs as its input: anything but 200 leaves that check undecided (a setup error naming the
 * status). Whether the listing itself must answer 200 is judged by the checks citing its parameters and access
 * rules, so one defect there fails those, not every check that reads items.
 */
function readItemsPage(res: HttpResponse, query: Query): ItemsPage {
  if (res.status !== 200) throw new ListingNotServed(res.status, query);
  const body = inputJson(res, 'GET /api/v1/items');
  const p = profile().items;
  const next = field(body, p.nextCursor!);
  return {
    res,
    items: listOf(body, p.list!) as FeedItem[],
    next: typeof next === 'string' && next !== '' ? next : null,
    hasMore: field(body, p.hasMore!) === true,
  };
}

/**
 * Up to `maxPages` pages of one query, following the cursor. Rows may leave the window between requests; when a
 * cursor is rejected with invalid_cursor the pager restarts from the first page, as the document tells clients to
 * (once: a second rejection fails the walk).
 */
export async function walkItems(query: Query, maxPages: number): Promise<ItemsPage[]> {
  let pages: ItemsPage[] = [];
  let cursor: string | null = null;
  let restarted = false;
  while (pages.length < maxPages) {
    const q = cursor ? { ...query, cursor } : query;
    const res = await feedGet('/api/v1/items', { query: q });
    if (cursor && !restarted && res.status === 400 && problemCodeOf(res) === 'invalid_cursor') {
      restarted = true;
      pages = [];
      cursor = null;
      continue;
    }
    const p = readItemsPage(res, q);
    pages.push(p);
    if (!p.hasMore || !p.next) break;
    cursor = p.next;
  }
  return pages;
}

function problemCodeOf(res: HttpResponse): unknown {
  try {
    return field(JSON.parse(res.body), profile().problem.code!);
  } catch {
    return undefined;
  }
}

/** A cursor of the default query with more pages behind it, and when it was obtained. */
export function firstCursor(): Promise<{ cursor: string; at: number; res: HttpResponse }> {
  return once('items-first-cursor', async () => {
    const p = await itemsPage({ limit: 5 });
    if (!p.next) throw new PreconditionFailed('setup error (precondition): the items listing has no second page, so it gives no cursor');
    return { cursor: p.next, at: Date.now(), res: p.res };
  });
}

// ---------------------------------------------------------------- stories

export function storyPath(id: string): string {
  return `/api/v1/stories/${encodeURIComponent(id)}`;
}

/** The story endpoint's answer for an id, once per run: discovery, link checks and the merge walk share it. */
export function storyResponse(id: string): Promise<HttpResponse> {
  return once(`story:${id}`, () => feedGet(storyPath(id)));
}

/** The status the story endpoint gives an id. */
export async function storyStatus(id: string): Promise<number> {
  return (await storyResponse(id)).status;
}

/** Ids a story references (storyline and related), through the profile. */
export function storyReferences(body: unknown): { storyline: string[]; related: string[] } {
  const p = profile().story;
  const root = field(body, p.root!);
  const refs = (path: string) => {
    const list = field(root, path);
    return Array.isArray(list) ? list.map((r) => field(r, p.referenceId!)).filter((x): x is string => typeof x === 'string') : [];
  };
  return { storyline: refs(p.storyline!), related: refs(p.related!) };
}

/**
 * A merged story id: FEED_MERGED_STORY_ID when given, else discovered by walking hot-topic story links and the
 * storyline and related references of the stories they lead to (at most `maxRequests` story requests).
 */
export function mergedStory(maxRequests = 12): Promise<{ id: string; source: string; res: HttpResponse } | undefined> {
  return once('merged-story', async () => {
    const configured = runContext().feedMergedStoryId;
    if (configured) return { id: configured, source: 'FEED_MERGED_STORY_ID', res: await storyResponse(configured) };
    const { ids } = await discoveredStoryIds();
    const queue = [...ids];
    const seen = new Set<string>();
    let requests = 0;
    while (queue.length && requests < maxRequests) {
      const id = queue.shift()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const res = await storyResponse(id);
      requests++;
      // Any redirect marks a merged story here; the check then holds it to the document's 308.
      if (res.status >= 300 && res.status < 400) return { id, source: 'discovered', res };
      if (res.status === 200) {
        // A 200 that serves another story under this id is a merged story answered without its redirect.
        let body: unknown;
        try {
          body = JSON.parse(res.body);
        } catch {
          continue; // not JSON: the JSON body check reports it; nothing to follow here
        }
        const served = field(field(body, profile().story.root!), profile().story.publicId!);
        if (typeof served === 'string' && served !== id) return { id, source: `discovered (answered 200 with story ${served})`, res };
        const r = storyReferences(body);
        queue.push(...r.storyline, ...r.related);
      }
    }
    return undefined;
  });
}

/** The operations whose bounded query parameters parameters.checks.ts checks, each rule from the OpenAPI description. */
export const PARAMETER_RULE_OPERATIONS = ['listItems', 'listDailies', 'selectedSnapshot'];

/** The requirement of an operation's parameter defaults, where the document states them together (else each parameter's own rule). */
export const DEFAULTS_REQUIREMENT: Record<string, string> = { listItems: 'feed-items-defaults' };

/** The id stem of the checks of one parameter rule (…-in-range, …-out-of-range, …-each-value, …-default). */
export const paramCheckId = (operationId: string, name: string): string => `feed-param-${kebab(operationId)}-${name}`;

/**
 * The one daily date the suite asks for without the archive naming it: a well-formed date before any report of this
 * service could exist, the deliberate probe of "404 for a date without a report" (as conformance- ids probe stories).
 */
export const MISSING_DAILY_PROBE = '1970-01-01';

/** The caching rules checked on every GET operation (conditional-requests.checks.ts), each with its requirement. */
export const CACHING_RULES = {
  'etag-cache-control': 'feed-200-etag-cache-control',
  's-maxage': 'feed-cache-control-s-maxage',
  'conditional-304': 'feed-conditional-304',
  '304-headers': 'feed-304-headers-empty-body',
  'etag-stable': 'feed-etag-stable',
} as const;

/** The id of a caching rule's check on one operation: the suite registers it, its facet names it. */
export const cachingCheckId = (rule: keyof typeof CACHING_RULES, operationId: string): string => `feed-${rule}-${kebab(operationId)}`;

// ---------------------------------------------------------------- a live feed: waiting for a change

/**
 * How long a check that walks a procedure across a change waits for the target to change by itself (a live feed's
 * writes come within seconds; a refresh every five minutes or a daily publication is not waited for). A target that
 * did not change within it leaves such a check "not applicable", never passed.
 */
export const LIVE_WAIT_MS = 1500;
/**
 * Time between two reads of a resource being watched for a change: one read at the end of the wait, no more. The
 * suite is a client of the feed too and never polls (fixtures/client-rules.test.ts bounds how often it fetches one
 * URL); a live feed's writes come often enough for one look after the wait.
 */
export const LIVE_POLL_MS = LIVE_WAIT_MS;

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves LIVE_WAIT_MS after `since` (epoch ms): the wait before a watch's one look. */
export function afterTheWait(since: number): Promise<unknown> {
  return pause(Math.max(0, since + LIVE_WAIT_MS - Date.now()));
}
/**
 * Reads `read` until `key` of its answer differs from that of the first answer, every LIVE_POLL_MS, within
 * LIVE_WAIT_MS (undefined when it did not change). The changed answer, the time waited, every answer.
 */
export async function waitUntilChanged(
  read: () => Promise<HttpResponse>,
  key: (res: HttpResponse) => string,
  o: { base?: HttpResponse; boundMs?: number } = {},
): Promise<{ res: HttpResponse; waitedMs: number; responses: HttpResponse[] } | undefined> {
  const start = Date.now();
  const base = o.base ?? (await read());
  const responses = [base];
  while (Date.now() - start < (o.boundMs ?? LIVE_WAIT_MS)) {
    await pause(LIVE_POLL_MS);
    const res = await read();
    responses.push(res);
    if (key(res) !== key(base)) return { res, waitedMs: Date.now() - start, responses };
  }
  return undefined;
}

/** Keys anywhere inside a value. */
function keysDeep(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x) => keysDeep(x, out));
  else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      keysDeep(x, out);
    }
  }
  return out;
}

/** The keys anywhere inside a value named like a heat value (hot topics: "Internal and display heat values are omitted"). */
export const heatNamedKeys = (v: unknown): string[] => keysDeep(v).filter(heatNamed);
/** "heat" as a word of a key (camelCase and snake_case split): heat, heat_score, displayHeat, HEAT; not theater or wheat. */
const heatNamed = (key: string): boolean =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^a-zA-Z0-9]+/)
    .some((w) => w.toLowerCase() === 'heat');
