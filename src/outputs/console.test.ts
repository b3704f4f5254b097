/**
 * The console's progress lines: a long run's log says, at least every 10 s, what the run is doing and what it waits
 * for (a Retry-After pause and the answer that asked for it, requests in flight and queued, the breaker). The lines
 * are shown here with an interval of a few milliseconds and a client held in its wait, not by timing a run.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { HttpClient, progressChannelName } from '../http.js';
import { Redactor } from '../redact.js';
import { clientRules } from '../spec.js';
import { PROGRESS_EVERY_MS, progressLine, ProgressReporter } from './console.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))));
});

describe('progress lines', () => {
  test('a line every 10 s by default, naming each service, its pause and what asked for it, its requests, the breaker', () => {
    expect(PROGRESS_EVERY_MS).toBe(10_000);
    const line = progressLine({
      elapsedMs: 40_400,
      done: 212,
      running: 40,
      activity: {
        sent: 250,
        budget: 1500,
        origins: [
          {
            origin: 'http://127.0.0.1:4000',
            inFlight: 0,
            queued: 3,
            pausedMs: 600,
            pausedBy: 'GET http://127.0.0.1:4000/api/v1/items answered 503 with Retry-After 1',
            pauses: 12,
          },
          { origin: 'http://127.0.0.1:5000', inFlight: 0, queued: 0, pausedMs: 0, pauses: 0, given: '3 requests in a row: target unavailable' },
        ],
      },
      pausesSeen: new Map([['http://127.0.0.1:4000', 3]]),
      services: { 'http://127.0.0.1:4000': 'feed', 'http://127.0.0.1:5000': 'gateway' },
    });
    expect(line).toBe(
      '  … 40 s: 212 checks done, 40 running, 250 of 1500 requests sent; ' +
        'feed 127.0.0.1:4000: waiting for its Retry-After, 0.6 s more (GET http://127.0.0.1:4000/api/v1/items answered 503 with Retry-After 1), ' +
        '0 in flight, 3 queued, 9 pauses asked for since the last line; ' +
        'gateway 127.0.0.1:5000: no longer contacted (3 requests in a row: target unavailable)',
    );
  });

  test("a run waiting out a target's Retry-After says so in its next line", async () => {
    let n = 0;
    const s = createServer((_req, res) => (++n === 1 ? res.writeHead(503, { 'retry-after': '30' }).end() : res.end('ok')));
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const channel = progressChannelName(`progress-test-${process.pid}-${Date.now()}`);
    // The client's wait is held until the line has been seen: the run is known to be waiting when the line comes.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const client = new HttpClient({
      timeoutMs: 2000,
      maxBodyBytes: 1 << 20,
      budget: 10,
      maxRetries: 1,
      maxRetryWaitMs: 60_000,
      allowedOrigins: [url],
      redactor: new Redactor(),
      sleep: () => held,
      progressChannel: channel,
    });
    let seen!: (line: string) => void;
    const waiting = new Promise<string>((r) => (seen = r));
    // The line once the retry waits (queued, held, the first request done): between the 503's headers, which set the
    // pause, and the first request's slot given back, lines may show the pause with the first request still in flight
    // (with or without the retry queued: seen in a loaded CI run); whether the line already counted the pause
    // depends on when it came (no timing assumption either way).
    const reporter = new ProgressReporter((line) => /Retry-After.* 0 in flight, 1 queued/.test(line) && seen(line), {
      channel,
      everyMs: 20,
      services: { [url]: 'feed' },
    });
    reporter.onTestRunStart();
    reporter.onTestCaseReady();
    const sent = client.send(url, { rules: clientRules('feed') });
    try {
      const line = await waiting;
      expect(line).toMatch(
        new RegExp(
          `^ {2}… \\d+ s: 0 checks done, 1 running, 1 of 10 requests sent; feed 127\\.0\\.0\\.1:\\d+: waiting for its Retry-After, \\d+\\.\\d s more ` +
            `\\(GET ${url}/ answered 503 with Retry-After 30\\), 0 in flight, 1 queued(, 1 pause asked for since the last line)?$`,
        ),
      );
    } finally {
      reporter.onTestRunEnd();
      release();
      expect((await sent).status).toBe(200);
      await client.close();
    }
  });

  test("without an answer from the run's HTTP client, the line says what the reporter knows", async () => {
    let seen!: (line: string) => void;
    const line = new Promise<string>((r) => (seen = r));
    const reporter = new ProgressReporter(seen, { channel: progressChannelName(`progress-silent-${process.pid}-${Date.now()}`), everyMs: 20 });
    reporter.onTestRunStart();
    try {
      expect(await line).toMatch(/^ {2}… \d+ s: 0 checks done, 0 running$/);
    } finally {
      reporter.onTestRunEnd();
    }
  });
});
