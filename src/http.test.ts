/**
 * The suite's own HTTP client keeps the documents' client rules. Each describe names the requirement it
 * verifies (client-side requirements of the catalogues are verified here, not against a target).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import {
  HttpClient,
  NoResponseError,
  OriginRefusedError,
  ResponseTooLargeError,
  TargetUnavailableError,
  BudgetExhaustedError,
  retryAfterMs,
  inCheck,
  decodeBody,
  type Exchange,
} from './http.js';
import { Redactor } from './redact.js';
import { clientRules } from './spec.js';

type Handler = (n: number, req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))));
});

async function server(handler: Handler): Promise<string> {
  let n = 0;
  const s = createServer((req, res) => handler(++n, req, res));
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

function client(url: string, o: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  const waits: number[] = [];
  const recorded: Exchange[] = [];
  const c = new HttpClient({
    timeoutMs: 2000,
    maxBodyBytes: 1024 * 1024,
    budget: 100,
    maxRetries: 2,
    maxRetryWaitMs: 60_000,
    allowedOrigins: [new URL(url).origin],
    redactor: new Redactor(),
    record: (e) => recorded.push(e),
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.5,
    ...o,
  });
  return { c, waits, recorded };
}

describe('client rule feed-client-retry-after: on 429 or 503 the client waits at least Retry-After seconds', () => {
  test('waits the Retry-After of each 503, then returns the success', async () => {
    const url = await server((n, _q, res) => {
      if (n < 3) res.writeHead(503, { 'retry-after': String(n) }).end();
      else res.writeHead(200).end('ok');
    });
    const { c, waits } = client(url);
    const res = await c.send(url, { rules: clientRules('feed') });
    expect(res.status).toBe(200);
    expect(waits).toEqual([1000, 2000]);
    expect(res.attempts).toHaveLength(3);
  });

  test('a 500 is not retried under the feed rules (they name 429 and 503 only)', async () => {
    const url = await server((_n, _q, res) => res.writeHead(500).end());
    const { c, waits } = client(url);
    expect((await c.send(url, { rules: clientRules('feed') })).status).toBe(500);
    expect(waits).toEqual([]);
  });
});

describe('client rule gw-client-retry-statuses: retry only 429 and 5xx', () => {
  test.each([400, 401, 403, 404, 409, 422])('a %i is returned at once, never retried', async (status) => {
    const url = await server((_n, _q, res) => res.writeHead(status).end());
    const { c } = client(url);
    const res = await c.send(url, { rules: clientRules('gateway') });
    expect(res.status).toBe(status);
    expect(res.attempts).toHaveLength(1);
  });

  test.each([429, 500, 502, 503, 504])('a %i is retried', async (status) => {
    const url = await server((n, _q, res) => (n === 1 ? res.writeHead(status).end() : res.writeHead(200).end()));
    const { c } = client(url);
    const res = await c.send(url, { rules: clientRules('gateway') });
    expect(res.status).toBe(200);
    expect(res.attempts.map((a) => a.status)).toEqual([status, 200]);
  });
});

describe('client rule gw-client-retry-wait: Retry-After when present, else exponential backoff with jitter', () => {
  test('Retry-After in seconds and as an HTTP date are both waited', () => {
    expect(retryAfterMs('3')).toBe(3000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  test.each(['5.5', '-5', '1 2 3', '+3', '2026-01-01T00:00:05Z', 'Thursday, 01-Jan-26 00:00:05 GMT', ''])(
    'Retry-After "%s" is neither delay-seconds nor an IMF-fixdate: backed off as if absent, never read as a past date',
    async (value) => {
      expect(retryAfterMs(value)).toBeUndefined();
      const url = await server((n, _q, res) => (n === 1 ? res.writeHead(503, { 'retry-after': value }).end() : res.writeHead(200).end()));
      const { c, waits } = client(url, { random: () => 0 });
      await c.send(url, { rules: clientRules('gateway') });
      expect(waits).toEqual([clientRules('gateway').backoff!.baseMs / 2]);
    },
  );

  test('without Retry-After the waits grow exponentially, with jitter inside each step', async () => {
    const url = await server((_n, _q, res) => res.writeHead(502).end());
    const rules = clientRules('gateway');
    const seen: number[][] = [];
    for (const r of [0, 0.99]) {
      const { c, waits } = client(url, { maxRetries: 3, random: () => r });
      await expect(c.send(url, { rules })).rejects.toBeInstanceOf(TargetUnavailableError);
      seen.push(waits);
    }
    const base = rules.backoff!.baseMs;
    // Each wait lies in [ceiling/2, ceiling] with ceiling = base * 2^attempt.
    for (const waits of seen) {
      for (const [i, w] of waits.entries()) {
        expect(w).toBeGreaterThanOrEqual((base * 2 ** i) / 2);
        expect(w).toBeLessThanOrEqual(base * 2 ** i);
      }
    }
    expect(seen[0]).not.toEqual(seen[1]);
    expect(seen[0]![2]! / seen[0]![0]!).toBe(4);
  });
});

describe('client rule gw-client-retry-cap: the number of retries is capped', () => {
  test('a 429 storm ends after maxRetries retries as "target unavailable", not as a conformance failure', async () => {
    let hits = 0;
    const url = await server((_n, _q, res) => (hits++, res.writeHead(429, { 'retry-after': '1' }).end()));
    const { c } = client(url, { maxRetries: 2 });
    await expect(c.send(url, { rules: clientRules('gateway') })).rejects.toThrow(/target unavailable.*answered 429 3 time/);
    expect(hits).toBe(3);
    expect(c.sent).toBe(3);
  });

  test('a Retry-After longer than the suite waits is not waited out', async () => {
    const url = await server((_n, _q, res) => res.writeHead(503, { 'retry-after': '3600' }).end());
    const { c, waits } = client(url, { maxRetryWaitMs: 60_000 });
    await expect(c.send(url, { rules: clientRules('feed') })).rejects.toThrow(/Retry-After 3600, longer than the 60 s/);
    expect(waits).toEqual([]);
  });

  test('a billable call is retried no more than any other', async () => {
    let hits = 0;
    const url = await server((_n, _q, res) => (hits++, res.writeHead(500).end()));
    const { c } = client(url, { maxRetries: 1 });
    await expect(c.send(url, { method: 'POST', body: {}, billable: true, rules: clientRules('gateway') })).rejects.toBeInstanceOf(TargetUnavailableError);
    expect(hits).toBe(2);
    expect(c.sent).toBe(2);
  });
});

describe('a consistent wrong status is an answer, not an outage', () => {
  test('a 500 to one request every time, from a target that answers others, is returned after the retries for the check to judge', async () => {
    const url = await server((_n, req, res) => (req.url?.includes('bad') ? res.writeHead(500).end('boom') : res.writeHead(200).end('ok')));
    const { c } = client(url);
    expect((await c.send(url, { rules: clientRules('gateway') })).status).toBe(200);
    const res = await c.send(`${url}/?bad=1`, { rules: clientRules('gateway') });
    expect(res.status).toBe(500);
    expect(res.attempts).toHaveLength(3);
  });

  test('a 503 storm stays "target unavailable" even from a target that answered before', async () => {
    const url = await server((_n, req, res) => (req.url?.includes('bad') ? res.writeHead(503).end() : res.writeHead(200).end('ok')));
    const { c } = client(url, { maxRetries: 1 });
    await c.send(url, { rules: clientRules('gateway') });
    await expect(c.send(`${url}/?bad=1`, { rules: clientRules('gateway') })).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  test('the breaker gives up on an origin once, with the reason of the requests that tripped it, also under concurrency', async () => {
    const url = await server((_n, _q, res) => res.writeHead(503).end());
    const { c } = client(url, { maxRetries: 0, breakerAfter: 3, concurrency: 2 });
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => c.send(`${url}/?n=${i}`, { rules: clientRules('feed') })));
    const reasons = results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'served'));
    const given = reasons.filter((m) => /no longer contacted/.test(m));
    expect(given.length, reasons.join('\n')).toBeGreaterThan(0);
    // One reason, not a reason nested in the reasons of requests that were never sent.
    for (const m of given) expect(m.match(/no longer contacted/g)?.length, m).toBe(1);
    expect(new Set(given).size, given.join('\n')).toBe(1);
  });

  test("a feed 503 on every try of one request, while the feed answers another asked meanwhile and this one once more, is the feed's answer", async () => {
    const order: string[] = [];
    const url = await server((_n, req, res) => {
      order.push(req.url!);
      if (req.url?.includes('limit=0')) res.writeHead(503, { 'retry-after': '1', 'content-type': 'application/problem+json' }).end('{"status":503}');
      else res.writeHead(200).end('ok');
    });
    const { c, waits } = client(url);
    expect((await c.send(`${url}/items`, { rules: clientRules('feed') })).status).toBe(200);
    const res = await c.send(`${url}/items?limit=0`, { rules: clientRules('feed') });
    expect(res.status).toBe(503);
    expect(res.attempts.map((a) => a.status)).toEqual([503, 503, 503, 503]);
    // The retries waited Retry-After; then the other request (after the pause the last 503 set), then this one once more.
    expect(order).toEqual(['/items', '/items?limit=0', '/items?limit=0', '/items?limit=0', '/items', '/items?limit=0']);
    expect(waits.slice(0, 2)).toEqual([1000, 1000]);
  });

  test('a feed gone down: the other request meets the 503 too, and the target is unavailable, not its answer', async () => {
    let n = 0;
    const url = await server((_i, _req, res) => (++n === 1 ? res.writeHead(200).end('ok') : res.writeHead(503, { 'retry-after': '0' }).end()));
    const { c } = client(url);
    await c.send(`${url}/items`, { rules: clientRules('feed') });
    const e = await c.send(`${url}/items?limit=0`, { rules: clientRules('feed') }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TargetUnavailableError);
    expect((e as Error).message).toMatch(/answered 503 3 time\(s\); gave up after 2 retries; GET http:\S+\/items, asked meanwhile, answered 503$/);
    expect(n).toBe(5);
  });

  test('a feed 503 on every try, from a feed that has answered nothing else, is "target unavailable"', async () => {
    const url = await server((_n, _q, res) => res.writeHead(503, { 'retry-after': '0' }).end());
    const { c } = client(url);
    await expect(c.send(`${url}/items?limit=0`, { rules: clientRules('feed') })).rejects.toThrow(/it has answered no other request normally/);
  });

  test('a 500 from a target that has answered nothing else is still "target unavailable"', async () => {
    const url = await server((_n, _q, res) => res.writeHead(500).end());
    const { c } = client(url, { maxRetries: 1 });
    await expect(c.send(url, { rules: clientRules('gateway') })).rejects.toBeInstanceOf(TargetUnavailableError);
  });
});

describe('budget, origin and bounds', () => {
  test('the budget counts every attempt and refuses the request past it', async () => {
    const url = await server((_n, _q, res) => res.writeHead(200).end());
    const { c } = client(url, { budget: 2 });
    await c.send(url);
    await c.send(url);
    await expect(c.send(url)).rejects.toBeInstanceOf(BudgetExhaustedError);
    expect(c.sent).toBe(2);
  });

  test('a request to another origin is refused before anything is sent (keys never leave the target)', async () => {
    const url = await server((_n, _q, res) => res.writeHead(200).end());
    const { c } = client(url);
    await expect(c.send('http://127.0.0.2:9/', { headers: { authorization: 'Bearer sk-x' } })).rejects.toBeInstanceOf(OriginRefusedError);
    expect(c.sent).toBe(0);
  });

  test('redirects are never followed', async () => {
    const url = await server((_n, _q, res) => res.writeHead(308, { location: 'http://127.0.0.2:9/elsewhere' }).end());
    const { c } = client(url);
    const res = await c.send(url);
    expect(res.status).toBe(308);
    expect(c.sent).toBe(1);
  });

  test('a response that never comes fails with "no response within N s"', async () => {
    const url = await server(() => undefined);
    const { c } = client(url, { timeoutMs: 300 });
    await expect(c.send(url)).rejects.toThrow(NoResponseError);
    await expect(c.send(url)).rejects.toThrow(/no response within 0.3 s/);
  });

  test('a body that trickles forever is cut at the time bound', async () => {
    const url = await server((_n, _q, res) => {
      res.writeHead(200);
      const t = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(t));
    });
    const { c } = client(url, { timeoutMs: 400 });
    await expect(c.send(url)).rejects.toThrow(/no response within 0.4 s/);
  });

  test('a body over the cap is not read further', async () => {
    const url = await server((_n, _q, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(64 * 1024, 'a'));
    });
    const { c } = client(url, { maxBodyBytes: 1024 });
    await expect(c.send(url)).rejects.toBeInstanceOf(ResponseTooLargeError);
  });

  test('a bodiless 304 with Content-Length is a complete, empty response (RFC 9110 8.6)', async () => {
    const url = await server((_n, _q, res) => res.writeHead(304, { etag: '"a"', 'content-length': '42' }).end());
    const { c } = client(url);
    const res = await c.send(url);
    expect(res.status).toBe(304);
    expect(res.body).toBe('');
  });
});

describe('recording', () => {
  test('every exchange is recorded with secrets replaced by their environment variable', async () => {
    const key = 'sk-secret-value-123456';
    const url = await server((_n, req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end(`bad key ${req.headers.authorization}`));
    const { c, recorded } = client(url, { redactor: new Redactor({ GATEWAY_API_KEY: key }) });
    await c.send(`${url}/v1/models?key=${key}`, { headers: { authorization: `Bearer ${key}` } });
    const text = JSON.stringify(recorded);
    expect(text).not.toContain(key);
    expect(recorded[0]!.requestHeaders.authorization).toBe('Bearer $GATEWAY_API_KEY');
    expect(recorded[0]!.url).toContain('key=$GATEWAY_API_KEY');
    expect(recorded[0]!.responseBody).toBe('bad key Bearer $GATEWAY_API_KEY');
  });
});

describe('client rule gw-client-stream-restart: a broken stream is restarted from the beginning, never resumed', () => {
  test('a body cut off mid-transfer is requested again from the start, without Range, within the cap', async () => {
    const seen: (string | undefined)[] = [];
    const url = await server((n, req, res) => {
      seen.push(req.headers.range);
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      if (n === 1) {
        res.write('x'.repeat(100));
        setTimeout(() => res.socket?.destroy(), 20);
      } else res.end('y'.repeat(1000));
    });
    const { c } = client(url);
    const res = await c.send(url, { rules: clientRules('gateway') });
    expect(res.body).toBe('y'.repeat(1000));
    expect(res.attempts).toHaveLength(2);
    expect(seen).toEqual([undefined, undefined]);
  });

  test('without retry rules a broken body fails the request', async () => {
    const url = await server((_n, _req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('x');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { c } = client(url);
    await expect(c.send(url)).rejects.toThrow(/failed/);
  });
});

describe('billable calls', () => {
  test('a generation request counts as billable only when the target answers it 2xx', async () => {
    const url = await server((n, _req, res) => res.writeHead(n === 1 ? 400 : 200).end('{}'));
    const { c } = client(url);
    await c.send(url, { method: 'POST', body: {}, billable: true });
    expect(c.billable).toBe(0);
    await c.send(url, { method: 'POST', body: {}, billable: true });
    expect(c.billable).toBe(1);
  });
});

describe('concurrency: at most N requests in flight per origin, and the client rules still hold', () => {
  const realClient = (url: string, o: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) => client(url, { sleep: undefined, ...o });

  test('never more than `concurrency` requests in flight to one origin', async () => {
    let inFlight = 0;
    let peak = 0;
    const url = await server((_n, _req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.end('ok');
      }, 30);
    });
    const { c } = realClient(url, { concurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, () => c.send(url)));
    expect(peak, 'requests the server saw at once').toBe(3);
    expect(c.peakInFlight()[new URL(url).origin]).toBe(3);
    expect(c.sent).toBe(12);
  });

  test('the budget is counted before sending: concurrent requests never overspend it', async () => {
    let arrived = 0;
    const url = await server((_n, _req, res) => {
      arrived++;
      setTimeout(() => res.end('ok'), 20);
    });
    const { c } = realClient(url, { concurrency: 4, budget: 5 });
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => c.send(url)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(r.reason).toBeInstanceOf(BudgetExhaustedError);
    expect({ sent: c.sent, arrived }).toEqual({ sent: 5, arrived: 5 });
  });

  test('a 429 with Retry-After: 2 pauses every request to that origin, from any concurrent check, for 2 s', async () => {
    const arrivals: number[] = [];
    let limitedAt = 0;
    const url = await server((n, _req, res) => {
      arrivals.push(Date.now());
      if (n === 6) {
        limitedAt = Date.now();
        res.writeHead(429, { 'retry-after': '2' }).end();
      } else setTimeout(() => res.end('ok'), 10);
    });
    const { c, recorded } = realClient(url, { concurrency: 4 });
    // Four "checks", each sending its requests one after another, as concurrent checks do.
    const check = async (name: string) => {
      for (let i = 0; i < 4; i++) await inCheck({ check: name, record: () => {} }, () => c.send(url, { rules: clientRules('feed') }));
    };
    await Promise.all(['a', 'b', 'c', 'd'].map(check));
    expect(c.pauses).toHaveLength(1);
    const pause = c.pauses[0]!;
    expect(pause.until - pause.from).toBe(2000);
    // No request started while the pause lasted: each one started before the 429 came back (it was already in
    // flight) or after the pause ended.
    const starts = recorded.map((e) => Date.parse(e.startedAt));
    const duringPause = starts.filter((t) => t > pause.from && t < pause.until);
    expect(
      duringPause.map((t) => [t - pause.from, pause.until - t]),
      'requests started during the pause',
    ).toEqual([]);
    // The server's view: within the 2 s after it answered 429, only requests that were already in flight arrived.
    const inFlightAtPause = recorded.filter((e) => Date.parse(e.startedAt) <= pause.from && e.status !== 429).length;
    const arrivedInWindow = arrivals.filter((t) => t > limitedAt && t < limitedAt + 2000).length;
    expect(arrivedInWindow).toBeLessThanOrEqual(inFlightAtPause);
    expect(recorded.filter((e) => Date.parse(e.startedAt) >= pause.until).length, 'requests sent after the pause').toBeGreaterThan(0);
    expect(recorded.filter((e) => e.status === 429)).toHaveLength(1);
    expect(c.sent).toBe(17); // 16 requests, one of them retried once after its 429
  });

  test('a pause longer than --max-retry-wait makes requests to that origin unavailable instead of waiting', async () => {
    const url = await server((n, _req, res) => (n === 1 ? res.writeHead(429, { 'retry-after': '120' }).end() : res.end('ok')));
    const { c } = realClient(url, { concurrency: 2, maxRetryWaitMs: 1000 });
    await expect(c.send(url, { rules: clientRules('feed') })).rejects.toBeInstanceOf(TargetUnavailableError);
    await expect(c.send(url)).rejects.toThrow(/Retry-After 120, longer than the 1 s the suite waits/);
    expect(c.sent).toBe(1);
  });

  test('each exchange is attributed to the check whose async context sent it', async () => {
    const url = await server((_n, req, res) => setTimeout(() => res.end(req.url), 5 + Math.floor(Math.random() * 10)));
    const { c, recorded } = realClient(url, { concurrency: 4 });
    const seen: Record<string, string[]> = { a: [], b: [], c: [] };
    await Promise.all(
      Object.keys(seen).map((name) =>
        inCheck({ check: name, record: (ex) => seen[name]!.push(new URL(ex.url).searchParams.get('from')!) }, async () => {
          for (let i = 0; i < 5; i++) await c.send(url, { query: { from: name } });
        }),
      ),
    );
    for (const [name, froms] of Object.entries(seen)) expect(froms).toEqual(Array(5).fill(name));
    for (const e of recorded) expect(e.check).toBe(new URL(e.url).searchParams.get('from'));
  });
});

describe('concurrency: a rate-limited origin is backed off as a whole', () => {
  test('a 429 without Retry-After pauses the whole origin, longer with each such answer in a row', async () => {
    let n = 0;
    const url = await server((_i, _req, res) => (++n <= 2 ? res.writeHead(429).end() : res.end('ok')));
    const { c, waits } = client(url, { concurrency: 4 });
    await c.send(url, { rules: clientRules('gateway') });
    // Both retries waited (the stub records each wait), and each set a pause of the whole origin as long as it.
    expect(c.pauses.map((p) => p.until - p.from)).toEqual(waits);
    expect(waits).toHaveLength(2);
    expect(waits[1]!).toBeGreaterThan(waits[0]!);
    expect(c.pauses.every((p) => /without Retry-After/.test(p.by))).toBe(true);
  });

  test('after a 429 one request at a time is in flight, and the origin is ramped back up by one per answer', async () => {
    let inFlight = 0;
    const seen: number[] = [];
    let n = 0;
    const url = await server((_i, _req, res) => {
      inFlight++;
      seen.push(inFlight);
      const status = ++n === 1 ? 429 : 200;
      setTimeout(() => {
        inFlight--;
        res.writeHead(status, status === 429 ? { 'retry-after': '0' } : {}).end('x');
      }, 15);
    });
    const { c } = client(url, { concurrency: 3, sleep: undefined });
    // The first request alone gets the 429 (retry: false, it is the answer); then eight requests at once.
    expect((await c.send(url, { retry: false })).status).toBe(429);
    await Promise.all(Array.from({ length: 8 }, () => c.send(url)));
    // In flight at each arrival: 1 right after the 429, then at most 2, then 3 (never above --concurrency).
    expect(seen.slice(1, 2)).toEqual([1]);
    expect(Math.max(...seen)).toBe(3);
    expect(seen.indexOf(3)).toBeGreaterThan(seen.indexOf(2));
  });
});

describe('an outage that refuses retries too: a slow start after each refusal', () => {
  test('the requests in flight when a 429 came do not open the origin again: after the pause one request, then one more per answer', async () => {
    let inFlight = 0;
    let n = 0;
    const arrivals: number[] = [];
    // The first four are held until all four have arrived (no race with a busy machine's connection set-up); then
    // the first is refused and the three sent with it are answered later, during the pause it set.
    const held: (() => void)[] = [];
    const url = await server((_i, _req, res) => {
      const k = ++n;
      arrivals.push(++inFlight);
      const answer = (status: number, delay: number) =>
        setTimeout(() => {
          inFlight--;
          res.writeHead(status, status === 429 ? { 'retry-after': '1' } : {}).end('x');
        }, delay);
      if (k > 4) return void answer(200, 80);
      held.push(() => void answer(k === 1 ? 429 : 200, k === 1 ? 0 : 80));
      if (held.length === 4) for (const release of held) release();
    });
    const { c } = client(url, { concurrency: 4, sleep: undefined });
    await Promise.all(Array.from({ length: 10 }, (_, i) => c.send(`${url}/?i=${i}`, { rules: clientRules('feed') })));
    expect(arrivals.slice(0, 4)).toEqual([1, 2, 3, 4]);
    // After the pause: the retry alone; after its answer two at once; never the four the stale answers would allow.
    expect(arrivals[4]).toBe(1);
    expect(Math.max(...arrivals.slice(4, 7))).toBeLessThanOrEqual(2);
  });

  test('every 5th request answered 503 (retries included): each refused request gets through on its retry, at concurrency 4', async () => {
    let n = 0;
    const refusedAt: number[] = [];
    const url = await server((_i, _req, res) => {
      const k = ++n;
      setTimeout(() => {
        if (k % 5 === 0) {
          refusedAt.push(k);
          res.writeHead(503, { 'retry-after': '0' }).end();
        } else res.end('ok');
      }, 3);
    });
    const { c } = client(url, { concurrency: 4, maxRetries: 1, sleep: undefined });
    const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => c.send(`${url}/?i=${i}`, { rules: clientRules('feed') })));
    // The requests already in flight when a 503 came do not open the origin again: its retry goes alone and is
    // never the 5th request after that 503, so one retry is enough for every request.
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect(refusedAt.length).toBeGreaterThanOrEqual(12);
  });
});

describe('compressed responses', () => {
  test('the client asks for gzip and reads the decoded body', async () => {
    const seen: (string | undefined)[] = [];
    const url = await server((_n, req, res) => {
      seen.push(req.headers['accept-encoding']);
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' }).end(gzipSync('{"ok":true}'));
    });
    const { c, recorded } = client(url);
    const res = await c.send(url);
    expect(seen).toEqual(['gzip']);
    expect(res.json()).toEqual({ ok: true });
    expect(recorded[0]!.responseBody).toBe('{"ok":true}');
    expect(recorded[0]!.responseHeaders?.['content-encoding']).toBe('gzip');
  });

  test('a body larger than the bound once decoded is not read further', async () => {
    const url = await server((_n, _req, res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20))));
    const { c } = client(url, { maxBodyBytes: 1024 * 1024 });
    await expect(c.send(url)).rejects.toBeInstanceOf(ResponseTooLargeError);
  });

  test('a coding it did not ask for is an error, not text', async () => {
    expect(() => decodeBody(Buffer.from('x'), 'compress', 100)).toThrow(/cannot decode: compress/);
    expect(decodeBody(Buffer.alloc(0), 'gzip', 100)).toHaveLength(0);
  });
});

describe('one retry policy for every way the suite sends', () => {
  test("exchanges the client does not make itself (the raw reader, an official client's fetch) back off the whole origin too", async () => {
    let n = 0;
    const url = await server((_i, _req, res) => (++n <= 2 ? res.writeHead(429).end() : res.end('ok')));
    const { c, waits } = client(url, { concurrency: 4 });
    const rules = clientRules('gateway');
    const target = new URL(`${url}/?raw=1`);
    // As the raw reader and the recording fetch send: admitted by external(), retried by afterAnswer().
    let waited = 0;
    const statuses: number[] = [];
    for (let attempt = 0; ; attempt++) {
      const record = await c.external(target, 'GET', {}, 'gateway', { attempt, waited });
      const res = await fetch(target);
      await res.text();
      record({ status: res.status, responseHeaders: {} });
      statuses.push(res.status);
      if (res.status !== 429) break;
      const next = await c.afterAnswer(target, 'GET', { status: res.status }, attempt, rules);
      if (next.action !== 'retry') throw new Error(`not retried: ${JSON.stringify(next)}`);
      waited = next.waited;
    }
    expect(statuses).toEqual([429, 429, 200]);
    // Each retry waited, and each 429 without Retry-After set a pause of the whole origin as long as that wait.
    expect(waits).toHaveLength(2);
    expect(c.pauses.map((p) => p.until - p.from)).toEqual(waits);
    expect(c.pauses.every((p) => /without Retry-After/.test(p.by))).toBe(true);
    // The retries were admitted as retries: a request not sent yet is not held back after them.
    expect((await c.send(url)).status).toBe(200);
    expect(c.sent).toBe(4);
  });

  test('past the cap, or for a wait longer than --max-retry-wait, the policy does not wait and says why', async () => {
    const url = await server((_i, _req, res) => res.end('ok'));
    const { c, waits } = client(url, { maxRetries: 2, maxRetryWaitMs: 5_000 });
    const rules = clientRules('gateway');
    const u = new URL(url);
    const capped = await c.afterAnswer(u, 'GET', { status: 503 }, 2, rules);
    expect(capped).toMatchObject({ action: 'unavailable', message: expect.stringMatching(/answered 503 3 time\(s\); gave up after 2 retries/) });
    const long = await c.afterAnswer(u, 'GET', { status: 429, retryAfter: '60' }, 0, rules);
    expect(long).toMatchObject({ action: 'unavailable', message: expect.stringMatching(/Retry-After 60, longer than the 5 s/) });
    expect(waits).toEqual([]);
  });
});

describe('concurrency: retries go first, and nothing waits for ever', () => {
  test('several requests answered 429 at once are each retried, before requests not sent yet, and every request ends', async () => {
    const order: string[] = [];
    let n = 0;
    const url = await server((_i, req, res) => {
      const id = new URL(req.url!, 'http://x').searchParams.get('id')!;
      const limited = ++n <= 3;
      order.push(`${id}${limited ? ':429' : ''}`);
      setTimeout(() => (limited ? res.writeHead(429, { 'retry-after': '1' }).end() : res.end('ok')), 10);
    });
    const { c } = client(url, { concurrency: 3, sleep: undefined });
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => c.send(url, { query: { id: i }, rules: clientRules('feed') })));
    expect(results.map((r) => r.status)).toEqual(Array(9).fill(200));
    // The three refused requests are the first three sent again after the pause, before any other request.
    const refused = order.slice(0, 3).map((o) => o.replace(':429', ''));
    expect(order.slice(3, 6).sort()).toEqual([...refused].sort());
    expect(c.sent).toBe(12);
  });

  test('a continuation (the next page of a walk) goes before requests not sent yet', async () => {
    const order: string[] = [];
    const url = await server((_i, req, res) => {
      order.push(new URL(req.url!, 'http://x').searchParams.get('id')!);
      setTimeout(() => res.end('ok'), 20);
    });
    const { c } = client(url, { concurrency: 1, sleep: undefined });
    // One request in flight and four queued; then a walk's next page is asked for.
    const first = c.send(url, { query: { id: 'first' } });
    const queued = Array.from({ length: 4 }, (_, i) => c.send(url, { query: { id: `q${i}` } }));
    await new Promise((r) => setTimeout(r, 5));
    const next = c.send(url, { query: { id: 'next-page' }, continuation: true });
    await Promise.all([first, next, ...queued]);
    expect(order.slice(0, 2)).toEqual(['first', 'next-page']);
    expect(order.slice(2)).toEqual(['q0', 'q1', 'q2', 'q3']);
  });

  test('a retry goes before a continuation: after a refusal the refused request is the first to go again', async () => {
    const order: string[] = [];
    let n = 0;
    const url = await server((_i, req, res) => {
      const id = new URL(req.url!, 'http://x').searchParams.get('id')!;
      const refused = ++n === 1;
      order.push(`${id}${refused ? ':503' : ''}`);
      setTimeout(() => (refused ? res.writeHead(503, { 'retry-after': '0' }).end() : res.end('ok')), 20);
    });
    const { c } = client(url, { concurrency: 1, sleep: undefined });
    // The first request is refused while a walk's next page and a new request wait for the one slot.
    const first = c.send(url, { query: { id: 'first' }, rules: clientRules('feed') });
    await new Promise((r) => setTimeout(r, 5));
    const next = c.send(url, { query: { id: 'next-page' }, continuation: true });
    const fresh = c.send(url, { query: { id: 'new' } });
    await Promise.all([first, next, fresh]);
    expect(order).toEqual(['first:503', 'first', 'next-page', 'new']);
  });
});

describe('a connection that closes before any answer (a kept-alive connection the server closed idle)', () => {
  test('a GET is sent again at once on a new connection, once; the first attempt is recorded', async () => {
    const url = await server((n, req, res) => {
      if (n === 1) return void req.socket.destroy();
      res.writeHead(200).end('ok');
    });
    const { c, waits, recorded } = client(url);
    const res = await c.send(url, { rules: clientRules('feed') });
    expect(res.status).toBe(200);
    expect(res.attempts).toHaveLength(2);
    expect(res.attempts[0]!.error).toBeTruthy();
    expect(waits).toEqual([]);
    expect(recorded).toHaveLength(2);
  });

  test('twice in a row is a transport error; a POST is never sent again', async () => {
    const closing = await server((_n, req) => void req.socket.destroy());
    const { c, recorded } = client(closing);
    await expect(c.send(closing, { rules: clientRules('feed') })).rejects.toThrow(/failed/);
    expect(recorded).toHaveLength(2);
    const post = client(closing);
    await expect(post.c.send(closing, { method: 'POST', body: { a: 1 }, rules: clientRules('gateway') })).rejects.toThrow(/failed/);
    expect(post.recorded).toHaveLength(1);
  });
});
