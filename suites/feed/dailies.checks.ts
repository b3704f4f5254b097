/**
 * content-feed-service.md — Resources > Daily report; Endpoints > /api/v1/dailies, /dailies/latest, /dailies/{date}.
 */
import fc from 'fast-check';
import { check, expect, fail, precondition, checkGroup, type CheckTools } from '../../src/harness.js';
import {
  FEED_OPERATIONS,
  MISSING_DAILY_PROBE,
  contentOf,
  expectProblem,
  feedGet,
  inputJson,
  listOf,
  needsAccess,
  once,
  profile,
  sharedGet,
  targetNow,
  CLOCK_TOLERANCE_MS,
  instant,
} from '../../src/feed.js';
import { property } from '../../src/generate.js';
import { parseCacheControl, staleForADay, weakMatch } from '../../src/caching.js';
import { field, loadOpenApi, parameter } from '../../src/spec.js';
import { canonical } from '../../src/canonical.js';
import type { HttpResponse } from '../../src/http.js';

/** The dates an archive answer lists, in its order (`what`: the request, as a message names it). */
const archiveDates = (res: HttpResponse, what = `GET ${res.url}`) =>
  listOf(inputJson(res, what), profile().dailies.list!).map((e) => field(e, profile().dailies.date!));

const archive = () =>
  once('dailies-archive', async () => {
    const res = await sharedGet('/api/v1/dailies');
    needsAccess(res, 'GET /api/v1/dailies');
    precondition(res.status === 200, `GET /api/v1/dailies answered ${res.status}; the archive is these checks' input`);
    return { res, dates: archiveDates(res, 'GET /api/v1/dailies') };
  });

/** GET /api/v1/dailies/latest, once: asked after the archive by each check that reads both. */
const latestDaily = () => sharedGet('/api/v1/dailies/latest');

const isCalendarDate = (d: unknown): d is string =>
  typeof d === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(d) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d);

/**
 * The archive's YYYY-MM-DD dates, newest first whatever order the archive lists them in: the checks that are not
 * about the format or the order use these (feed-dailies-dates and feed-dailies-newest-first judge those).
 */
const calendarDates = (dates: unknown[]): string[] => [...new Set(dates.filter(isCalendarDate))].sort().reverse();

/**
 * The archive (cited) and its calendar dates, newest first; the check needs at least `min` of them: one report, or a
 * past report besides the newest.
 */
async function archiveDays(t: CheckTools, min: 1 | 2): Promise<Awaited<ReturnType<typeof archive>> & { days: string[] }> {
  const got = await archive();
  t.cite(got.res);
  const days = calendarDates(got.dates);
  precondition(
    days.length >= min,
    min === 1 ? 'needs at least one YYYY-MM-DD date in the archive' : 'needs a past report besides the newest (two YYYY-MM-DD dates in the archive)',
  );
  return { ...got, days };
}

/** The Shanghai calendar date (UTC+8, no daylight saving) and hour at an instant. */
function shanghai(ms: number): { date: string; hour: number } {
  const d = new Date(ms + 8 * 3_600_000);
  return { date: d.toISOString().slice(0, 10), hour: d.getUTCHours() };
}

const dailyDate = (res: { body: string; url: string; status: number }) =>
  field(field(inputJson(res, `GET ${res.url}`), profile().daily.root!), profile().daily.date!);

/** A report's content as a comparable string: keys sorted, its links left out. */
const sameContent = (v: unknown): string => canonical(v, ['links']);

/** The first top-level field in which two reports differ, for the message. */
function firstDifference(a: unknown, b: unknown): string {
  const o = (x: unknown) => (x !== null && typeof x === 'object' ? (x as Record<string, unknown>) : {});
  const keys = [...new Set([...Object.keys(o(a)), ...Object.keys(o(b))])].filter((k) => k !== 'links');
  const k = keys.find((key) => sameContent(o(a)[key]) !== sameContent(o(b)[key]));
  return k === undefined ? 'their shapes' : `${k}: ${JSON.stringify(o(a)[k])?.slice(0, 120)} (latest) vs ${JSON.stringify(o(b)[k])?.slice(0, 120)} (by date)`;
}

/**
 * The archive at the largest limit the description allows, asked once, when that is more than the default page listed
 * (`listed` dates): undefined otherwise.
 */
async function largestArchive(listed: number): Promise<{ max: number; res: HttpResponse } | undefined> {
  const max = (parameter(await loadOpenApi('feed'), 'listDailies', 'limit').schema as { maximum?: number } | undefined)?.maximum;
  if (typeof max !== 'number' || max <= listed) return undefined;
  return { max, res: await sharedGet('/api/v1/dailies', { limit: String(max) }) };
}

/**
 * `asked` and the oldest YYYY-MM-DD date the archive lists at all (its page at the largest limit, when larger than
 * `listed` and answered 200): where retention ends.
 */
async function withOldestListed(t: CheckTools, listed: number, asked: string[]): Promise<string[]> {
  const large = await largestArchive(listed);
  if (large?.res.status !== 200) return asked;
  t.cite(large.res);
  const oldest = calendarDates(archiveDates(large.res)).at(-1);
  if (oldest === undefined || asked.includes(oldest)) return asked;
  t.observe('the oldest date listed at the largest limit', oldest);
  return [...asked, oldest];
}

/** The archive at the largest limit the description allows (a bigger page may take another query path): newest first there too. */
async function orderAtLargestLimit(t: CheckTools, listed: number): Promise<void> {
  const l = await largestArchive(listed);
  if (!l) return;
  const { max, res: large } = l;
  t.cite(large);
  if (large.status !== 200) return t.observe(`limit=${max}`, `answered ${large.status} (feed-dailies-limit-range judges that)`);
  const all = archiveDates(large);
  expect(all, `archive order at limit=${max}`).toEqual([...all].sort().reverse());
}

checkGroup('the daily-report archive', () => {
  check(
    { id: 'feed-dailies-dates', title: 'archive entries are keyed by YYYY-MM-DD calendar dates', requirements: ['feed-dailies-date-format'] },
    async (t) => {
      const { res, dates } = await archive();
      t.cite(res);
      precondition(dates.length > 0, 'the archive is empty');
      for (const d of dates) if (!isCalendarDate(d)) t.violation(`archive date ${JSON.stringify(d)} is not a YYYY-MM-DD calendar date`);
    },
  );

  check(
    {
      id: 'feed-dailies-newest-first',
      title: 'the archive lists dates newest first, at the default limit and at the largest',
      requirements: ['feed-dailies-archive-order'],
    },
    async (t) => {
      const { res, dates } = await archive();
      t.cite(res);
      precondition(dates.length > 1, 'the archive has fewer than two entries');
      expect(dates, 'archive order').toEqual([...dates].sort().reverse());
      expect(new Set(dates).size, 'each date once').toBe(dates.length);
      await orderAtLargestLimit(t, dates.length);
    },
  );

  check(
    {
      id: 'feed-dailies-each-date-answers',
      title: 'archive dates, the newest and the oldest, answer 200 on /api/v1/dailies/{date} with that report',
      requirements: ['feed-dailies-by-date'],
    },
    async (t) => {
      const { dates, days } = await archiveDays(t, 1);
      if (days.length < dates.length)
        t.observe('archive entries not requested', `${dates.length - days.length} (not YYYY-MM-DD: feed-dailies-dates judges them)`);
      // The dates at both ends of the default archive page (the newest, where publication happens, and the
      // oldest, where retention does): all of them when the page holds up to 2 x ENDS dates. Asked for together
      // (the client bounds the requests in flight) and judged in archive order.
      const ends = days.length <= 2 * ENDS ? days : [...days.slice(0, ENDS), ...days.slice(-ENDS)];
      if (ends.length < days.length) t.observe('dates asked for', `the newest ${ENDS} and the oldest ${ENDS} of ${days.length}`);
      const asked = await withOldestListed(t, dates.length, ends);
      const answers = await Promise.all(asked.map((d) => sharedGet(`/api/v1/dailies/${String(d)}`)));
      for (const [i, d] of asked.entries()) {
        const r = answers[i]!;
        t.cite(r);
        needsAccess(r, `GET /api/v1/dailies/${d}`);
        expect(r.status, `GET /api/v1/dailies/${String(d)}`).toBe(200);
        expect(dailyDate(r), 'the report for that date').toBe(d);
      }
    },
  );

  check(
    { id: 'feed-dailies-latest-is-newest', title: 'the latest daily report is the archive newest entry', requirements: ['feed-dailies-latest'] },
    async (t) => {
      const { res, dates } = await archive();
      t.cite(res);
      const latest = await latestDaily();
      t.cite(latest);
      needsAccess(latest, 'GET /api/v1/dailies/latest');
      const days = calendarDates(dates);
      precondition(days.length === dates.length, 'needs an archive of YYYY-MM-DD dates (feed-dailies-dates judges the format)');
      if (dates.length === 0) {
        t.observe('empty archive', `latest answered ${latest.status}`);
        expectProblem(latest, 404);
        return;
      }
      expect(latest.status, 'GET /api/v1/dailies/latest').toBe(200);
      // A report published between the two requests (a run across 08:00 Shanghai): the archive read again heads with it.
      const newer = dailyDate(latest) !== days[0] ? await feedGet('/api/v1/dailies', { query: { limit: 1 }, continuation: true }) : undefined;
      if (newer) t.cite(newer);
      const head = newer?.status === 200 ? archiveDates(newer, 'GET /api/v1/dailies')[0] : days[0];
      // Reports published meanwhile (a live feed may publish more than one while the run reads it): latest is then newer
      // than the archive's head as first read, and no newer than its head read again.
      const l = dailyDate(latest);
      if (typeof head === 'string' && typeof l === 'string' && l > days[0]! && l <= head)
        t.observe('published meanwhile', `${l}, after the archive was read (its head read again: ${head})`);
      else expect(dailyDate(latest), 'latest report date (the newest archive date)').toBe(days[0]);
    },
  );

  check(
    {
      id: 'feed-dailies-not-before-publication',
      title: 'no report is dated after the Asia/Shanghai date, nor today before 08:00 Shanghai',
      requirements: ['feed-dailies-publication-time'],
    },
    async (t) => {
      const { res, days } = await archiveDays(t, 1);
      // The target's clock (its Date header) decides "today": a runner a few minutes off does not misjudge 08:00.
      const clock = targetNow(res);
      const now = shanghai(clock.now);
      const newestAllowed = now.hour >= 8 ? now.date : shanghai(clock.now - 86_400_000).date;
      t.observe('Shanghai time at the response', `${now.date} ${String(now.hour).padStart(2, '0')}h, from ${clock.source}`);
      if (days[0]! > newestAllowed) fail(`the newest report is dated ${days[0]}, after ${newestAllowed}, the newest date published by then`);
      // Nor generated after it is served: an archive entry whose generatedAt (where it carries one, as an instant with
      // its offset: a local time without one is not read) lies after the answer's own Date (beyond CLOCK_TOLERANCE_MS)
      // was not published by then either. Judged by the target's clock only, never the runner's.
      const later = (clock.fromTarget ? listOf(inputJson(res, 'GET /api/v1/dailies'), profile().dailies.list!) : []).flatMap((e) => {
        const g = field(e, 'generatedAt');
        const at = instant(g);
        return at !== undefined && at > clock.now + CLOCK_TOLERANCE_MS ? [`${String(field(e, profile().dailies.date!))}: generatedAt ${String(g)}`] : [];
      });
      if (later.length)
        fail(
          `the archive, answered at ${new Date(clock.now).toISOString()} (${clock.source}), lists report(s) generated after that: ${later.slice(0, 3).join('; ')}`,
        );
    },
  );

  check(
    {
      id: 'feed-dailies-archive-latest-not-immutable',
      title: 'the archive and the latest report are not marked immutable nor fresh for more than a day: a new report comes every day',
      requirements: ['feed-dailies-archive-latest-revalidated'],
    },
    async (t) => {
      const { res } = await archive();
      const latest = await latestDaily();
      t.cite(res, latest);
      const answers = [res, latest].filter((r) => r.status === 200);
      // An archive or latest not served is the checks of those operations' finding; here there is no Cache-Control to read.
      precondition(answers.length > 0, `neither the archive nor latest answered 200 (${res.status}, ${latest.status})`);
      const read = answers.filter((r) => r.header('cache-control'));
      precondition(read.length > 0, 'no Cache-Control to read', 'feed-200-etag-cache-control');
      for (const r of read) t.observe(`Cache-Control of ${new URL(r.url).pathname}`, r.header('cache-control')!);
      const bad = read.flatMap((r) => staleForADay(r.header('cache-control')!).map((why) => `${new URL(r.url).pathname}: ${why}`));
      if (bad.length)
        fail(
          `${bad.join('; ')}: the archive and latest change with each day's report (only past reports are immutable), so a cache must ask again within a day`,
        );
    },
  );

  check(
    { id: 'feed-dailies-past-immutable', title: 'a past report does not change: the same body each time', requirements: ['feed-dailies-immutable'] },
    async (t) => {
      const { days } = await archiveDays(t, 2);
      const path = `/api/v1/dailies/${days[1]}`;
      const a = await feedGet(path);
      const b = await feedGet(path);
      t.cite(a, b);
      // A past date that is not served is feed-dailies-by-date's finding; here there is no report to compare.
      precondition(a.status === 200 && b.status === 200, `needs a past report served with 200 (${path} answered ${a.status}, ${b.status})`);
      // The report itself is what must not change (its content, not an envelope such as a per-request stamp);
      // whether its ETag stays the same is feed-etag-stable's business.
      t.observe('ETags', weakMatch(a.header('etag') ?? 'a', b.header('etag') ?? 'b') ? 'the same both times' : `${a.header('etag')} then ${b.header('etag')}`);
      const report = FEED_OPERATIONS.find((o) => o.operationId === 'getDaily')!;
      if (a.body !== b.body) t.observe('bodies', 'differ outside the report (the envelope)');
      expect(contentOf(report, b), `the report of ${path}`).toBe(contentOf(report, a));
    },
  );
});

checkGroup('one report, two URLs', () => {
  check(
    {
      id: 'feed-dailies-latest-same-by-date',
      title: 'the latest report and /api/v1/dailies/{its date} are one report: the same content',
      requirements: ['feed-dailies-by-date'],
    },
    async (t) => {
      const latest = await latestDaily();
      t.cite(latest);
      needsAccess(latest, 'GET /api/v1/dailies/latest');
      if (latest.status === 404) return t.notApplicable('no latest report (404, which the document allows)');
      precondition(latest.status === 200, `GET /api/v1/dailies/latest answered ${latest.status}`, 'feed-dailies-latest');
      const d = dailyDate(latest);
      precondition(isCalendarDate(d), `the latest report is dated ${JSON.stringify(d)}, not YYYY-MM-DD`, 'feed-dailies-date-format');
      // Keyed by its date, one a day: the report of that date is one report, whichever URL serves it (a past one
      // immutable). The by-date answer is the one feed-dailies-each-date-answers asks for when the date heads the archive.
      const byDate = await sharedGet(`/api/v1/dailies/${d}`);
      t.cite(byDate);
      needsAccess(byDate, `GET /api/v1/dailies/${d}`);
      expect(byDate.status, `GET /api/v1/dailies/${d}, the latest report's date`).toBe(200);
      const report = (r: typeof latest) => field(inputJson(r, `GET ${r.url}`), profile().daily.root!);
      // Links aside: a URL of the report may name the path it was reached by.
      const a = sameContent(report(latest));
      const b = sameContent(report(byDate));
      if (a !== b)
        t.violation(`the report of ${d} differs between /api/v1/dailies/latest and /api/v1/dailies/${d}: ${firstDifference(report(latest), report(byDate))}`);
    },
  );
});

checkGroup('past reports may be cached', () => {
  check(
    {
      id: 'feed-dailies-past-storable',
      title: 'a past report may be cached indefinitely: its Cache-Control does not say no-store',
      requirements: ['feed-dailies-immutable'],
    },
    async (t) => {
      const { days } = await archiveDays(t, 2);
      const path = `/api/v1/dailies/${days[1]}`;
      const past = await feedGet(path);
      t.cite(past);
      precondition(past.status === 200, `needs a past report served with 200 (${path} answered ${past.status})`);
      const cc = past.header('cache-control') ?? '';
      t.observe('Cache-Control', cc || '(none)');
      // no-store forbids every cache to keep the response (RFC 9111 5.2.2.5); the document says it may be cached
      // indefinitely. Any freshness lifetime, private and no-cache (store, then revalidate) keep it cacheable.
      expect(parseCacheControl(cc).has('no-store'), `Cache-Control "${cc}" of the past report ${path} forbids caching it`).toBe(false);
    },
  );
});

/** The archive dates asked for at each end of the archive page. */
const ENDS = 4;

/** Control of the refusals by date: a date the archive names is served, so a refusal is about the date, not about access. */
/** The control request: the archive's newest date served; gives that date. */
async function archiveControl(t: CheckTools): Promise<string> {
  const { res, dates } = await archive();
  const days = calendarDates(dates);
  precondition(days.length > 0, 'needs at least one YYYY-MM-DD date in the archive (the control request)');
  const control = await sharedGet(`/api/v1/dailies/${days[0]}`);
  t.cite(res, control);
  needsAccess(control, `GET /api/v1/dailies/${days[0]}`);
  return days[0]!;
}

checkGroup('a date without a report', () => {
  check(
    {
      id: 'feed-dailies-missing-date-404',
      title: 'a well-formed date with no report answers 404, a problem response, not 200',
      requirements: ['feed-dailies-missing-404'],
    },
    async (t) => {
      await archiveControl(t);
      // Well formed, and before any report of this service could exist. With If-None-Match: * (a client always sends
      // one): it matches a current representation only (RFC 9110 13.1.2), and a date without a report has none.
      const missing = await feedGet(`/api/v1/dailies/${MISSING_DAILY_PROBE}`, { headers: { 'if-none-match': '*' } });
      t.cite(missing);
      t.observe('asked', `GET /api/v1/dailies/${MISSING_DAILY_PROBE} with If-None-Match: *`);
      expectProblem(missing, 404);
    },
  );
});

checkGroup('daily dates the endpoint rejects', () => {
  check(
    { id: 'feed-dailies-date-malformed', title: 'a malformed or impossible date is rejected with 400', requirements: ['feed-dailies-date-invalid'] },
    async (t) => {
      const served = await archiveControl(t);
      const malformed = fc.oneof(
        fc.constantFrom('2026-02-30', '2025-02-29', '2026-13-01', '2026-00-10', '2026-04-31', '20260101', '2026-1-5', 'yesterday', '2026-01-01T00:00'),
        fc
          .tuple(fc.integer({ min: 2000, max: 2099 }), fc.integer({ min: 13, max: 99 }), fc.integer({ min: 1, max: 28 }))
          .map(([y, m, d]) => `${y}-${m}-${String(d).padStart(2, '0')}`),
        fc
          .tuple(fc.integer({ min: 2000, max: 2099 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 32, max: 99 }))
          .map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${d}`),
      );
      // A date the archive serves, written in another form (basic, with a time, unpadded, followed by a letter), is
      // malformed all the same; unpadded in its year's January too (the served date may have no zero to leave out, as
      // on 2026-11-26). The letter: a pattern not anchored at its end, or a filter that drops what is not a digit.
      const [y, m, d] = served.split('-');
      const forms = [`${y}${m}${d}`, `${served}T08:00:00+08:00`, `${y}-${Number(m)}-${Number(d)}`, `${y}-1-5`, `${served}x`, '2026-02-30'];
      await property(malformed, async (v) => void expectProblem(await feedGet(`/api/v1/dailies/${encodeURIComponent(v)}`), 400), {
        runs: 5,
        examples: [...new Set(forms)].filter((f) => f !== served),
      });
    },
  );
});
