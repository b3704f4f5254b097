/**
 * content-feed-service.md — Resources > Hot topic; Endpoints > GET /api/v1/hot-topics.
 */
import { check, expect, fail, precondition, PreconditionFailed, checkGroup } from '../../src/harness.js';
import { feedGet, heatNamedKeys, inputJson, listOf, once, profile, storyStatus } from '../../src/feed.js';
import { componentSchema, field } from '../../src/spec.js';
import { parseCacheControl, sMaxAge } from '../../src/caching.js';
import { operationPath } from '../../src/context.js';

const hotTopics = () =>
  once('hot-topics', async () => {
    const res = await feedGet('/api/v1/hot-topics');
    // Whether it answers 200 is the anonymous-access check's requirement; these check what a 200 holds.
    if (res.status !== 200) throw new PreconditionFailed(`GET /api/v1/hot-topics answered ${res.status}, not 200`, ['feed-anonymous-access']);
    return { res, entries: listOf(inputJson(res, `GET ${res.url}`), profile().hotTopics.list!) as Record<string, unknown>[] };
  });

/** Numbers anywhere inside a value, by dotted path (array elements by index). */
function numericLeaves(v: unknown, prefix = '', out = new Map<string, number>()): Map<string, number> {
  if (typeof v === 'number' && prefix) out.set(prefix, v);
  else if (Array.isArray(v)) v.forEach((x, i) => numericLeaves(x, `${prefix}${prefix ? '.' : ''}${i}`, out));
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) numericLeaves(x, `${prefix}${prefix ? '.' : ''}${k}`, out);
  return out;
}

checkGroup('hot topics', () => {
  check({ id: 'feed-hot-topics-ten-entries', title: 'the hot-topics response has ten entries', requirements: ['feed-hot-topics-ten'] }, async (t) => {
    const { res, entries } = await hotTopics();
    t.cite(res);
    expect(entries.length, 'entries').toBe(10);
  });

  check(
    { id: 'feed-hot-topics-ten-topics', title: 'the ten entries are ten topics: no entry repeats another', requirements: ['feed-hot-topics-ten'] },
    async (t) => {
      const { res, entries } = await hotTopics();
      t.cite(res);
      // Two entries alike in everything but their rank are one topic listed twice.
      const topics = entries.map((e) => JSON.stringify(Object.entries(e).filter(([k]) => k !== 'rank')));
      const twice = entries.filter((_e, i) => topics.indexOf(topics[i]!) !== i).map((e) => JSON.stringify(e.rank));
      if (twice.length) t.violation(`the entries ranked ${twice.join(', ')} repeat an earlier entry in everything but rank: fewer than ten topics`);
    },
  );

  check({ id: 'feed-hot-topics-ranks', title: 'rank is a one-based integer: the entries rank 1 to 10', requirements: ['feed-hot-topics-rank'] }, async (t) => {
    const { res, entries } = await hotTopics();
    t.cite(res);
    const ranks = entries.map((e) => e.rank);
    for (const r of ranks) expect(Number.isInteger(r), `rank ${JSON.stringify(r)} is an integer`).toBe(true);
    expect(
      [...ranks].sort((a, b) => Number(a) - Number(b)),
      'ranks',
    ).toEqual(entries.map((_, i) => i + 1));
  });

  check({ id: 'feed-hot-topics-no-heat', title: 'no internal or display heat value is exposed', requirements: ['feed-hot-topics-no-heat'] }, async (t) => {
    const { res, entries } = await hotTopics();
    t.cite(res);
    const named = [...new Set(heatNamedKeys(entries))];
    if (named.length) t.violation(`entries carry fields named like a heat value: ${named.join(', ')}`);
    // The ranking is by coverage and heat: a number the description does not declare that orders the ten entries
    // the way their ranks do is the ranking value itself, whatever its name. Coverage counts are declared.
    const declared = new Set(Object.keys(((await componentSchema('feed', 'HotTopic')) as { properties?: object }).properties ?? {}));
    const ranked = entries.filter((e) => Number.isInteger(e.rank)).sort((a, b) => Number(a.rank) - Number(b.rank));
    precondition(ranked.length >= 3, `needs at least three ranked entries to compare numbers with ranks (got ${ranked.length})`);
    const series = new Map<string, number[]>();
    ranked.forEach((e, i) => {
      for (const [path, n] of numericLeaves(e)) {
        if (declared.has(path.split('.')[0]!)) continue;
        const values = series.get(path) ?? [];
        values[i] = n;
        series.set(path, values);
      }
    });
    const ordering: string[] = [];
    for (const [path, all] of series) {
      // On the entries that carry it, in rank order: a heat value shown on the top entries only is still one.
      const values = all.filter((v) => v !== undefined);
      if (values.length < 3) continue;
      const nonIncreasing = values.every((v, i) => i === 0 || v <= values[i - 1]!);
      if (nonIncreasing && new Set(values).size > 1)
        ordering.push(`${path} (${values.join(', ')}${values.length < ranked.length ? `, on ${values.length} of ${ranked.length} entries` : ''})`);
    }
    t.observe('undeclared numeric fields', series.size ? [...series.keys()].join(', ') : 'none');
    if (ordering.length) t.violation(`undeclared numbers that order the entries as their ranks do (an exposed heat value): ${ordering.join('; ')}`);
  });
});

checkGroup('hot-topic original links', () => {
  check(
    {
      id: 'feed-hot-topics-original-link',
      title: 'a hot-topic entry that links its original article gives links.original as a URL (absolute, as a client follows it)',
      requirements: ['feed-item-original-link'],
    },
    async (t) => {
      const { res, entries } = await hotTopics();
      t.cite(res);
      // An entry is a topic, not an item: whether it carries the link is not asked here; where it does, the field
      // is the item table's "URL of the original article", and a reference a client cannot resolve on its own
      // (a scheme-relative "//host/path", a bare path) is no URL of the article.
      const links = entries.map((e) => field(e, 'links.original')).filter((l) => l !== undefined);
      t.observe('entries with links.original', `${links.length} of ${entries.length}`);
      if (links.length === 0) return t.notApplicable('no hot-topic entry carries links.original');
      const bad = links.filter((l) => typeof l !== 'string' || !URL.canParse(l));
      if (bad.length)
        t.violation(
          `links.original that are not absolute URLs: ${bad
            .slice(0, 5)
            .map((l) => JSON.stringify(l))
            .join(', ')}`,
        );
    },
  );
});

checkGroup('hot-topic story links and caching', () => {
  check(
    {
      id: 'feed-hot-topics-story-links',
      title: 'links.story, when present, is an HTML URL whose last segment is a story id the story endpoint serves',
      requirements: ['feed-hot-topics-story-link'],
    },
    async (t) => {
      const { res, entries } = await hotTopics();
      t.cite(res);
      const links = entries.map((e) => field(e, profile().hotTopics.storyLink!)).filter((l) => l !== undefined && l !== null);
      t.observe('entries with links.story', `${links.length} of ${entries.length}`);
      for (const link of links) {
        expect(link, 'links.story is a string').toBeTypeOf('string');
        let url: URL;
        try {
          url = new URL(link as string);
        } catch {
          return t.violation(`links.story ${JSON.stringify(link)} is not an absolute URL`);
        }
        expect(url.protocol, `the scheme of links.story ${url.href} (a web page URL)`).toBeOneOf(['http:', 'https:']);
        // Human-facing: not the JSON API's own story operation (every API path is under /api/v1 of the base URL).
        if (operationPath('feed', url.href)?.startsWith('/api/v1/'))
          t.violation(`links.story ${url.href} is a path of the JSON API (/api/v1), not the human-facing HTML page of the story`);
        // The final path segment, as a client reads it: after a trailing slash it is empty, and no id can be taken.
        const segment = decodeURIComponent(url.pathname.split('/').pop() ?? '');
        if (segment === '') t.violation(`links.story ${url.href} ends in "/": its final path segment is empty, not the story's publicId`);
        const status = await storyStatus(segment);
        // A refusal (401/403) says nothing about the link: whether stories are open is the anonymous-access check's.
        if (status === 401 || status === 403) throw new PreconditionFailed(`the story endpoint refused "${segment}" with ${status}`, ['feed-anonymous-access']);
        // A redirect means a merged story: the id is one the endpoint knows (its status is feed-story-merged-308's to judge).
        if (status !== 200 && !(status >= 300 && status < 400))
          fail(`the story endpoint for "${segment}" (last segment of ${url.href}): ${status}, where 200 (or a redirect, for a merged story) is required`);
      }
    },
  );

  check(
    {
      id: 'feed-hot-topics-s-maxage-60',
      title: 'hot topics carry a 60 s shared-cache freshness window (s-maxage=60)',
      requirements: ['feed-hot-topics-shared-cache-60s'],
    },
    async (t) => {
      const { res } = await hotTopics();
      t.cite(res);
      const cc = res.header('cache-control');
      // A missing Cache-Control or s-maxage is the root cause the checks citing those requirements report.
      precondition(
        cc && sMaxAge(cc) !== undefined,
        `hot topics carry no s-maxage ("${cc ?? '(no Cache-Control)'}")`,
        'feed-200-etag-cache-control',
        'feed-cache-control-s-maxage',
      );
      expect(sMaxAge(cc), `s-maxage in "${cc}"`).toBe(60);
    },
  );

  check(
    {
      id: 'feed-hot-topics-shared-cacheable',
      title: 'hot topics may be used by shared caches for their freshness window: no private, no-store or no-cache',
      requirements: ['feed-hot-topics-shared-cache-60s'],
    },
    async (t) => {
      const { res } = await hotTopics();
      t.cite(res);
      const cc = res.header('cache-control');
      precondition(cc, 'hot topics carry no Cache-Control', 'feed-200-etag-cache-control');
      // RFC 9111 5.2.2: private keeps shared caches from storing it, no-store keeps every cache from it, no-cache
      // forbids using it without revalidation: each takes away the 60 s window shared caches are to use.
      const forbidding = ['private', 'no-store', 'no-cache'].filter((d) => parseCacheControl(cc).has(d));
      if (forbidding.length) fail(`Cache-Control "${cc}" carries ${forbidding.join(', ')}: shared caches cannot use the 60 s freshness window`);
    },
  );
});
