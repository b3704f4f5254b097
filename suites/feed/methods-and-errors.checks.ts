/**
 * content-feed-service.md — What the service does (GET only, anonymous, JSON bodies); Authentication; Errors.
 */
import { check, expect, jsonBody, precondition, PreconditionFailed, checkGroup } from '../../src/harness.js';
import { FEED_OPERATIONS, MAY_BE_ABSENT, discoveryJson, feedGet, once, operationProbe, type FeedOperation } from '../../src/feed.js';
import { field, kebab } from '../../src/spec.js';
import type { HttpResponse } from '../../src/http.js';

/** The plain GET of each operation's shared probe: it carries no credential of any kind. */
const plainGet = async (op: FeedOperation) => ({ res: (await operationProbe(op)).first });

/** The streams a client may ask for, and the content types of streams. */
const STREAM_ACCEPT = 'text/event-stream, application/x-ndjson';
const STREAM_TYPES = /^(text\/event-stream|application\/(x-)?ndjson|application\/jsonl|application\/json-seq|application\/stream\+json)$/;

/** A body framed as a stream: SSE fields at line starts, or two or more lines that are each a JSON document (NDJSON). */
function streamed(body: string): boolean {
  if (/^(data|event|id|retry):/m.test(body)) return true;
  const lines = body.split('\n').filter((l) => l.trim() !== '');
  if (lines.length < 2) return false;
  return lines.every((l) => {
    try {
      JSON.parse(l);
      return true;
    } catch {
      return false;
    }
  });
}

checkGroup('every operation is a GET, open to anyone, answering JSON', () => {
  for (const op of FEED_OPERATIONS) {
    const name = op.operationId;
    check({ id: `feed-anonymous-${kebab(name)}`, title: `${name} answers without any credential`, requirements: ['feed-anonymous-access'] }, async (t) => {
      const { res } = await plainGet(op);
      t.cite(res);
      expect(res.header('www-authenticate'), 'WWW-Authenticate (an authentication challenge)').toBeUndefined();
      expect(res.status, `${name} without credentials`).not.toBeOneOf([401, 403]);
      if (res.status === 404 && MAY_BE_ABSENT.has(name)) throw new PreconditionFailed(`${name} answered 404, which the document allows`);
      // A 400 to a request built from the feed's own answers (a story id, a date, a snapshot cursor, a limit) judges
      // that input, not anonymous access: the checks of that input's requirements (op.input) report it.
      if (res.status === 400 && op.input) {
        const { path } = await op.resolve();
        throw new PreconditionFailed(`${name} answered 400 to ${path} with the input the feed gave`, op.input);
      }
      expect(res.status, `${name} without credentials`).toBe(200);
    });

    check({ id: `feed-json-body-${kebab(name)}`, title: `${name}: a successful body is JSON`, requirements: ['feed-success-json'] }, async (t) => {
      const { res } = await plainGet(op);
      t.cite(res);
      if (res.status !== 200) throw new PreconditionFailed(`${name} answered ${res.status}, not 200`);
      expect(res.header('content-type'), 'Content-Type').toMatch(
        /^application\/([\w.-]+\+)?json\b/i,
        'a JSON media type (application/json or application/*+json)',
      );
      jsonBody(res);
    });

    // Only the status is feed-get-only's: the problem format of these 405s is asserted by the checks citing it
    // (the run-wide checks see every error of the run).
    check({ id: `feed-post-405-${kebab(name)}`, title: `${name}: POST answers 405`, requirements: ['feed-get-only'] }, async () => {
      // Control: GET of the same path answers 200, so a refusal of everything is not read as "POST not allowed".
      const control = (await operationProbe(op)).first;
      precondition(control.status === 200, `GET of ${name} answered ${control.status}, not 200`, 'feed-anonymous-access');
      const { path } = await op.resolve();
      const res = await feedGet(path, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(res.status, `POST ${path}`).toBe(405);
    });
  }

  // Every other method on every operation: a write served as a read is a departure wherever it happens.
  for (const op of FEED_OPERATIONS)
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const name = op.operationId;
      const id = name === 'listItems' ? `feed-${method.toLowerCase()}-405` : `feed-${method.toLowerCase()}-405-${kebab(name)}`;
      check({ id, title: `${method} on ${name} answers 405`, requirements: ['feed-get-only'] }, async () => {
        const control = (await operationProbe(op)).first;
        precondition(control.status === 200, `GET of ${name} answered ${control.status}, not 200`, 'feed-anonymous-access');
        const { path, query } = await op.resolve();
        const res = await feedGet(path, { method, query, ...(method === 'DELETE' ? {} : { body: '{}', headers: { 'content-type': 'application/json' } }) });
        expect(res.status, `${method} ${path}`).toBe(405);
      });
    }
});

// "Every operation is open to any caller": a caller that sends a credential of its own (a key it uses elsewhere, a
// proxy's Authorization) is a caller too. "There is no push channel: no SSE": a client asking for an event stream
// gets no event stream. One request each per operation, beside its plain probe.
const CREDENTIAL_HEADERS = {
  authorization: 'Bearer conformance-unknown-credential',
  'x-api-key': 'conformance-unknown-credential',
  // A browser's caller: a page of another site, asking as browsers and HTTP libraries do (an Accept list with
  // q-values), under another client's name.
  origin: 'https://conformance.invalid',
  accept: 'application/json;q=0.9, */*;q=0.8',
  'user-agent': 'curl/8.5.0',
};
/** A field of a response's JSON body; undefined when absent or when the body is not JSON. */
const fieldOf = (r: HttpResponse, path: string): unknown => field(discoveryJson(r), path);
/** The key paths of a value's objects, nested objects included (not into arrays, whose elements come and go). */
const keyPaths = (v: unknown, at: string): string[] =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
    ? [at, ...Object.entries(v).flatMap(([k, x]) => keyPaths(x, `${at}.${k}`))]
    : v === undefined
      ? []
      : [at];
/** The operations whose answer to the caller above is compared with the plain one, key by key. */
const CONTENT_COMPARED = new Set(['getStory', 'getDaily']);
checkGroup('a caller that names no client', () => {
  // "The service is anonymous and needs no API key": a caller that names no client at all (a script, a bare HTTP
  // library) is a caller too. The conditions of a 403 are not shown (a deployment may turn such callers away), but a
  // 401, or an authentication challenge, asks for a credential the service has none of. One request.
  check(
    {
      id: 'feed-anonymous-without-user-agent',
      title: 'a request with an empty User-Agent is not asked for a credential: no 401, no WWW-Authenticate',
      requirements: ['feed-anonymous-access'],
    },
    async (t) => {
      const res = await feedGet('/api/v1/hot-topics', { headers: { 'user-agent': '' } });
      t.cite(res);
      t.observe('status to a request with an empty User-Agent', String(res.status));
      expect(res.header('www-authenticate'), 'WWW-Authenticate (an authentication challenge)').toBeUndefined();
      expect(res.status, 'GET /api/v1/hot-topics with an empty User-Agent').not.toBe(401);
    },
  );
});

checkGroup('a caller with a credential, a client asking for a stream', () => {
  // Not the changes feed: its one URL (the snapshot's cursor) is fetched by the most checks already, up to the suite's own per-URL bound.
  for (const op of FEED_OPERATIONS.filter((o) => o.operationId !== 'selectedChanges')) {
    const name = op.operationId;
    check(
      {
        id: `feed-anonymous-with-credential-${kebab(name)}`,
        title: `${name} answers a request that carries Authorization, X-Api-Key and Origin headers, a browser's Accept list and another client's User-Agent as it answers one without`,
        requirements: ['feed-anonymous-access'],
      },
      async (t) => {
        const control = (await operationProbe(op)).first;
        precondition(control.status === 200, `GET of ${name} answered ${control.status}, not 200`, 'feed-anonymous-access');
        const { path, query } = await op.resolve();
        // The listing under another query (the operation's own documented value), so its plain URL is not fetched once more.
        const q = name === 'listItems' ? { mode: 'all' } : query;
        const res = await feedGet(path, { query: q, headers: CREDENTIAL_HEADERS });
        t.cite(control, res);
        if (res.status !== 200 && q !== query) {
          // The other query is this check's choice: whether the feed serves it at all is its parameter's check's.
          const plain = await feedGet(path, { query: q });
          t.cite(plain);
          precondition(plain.status === 200, `GET ${path}?mode=all answered ${plain.status} without a credential too`, 'feed-items-mode-enum');
        }
        // A story merged since its probe answers 308 to anyone: the merge checks' business.
        if (name === 'getStory' && res.status === 308) return t.notApplicable('the story was merged since its probe (308)');
        expect(res.status, `${name} with Authorization: Bearer … and X-Api-Key: … (an unknown credential), Accept with q-values, User-Agent curl`).toBe(200);
        // A story or a report by date, the same URL as the plain probe: no key of the content the plain answers before
        // and after it carry is missing from this caller's (a field left out for a caller is an answer made for it; a
        // changed value may be a cache or a replica behind, and is not judged). The listings, the ranking and the
        // snapshot are not read here (the request budget).
        if (q !== query || !CONTENT_COMPARED.has(name)) return;
        const keys = (r: HttpResponse) => new Set(op.content().flatMap((f) => keyPaths(fieldOf(r, f), f)));
        const mine = keys(res);
        const lacking = [...keys(control)].filter((k) => !mine.has(k));
        if (lacking.length === 0) return;
        const again = await feedGet(path, { query, continuation: true });
        t.cite(again);
        const plainAgain = keys(again);
        const dropped = lacking.filter((k) => plainAgain.has(k));
        if (dropped.length) t.violation(`${name} answered this caller without ${dropped.join(', ')}, which the plain request before and after it carries`);
      },
    );
  }
  // Every operation, asked for a stream in each form a client may ask (SSE, NDJSON): "no SSE, no webhooks, no
  // streaming". One request each, both types in one Accept: a deployment that streams on either answers with it.
  for (const op of FEED_OPERATIONS) {
    const name = op.operationId;
    check(
      {
        id: `feed-no-sse-${kebab(name)}`,
        title: `${name} asked with Accept: text/event-stream, application/x-ndjson answers no stream: one JSON document, or a refusal`,
        requirements: ['feed-no-push-channel'],
      },
      async (t) => {
        const { path, query, evidence } = await op.resolve();
        t.cite(...evidence);
        const q = name === 'listItems' ? { ...query, limit: 5 } : query;
        const res = await feedGet(path, { query: q, headers: { accept: STREAM_ACCEPT } });
        t.cite(res);
        const type = (res.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
        t.observe(`status to Accept: ${STREAM_ACCEPT}`, `${res.status} ${type}`);
        expect(STREAM_TYPES.test(type), `the content type ${type || '(none)'} is a stream's`).toBe(false);
        // A stream under a JSON content type still shows as one: SSE framing, or one JSON document a line. A body that
        // is no JSON and no stream either is the JSON body rule's finding (feed-success-json), not this one's.
        if (res.status === 200 && streamed(res.body))
          t.violation(`the 200 (${type || 'no content type'}) is framed as a stream: ${JSON.stringify(res.body.slice(0, 80))}`);
      },
    );
  }
});

// A push channel at a path of its own (an SSE endpoint, a webhook registration) is a push channel all the same: the
// names such services use, each asked once. Any answer but a 2xx is no channel (404, 405, a problem of any kind).
const PUSH_PATHS: { method: string; path: string }[] = [
  { method: 'GET', path: '/api/v1/stream' },
  { method: 'GET', path: '/api/v1/events' },
  { method: 'POST', path: '/api/v1/webhooks' },
];
checkGroup('no push endpoint', () => {
  check(
    {
      id: 'feed-no-push-endpoint',
      title: `no push endpoint: ${PUSH_PATHS.map((p) => `${p.method} ${p.path}`).join(', ')} are not served`,
      requirements: ['feed-no-push-channel'],
    },
    async (t) => {
      for (const { method, path } of PUSH_PATHS) {
        const post =
          method === 'POST' ? { body: JSON.stringify({ url: 'https://conformance.invalid/hook' }), headers: { 'content-type': 'application/json' } } : {};
        const res = await feedGet(path, { method, ...post, ...(method === 'GET' ? { headers: { accept: STREAM_ACCEPT } } : {}) });
        t.cite(res);
        t.observe(`${method} ${path}`, String(res.status));
        if (res.status >= 200 && res.status < 300)
          t.violation(`${method} ${path} answered ${res.status} (${res.header('content-type') ?? 'no content type'}): a push channel`);
      }
    },
  );
});

checkGroup('problem responses', () => {
  // One rejected request, two requirements: each is its own check, so a defect in one fails only that one.
  const rejected = () => once('rejected-dailies-limit', () => feedGet('/api/v1/dailies', { query: { limit: 0 } }));
  check({ id: 'feed-400-problem', title: 'a rejected parameter answers 400 as application/problem+json', requirements: ['feed-problem-json'] }, async (t) => {
    const res = await rejected();
    t.cite(res);
    precondition(res.status === 400, `dailies limit=0 answered ${res.status}, not 400`, 'feed-dailies-limit-range');
    const type = (res.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    expect(type, 'content type of the 400').toBe('application/problem+json');
    const body = jsonBody<unknown>(res);
    expect(typeof body === 'object' && body !== null && !Array.isArray(body), 'a problem body is a JSON object').toBe(true);
  });
  check({ id: 'feed-400-request-id', title: 'a rejected parameter answers 400 with X-Request-Id', requirements: ['feed-problem-request-id'] }, async (t) => {
    const res = await rejected();
    t.cite(res);
    precondition(res.status === 400, `dailies limit=0 answered ${res.status}, not 400`, 'feed-dailies-limit-range');
    expect(res.header('x-request-id'), 'X-Request-Id on the 400').toBeTruthy();
  });
});
