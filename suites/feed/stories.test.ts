/**
 * content-feed-service.md — Resources > Story; Endpoints > GET /api/v1/stories/{publicId}; States and transitions.
 */
import { describe } from 'vitest';
import { randomBytes } from 'node:crypto';
import { check, expect, jsonBody } from '../../src/harness.js';
import { expectProblem, feedGet, liveStory, mergedStory, profile, storyPath, storyReferences, storyStatus } from '../../src/feed.js';
import { field } from '../../src/spec.js';

const liveStoryBody = async () => {
  const s = await liveStory();
  const res = s.evidence[s.evidence.length - 1]!;
  expect(res.status, `GET ${storyPath(s.id)}`).toBe(200);
  return { id: s.id, res, root: field(jsonBody(res), profile().story.root!) as Record<string, unknown> | undefined };
};

describe('the story body', () => {
  check(
    { id: 'feed-story-fields', title: 'a story carries its publicId, a coverage timeline and an AI digest', requirements: ['feed-story-body'] },
    async (t) => {
      const { id, res, root } = await liveStoryBody();
      t.cite(res);
      const p = profile().story;
      expect(root, `story object at "${p.root}"`).toBeTypeOf('object');
      expect(field(root, p.publicId!), 'publicId').toBe(id);
      expect(Array.isArray(field(root, p.timeline!)), `coverage timeline at "${p.timeline}" is a list`).toBe(true);
      const digest = field(root, p.digest!);
      expect(digest === null || typeof digest === 'string' || typeof digest === 'object', `digest at "${p.digest}"`).toBe(true);
      t.observe('digest', digest === null ? 'null (not yet written)' : typeof digest);
    },
  );

  check(
    { id: 'feed-story-timeline-order', title: 'the coverage timeline is reverse-chronological', requirements: ['feed-story-timeline-order'] },
    async (t) => {
      const { res, root } = await liveStoryBody();
      t.cite(res);
      const p = profile().story;
      const timeline = field(root, p.timeline!);
      expect(Array.isArray(timeline), 'timeline is a list').toBe(true);
      const times = (timeline as unknown[]).map((e) => Date.parse(String(field(e, p.timelineTime!))));
      expect(
        times.every((x) => !Number.isNaN(x)),
        `every timeline entry has a ${p.timelineTime} timestamp`,
      ).toBe(true);
      for (let i = 1; i < times.length; i++) {
        if (times[i]! > times[i - 1]!)
          t.violation(`timeline entry ${i} (${new Date(times[i]!).toISOString()}) is newer than entry ${i - 1} (${new Date(times[i - 1]!).toISOString()})`);
      }
    },
  );

  check(
    {
      id: 'feed-story-references-served',
      title: 'storyline and related references carry ids the story endpoint serves',
      requirements: ['feed-story-references'],
    },
    async (t) => {
      const { res } = await liveStoryBody();
      t.cite(res);
      const refs = storyReferences(jsonBody(res));
      t.observe('references', `${refs.storyline.length} storyline, ${refs.related.length} related`);
      for (const id of [...refs.storyline.slice(0, 3), ...refs.related.slice(0, 3)]) {
        expect([200, 308], `the story endpoint for referenced id "${id}"`).toContain(await storyStatus(id));
      }
    },
  );
});

describe('story ids the endpoint does not serve', () => {
  check(
    { id: 'feed-story-id-over-128', title: 'a publicId over 128 characters gets a 4xx problem response, never a 5xx', requirements: ['feed-story-id-length'] },
    async (t) => {
      const res = await feedGet(storyPath(`conformance-${'x'.repeat(129 - 12)}`));
      t.observe('status for a 129-character publicId', String(res.status));
      expectProblem(res, '4xx');
    },
  );

  check({ id: 'feed-story-unknown-404', title: 'an unknown story id answers 404 problem+json', requirements: ['feed-story-not-found'] }, async () => {
    expectProblem(await feedGet(storyPath(`conformance-unknown-${randomBytes(8).toString('hex')}`)), 404);
  });
});

describe('merged stories', () => {
  check(
    {
      id: 'feed-story-merged-308',
      title: 'a merged story answers 308 with a Location that leads straight to a story answering 200',
      requirements: ['feed-story-merged-308'],
    },
    async (t) => {
      const merged = await mergedStory();
      if (!merged)
        return t.notConfigured('set FEED_MERGED_STORY_ID to a merged story id; none was found by walking hot-topic story links and story references');
      t.cite(merged.res);
      t.observe('merged id from', merged.source);
      expect(merged.res.status, `GET ${storyPath(merged.id)}`).toBe(308);
      const location = merged.res.header('location');
      expect(location, '308 Location header').toBeTruthy();
      t.observe('Location form', /^[a-z][a-z0-9+.-]*:/i.test(location!) ? 'absolute' : 'relative');
      const target = new URL(location!, merged.res.url);
      expect(target.origin, 'Location stays on the feed service').toBe(new URL(merged.res.url).origin);
      const survivor = await feedGet(target.pathname + target.search);
      expect(survivor.status, `the surviving story ${target.pathname} answers 200 directly (no chain)`).toBe(200);
    },
  );
});
