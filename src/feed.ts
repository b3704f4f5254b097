/**
 * The feed suite's view of the target: requests that keep the feed's client rules, and discovery of real ids
 * (story ids, daily dates, snapshot cursors) from the target's own answers. Nothing is guessed: a check whose
 * input cannot be discovered ends as a setup error.
 */
import { http, baseUrl, runContext } from './context.js';
import { clientRules, field } from './spec.js';
import type { HttpResponse, SendOptions } from './http.js';
import { PreconditionFailed, jsonBody } from './harness.js';

const rules = clientRules('feed');

export function feedUrl(path: string): string {
  return `${baseUrl('feed')}${path}`;
}

export function feedGet(path: string, o: Omit<SendOptions, 'rules' | 'service'> = {}): Promise<HttpResponse> {
  return http().send(feedUrl(path), { ...o, rules, service: 'feed' });
}

const memo = new Map<string, Promise<unknown>>();
/** Run `f` once per key in this run; later callers share the result (and must cite its responses). */
export function once<T>(key: string, f: () => Promise<T>): Promise<T> {
  let p = memo.get(key) as Promise<T> | undefined;
  if (!p) {
    p = f();
    memo.set(key, p);
    p.catch(() => memo.delete(key));
  }
  return p;
}

function lastSegment(url: string): string | undefined {
  try {
    const parts = new URL(url).pathname.split('/').filter(Boolean);
    return parts.length ? decodeURIComponent(parts[parts.length - 1]!) : undefined;
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
    const list = field(jsonBody(res), p.hotTopics.list!);
    const ids = new Set<string>();
    for (const entry of Array.isArray(list) ? list : []) {
      const link = field(entry, p.hotTopics.storyLink!);
      const id = typeof link === 'string' ? lastSegment(link) : undefined;
      if (id) ids.add(id);
    }
    return { ids: [...ids], evidence };
  });
}

/** A story id that answers 200 directly. */
export function liveStory(): Promise<{ id: string; evidence: HttpResponse[] }> {
  return once('live-story', async () => {
    const { ids, evidence } = await discoveredStoryIds();
    for (const id of ids.slice(0, 4)) {
      const res = await feedGet(`/api/v1/stories/${encodeURIComponent(id)}`);
      evidence.push(res);
      if (res.status === 200) return { id, evidence };
    }
    throw new PreconditionFailed('setup error (precondition): no hot topic links a story that answers 200, so no story id is known');
  });
}

/** The newest date of the daily archive. */
export function archiveDate(): Promise<{ date: string; evidence: HttpResponse[] }> {
  return once('archive-date', async () => {
    const p = runContext().profile.feed;
    const res = await feedGet('/api/v1/dailies', { query: { limit: 1 } });
    const list = res.status === 200 ? field(jsonBody(res), p.dailies.list!) : undefined;
    const date = Array.isArray(list) ? field(list[0], p.dailies.date!) : undefined;
    if (typeof date !== 'string')
      throw new PreconditionFailed(`setup error (precondition): /api/v1/dailies?limit=1 gave no archive date (status ${res.status})`);
    return { date, evidence: [res] };
  });
}

/** The sync cursor of a one-page snapshot (limit=1), for the changes endpoint. */
export function snapshotCursor(): Promise<{ cursor: string; evidence: HttpResponse[] }> {
  return once('snapshot-cursor', async () => {
    const res = await feedGet('/api/v1/selected/snapshot', { query: { limit: 1 } });
    const cursor = res.status === 200 ? field(jsonBody(res), 'cursor') : undefined;
    if (typeof cursor !== 'string') throw new PreconditionFailed(`setup error (precondition): the snapshot gave no cursor (status ${res.status})`);
    return { cursor, evidence: [res] };
  });
}

export interface FeedOperation {
  operationId: string;
  /** A concrete request for it, built from values the target returned. */
  resolve(): Promise<{ path: string; query?: SendOptions['query']; evidence: HttpResponse[] }>;
}

/** One concrete request per documented GET operation. */
export const FEED_OPERATIONS: FeedOperation[] = [
  { operationId: 'listItems', resolve: async () => ({ path: '/api/v1/items', evidence: [] }) },
  { operationId: 'hotTopics', resolve: async () => ({ path: '/api/v1/hot-topics', evidence: [] }) },
  {
    operationId: 'getStory',
    resolve: async () => {
      const s = await liveStory();
      return { path: `/api/v1/stories/${encodeURIComponent(s.id)}`, evidence: s.evidence };
    },
  },
  { operationId: 'listDailies', resolve: async () => ({ path: '/api/v1/dailies', evidence: [] }) },
  { operationId: 'latestDaily', resolve: async () => ({ path: '/api/v1/dailies/latest', evidence: [] }) },
  {
    operationId: 'getDaily',
    resolve: async () => {
      const d = await archiveDate();
      return { path: `/api/v1/dailies/${d.date}`, evidence: d.evidence };
    },
  },
  { operationId: 'selectedSnapshot', resolve: async () => ({ path: '/api/v1/selected/snapshot', query: { limit: 1 }, evidence: [] }) },
  {
    operationId: 'selectedChanges',
    resolve: async () => {
      const c = await snapshotCursor();
      return { path: '/api/v1/selected/changes', query: { [runContext().profile.feed.changes.cursorParam!]: c.cursor }, evidence: c.evidence };
    },
  },
];
