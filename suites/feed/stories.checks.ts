/**
 * content-feed-service.md — Resources > Story; Endpoints > GET /api/v1/stories/{publicId}; States and transitions.
 */
import { randomBytes } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { AssertionViolation, check, expect, fail, precondition, PreconditionFailed, checkGroup } from '../../src/harness.js';
import { discoveredStoryIds, feedGet, needsAccess, liveStory, mergedStory, profile, storyPath, storyResponse, storyStatus } from '../../src/feed.js';
import { field } from '../../src/spec.js';
import { baseUrl, operationPath } from '../../src/context.js';
import type { HttpResponse } from '../../src/http.js';

type Root = Record<string, unknown>;

const liveStoryBody = async () => {
  const s = await liveStory();
  const res = s.evidence[s.evidence.length - 1]!;
  // Whether the story answers 200 at all is the anonymous-access check's requirement; these check what it holds.
  if (res.status !== 200) throw new PreconditionFailed(`GET ${storyPath(s.id)} answered ${res.status}, not 200`, ['feed-anonymous-access']);
  return { id: s.id, res, root: field(storyJson(res), profile().story.root!) as Root | undefined };
};

/** A story's JSON body; a 200 that is not JSON is feed-success-json's finding (its own check reports it). */
function storyJson(res: HttpResponse): unknown {
  try {
    return JSON.parse(res.body);
  } catch {
    throw new PreconditionFailed(`the story's 200 body is not JSON`, ['feed-success-json']);
  }
}

/** Stories beyond the live one, when its data cannot decide a check: the other ids the target names (a few). */
const MORE_STORIES = 4;
async function otherStories(except: string): Promise<{ id: string; res: HttpResponse; root: Root }[]> {
  const { ids } = await discoveredStoryIds();
  const out: { id: string; res: HttpResponse; root: Root }[] = [];
  for (const id of ids.filter((x) => x !== except).slice(0, MORE_STORIES)) {
    const res = await storyResponse(id);
    if (res.status !== 200) continue;
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      continue; // not JSON: reported by the JSON body check
    }
    const root = field(body, profile().story.root!);
    if (typeof root === 'object' && root !== null) out.push({ id, res, root: root as Root });
  }
  return out;
}

/** The storyline and related lists of a story: present as lists, or a violation (a missing list is not an empty one). */
function referenceLists(root: Root | undefined, where: string): { storyline: unknown[]; related: unknown[] } {
  const p = profile().story;
  const read = (path: string, what: string) => {
    const v = field(root, path);
    if (!Array.isArray(v)) throw new AssertionViolation(`${where} has no ${what} list at "${path}" (found ${v === undefined ? 'nothing' : JSON.stringify(v)})`);
    return v;
  };
  return { storyline: read(p.storyline!, 'same-storyline references'), related: read(p.related!, 'related-story references') };
}

checkGroup('the story body', () => {
  check(
    { id: 'feed-story-fields', title: 'a story carries its publicId, a coverage timeline and an AI digest', requirements: ['feed-story-body'] },
    async (t) => {
      const { id, res, root } = await liveStoryBody();
      t.cite(res);
      const p = profile().story;
      expect(root, `story object at "${p.root}"`).toBeTypeOf('object');
      expect(field(root, p.publicId!), 'publicId').toBe(id);
      const timeline = field(root, p.timeline!);
      expect(Array.isArray(timeline), `coverage timeline at "${p.timeline}" is a list`).toBe(true);
      // The timeline is aggregated from every covering source: a story the endpoint serves has been covered.
      expect((timeline as unknown[]).length, `entries in the coverage timeline at "${p.timeline}"`).toBeGreaterThan(0);
      const digest = field(root, p.digest!);
      expect(digest !== undefined, `an AI digest at "${p.digest}"`).toBe(true);
      // null: a digest not yet written (real deployments send it); anything else must be the digest's text.
      if (digest !== null) {
        expect(typeof digest === 'string' || (typeof digest === 'object' && !Array.isArray(digest)), `digest at "${p.digest}" is text`).toBe(true);
        if (typeof digest === 'string') expect(digest.trim().length, 'the digest is not empty').toBeGreaterThan(0);
      }
      t.observe('digest', digest === null ? 'null (not yet written)' : typeof digest);
    },
  );

  check(
    { id: 'feed-story-timeline-order', title: 'the coverage timeline is reverse-chronological', requirements: ['feed-story-timeline-order'] },
    async (t) => {
      const live = await liveStoryBody();
      t.cite(live.res);
      const p = profile().story;
      const timelineOf = (root: Root | undefined) => field(root, p.timeline!);
      // An order is only shown by two entries or more: the live story, else another story the target names.
      let chosen: { id: string; res: HttpResponse; root: Root | undefined } = live;
      const long = (root: Root | undefined) => Array.isArray(timelineOf(root)) && (timelineOf(root) as unknown[]).length >= 2;
      if (!long(live.root)) {
        const others = await otherStories(live.id);
        for (const o of others) t.cite(o.res);
        const found = others.find((o) => long(o.root));
        if (!found)
          throw new PreconditionFailed(
            `needs a story with at least two entries in its coverage timeline; none of the ${others.length + 1} stories seen has one`,
          );
        chosen = found;
      }
      const timeline = timelineOf(chosen.root) as unknown[];
      t.observe('story checked', `${chosen.id} (${timeline.length} timeline entries)`);
      const times = timeline.map((e) => Date.parse(String(field(e, p.timelineTime!))));
      const undated = times.findIndex((x) => Number.isNaN(x));
      if (undated >= 0) t.violation(`timeline entry ${undated} of story ${chosen.id} has no ${p.timelineTime} timestamp to order it by`);
      for (let i = 1; i < times.length; i++) {
        if (times[i]! > times[i - 1]!)
          t.violation(`timeline entry ${i} (${new Date(times[i]!).toISOString()}) is newer than entry ${i - 1} (${new Date(times[i - 1]!).toISOString()})`);
      }
    },
  );

  check(
    {
      id: 'feed-story-references-served',
      title: 'a story carries storyline and related references, with ids the story endpoint serves',
      requirements: ['feed-story-references'],
    },
    async (t) => {
      const live = await liveStoryBody();
      t.cite(live.res);
      const p = profile().story;
      const idsOf = (list: unknown[], what: string) =>
        list.map((r) => {
          const id = field(r, p.referenceId!);
          if (typeof id !== 'string' || id === '') t.violation(`a ${what} reference has no id at "${p.referenceId}": ${JSON.stringify(r).slice(0, 200)}`);
          return id as string;
        });
      let lists = referenceLists(live.root, `story ${live.id}`);
      let from = live.id;
      if (lists.storyline.length + lists.related.length === 0) {
        // The live story references nothing: the rule is shown by another story the target names, if any does.
        const others = await otherStories(live.id);
        for (const o of others) t.cite(o.res);
        const found = others.map((o) => ({ o, l: referenceLists(o.root, `story ${o.id}`) })).find((x) => x.l.storyline.length + x.l.related.length > 0);
        if (!found) throw new PreconditionFailed(`needs a story with a storyline or related reference; none of the ${others.length + 1} stories seen has one`);
        lists = found.l;
        from = found.o.id;
      }
      const ids = [...new Set([...idsOf(lists.storyline, 'storyline'), ...idsOf(lists.related, 'related')])];
      t.observe('references', `${lists.storyline.length} storyline, ${lists.related.length} related (story ${from})`);
      for (const id of ids) {
        const res = await storyResponse(id);
        t.cite(res);
        // A redirect means a merged story: the id is one the endpoint knows (its status is feed-story-merged-308's to judge).
        const status = await storyStatus(id);
        if (status !== 200 && !(status >= 300 && status < 400))
          fail(`the story endpoint for referenced id "${id}": ${status}, where 200 (or a redirect, for a merged story) is required`);
      }
    },
  );
});

checkGroup('story ids the endpoint does not serve', () => {
  // Only the status is this requirement's: the problem format of every error is checked by the checks citing it.
  check(
    {
      id: 'feed-story-id-over-128',
      title: 'a publicId over 128 characters gets a refusal the story operation lists (400, 403 or 404), never another 4xx or a 5xx',
      requirements: ['feed-story-id-length'],
    },
    async (t) => {
      // With If-None-Match: * (a client always sends one): an id refused has no representation it could match.
      const res = await feedGet(storyPath(`conformance-${'x'.repeat(129 - 12)}`), { headers: { 'if-none-match': '*' } });
      t.observe('status for a 129-character publicId (sent with If-None-Match: *)', String(res.status));
      // The statuses the story operation lists for a refusal: 404, and 400 or 403 (every operation's); a 414 or another
      // 4xx is none of them. A 429 or 503 that outlasted the client's retries says nothing about the id.
      if (res.status === 429 || res.status === 503) return t.notApplicable(`the story endpoint answered ${res.status} after the client's retries`);
      // A credential asked for (401) is feed-anonymous-access's finding, not the id's.
      needsAccess(res, 'the story endpoint');
      if (![400, 403, 404].includes(res.status))
        fail(
          `a 129-character publicId, sent with If-None-Match: *: ${res.status}, where a refusal the story operation lists (400, 403 or 404) is required${res.status === 304 ? ' (no story of that id exists for the condition to match: RFC 9110 13.1.2)' : ''}`,
        );
    },
  );

  check(
    {
      id: 'feed-story-id-128-allowed',
      title: 'a publicId of exactly 128 characters is allowed: an unknown one answers as any unknown id does, not as one too long',
      requirements: ['feed-story-id-length'],
    },
    async (t) => {
      const short = await feedGet(storyPath(`conformance-unknown-${randomBytes(8).toString('hex')}`));
      const id = `conformance-${randomBytes(8).toString('hex')}`;
      const longest = await feedGet(storyPath(id + 'x'.repeat(128 - id.length)));
      // Characters, not bytes: 128 non-ASCII characters (one code point and one UTF-16 unit each, two UTF-8 bytes).
      const wide = await feedGet(storyPath(id + 'é'.repeat(128 - id.length)));
      t.cite(short, longest, wide);
      t.observe(
        'statuses',
        `an unknown short id ${short.status}, an unknown 128-character id ${longest.status}, one of 128 non-ASCII characters ${wide.status}`,
      );
      expect(longest.status, `an unknown 128-character publicId (an unknown short one: ${short.status})`).toBe(short.status);
      expect(
        wide.status,
        `an unknown publicId of 128 characters, ${Buffer.byteLength(id + 'é'.repeat(128 - id.length))} UTF-8 bytes (an unknown short one: ${short.status})`,
      ).toBe(short.status);
    },
  );

  check({ id: 'feed-story-unknown-404', title: 'an unknown story id answers 404', requirements: ['feed-story-not-found'] }, async () => {
    // Control: a story the feed names answers 200, so a refusal of every story is not read as "not found".
    await liveStoryBody();
    const path = storyPath(`conformance-unknown-${randomBytes(8).toString('hex')}`);
    const res = await feedGet(path);
    expect(res.status, 'an unknown story id').toBe(404);
    // HEAD too ("HEAD works"): the same status without the body. With If-None-Match: * (a client always sends one):
    // it matches a current representation only (RFC 9110 13.1.2), and an unknown story has none.
    const head = await feedGet(path, { method: 'HEAD', headers: { 'if-none-match': '*' } });
    expect(head.status, 'HEAD of an unknown story id, sent with If-None-Match: *').toBe(404);
  });
});

/** Which form of URI reference a Location is (RFC 3986 §4.2): the document leaves it open; the report says which was seen. */
function locationForm(location: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(location)) return 'absolute URL';
  if (location.startsWith('//')) return 'network-path reference';
  return location.startsWith('/') ? 'absolute-path reference' : 'relative-path reference';
}

checkGroup('merged stories', () => {
  check(
    {
      id: 'feed-story-merged-308',
      title: 'a merged story answers 308 with a Location that leads straight to a story answering 200',
      requirements: ['feed-story-merged-308'],
    },
    async (t) => {
      const merged = await mergedStory();
      if (!merged)
        return t.notConfigured(
          'set FEED_MERGED_STORY_ID to a merged story id: no merged story was found by walking hot-topic story links and story references (no redirect, and no 200 serving another story under the id)',
        );
      t.cite(merged.res);
      t.observe('merged id from', merged.source);
      // A configured id the target does not know is the configuration's problem, unless the target itself names it.
      if (merged.source === 'FEED_MERGED_STORY_ID' && merged.res.status === 404) {
        const named = await discoveredStoryIds();
        t.cite(...named.evidence);
        if (!named.ids.includes(merged.id))
          throw new PreconditionFailed(
            `FEED_MERGED_STORY_ID=${merged.id} is unknown to the target (GET ${storyPath(merged.id)} answered 404) and none of its hot-topic story links names it: check the configured id`,
          );
      }
      expect(merged.res.status, `GET ${storyPath(merged.id)}`).toBe(308);
      const location = merged.res.header('location');
      expect(location, '308 Location header').toBeTruthy();
      // A client that had the story before it merged revalidates it ("Clients should always send If-None-Match"):
      // the merged id answers 308 to that request too (a tag of its own, which matches nothing the id serves now).
      const revalidated = await feedGet(storyPath(merged.id), { headers: { 'if-none-match': 'W/"conformance-before-the-merge"' }, continuation: true });
      t.cite(revalidated);
      if (![308, 429, 503].includes(revalidated.status))
        t.violation(
          `GET ${storyPath(merged.id)} with If-None-Match (a client revalidating the story it had) answered ${revalidated.status}, not the 308 of the merged story`,
        );
      const head = await feedGet(storyPath(merged.id), { method: 'HEAD', continuation: true });
      t.cite(head);
      if (![308, 429, 503].includes(head.status)) t.violation(`HEAD ${storyPath(merged.id)} answered ${head.status}, not the 308 of the merged story`);
      t.observe('Location form', locationForm(location!));
      // RFC 9110 §10.2.2: a relative reference is resolved against the request's URL (its path prefix, if the feed
      // is served under one, included), and the client requests the URL it resolves to, as it is.
      const target = new URL(location!, merged.res.url);
      expect(target.origin, 'Location stays on the feed service').toBe(new URL(merged.res.url).origin);
      let survivor = await feedGet(target);
      // On a live feed the surviving story may have merged in turn since the 308 was read: the id, asked again, then
      // names the story that stands now (one that still names the story answering 308 is held to it below).
      if (survivor.status === 308) {
        const again = await feedGet(storyPath(merged.id));
        const moved = again.status === 308 ? again.header('location') : undefined;
        if (moved && new URL(moved, again.url).href !== target.href) survivor = await feedGet(new URL(moved, again.url));
      }
      // A Location that leaves the base URL's path prefix (an absolute path a proxy did not rewrite) is followed too:
      // a client gets what the URL serves; if that is not the story, the report says where the Location led.
      const outside = operationPath('feed', target.href) === undefined ? ` (Location ${location} resolves outside the feed's base URL ${baseUrl('feed')})` : '';
      expect(survivor.status, `the surviving story ${target.pathname}, reached directly (no chain)${outside}`).toBe(200);
      // Followed, the Location gives the surviving story as the story endpoint serves it (a story response, JSON):
      // a page of the website under the story's id is not the story the client asked the API for.
      let root: unknown;
      let json = true;
      try {
        root = field(JSON.parse(survivor.body), profile().story.root!);
      } catch {
        json = false;
      }
      // On the story endpoint's own path a body that is not JSON is the JSON body rule's (feed-success-json) to report.
      const onStoryPath = /^\/api\/v1\/stories\/[^/]+$/.test(operationPath('feed', target.href) ?? '');
      precondition(json || !onStoryPath, `the story endpoint answered ${target.pathname} with a body that is not JSON`, 'feed-success-json');
      const served = field(root, profile().story.publicId!);
      if (typeof served !== 'string')
        t.violation(
          `the Location ${location} led to ${target.pathname}, which answered 200 ${survivor.header('content-type') ?? '(no content type)'} without a story (no ${profile().story.root}.${profile().story.publicId}): not the story endpoint's response${outside}`,
        );
    },
  );
});
