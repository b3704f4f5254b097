/**
 * Origin scheduling, a part of the HTTP client (src/http.ts): each origin's requests in flight and its bound, the
 * requests waiting for a slot (retries first, then continuations, then the rest), the pause a Retry-After asked for,
 * and the slow start after a refusal. It sends nothing: the client asks it for a slot and tells it each answer.
 */
import { retryAfterMs } from './retry-policy.js';

/** Statuses whose Retry-After asks the client to stop sending to the origin for a while (RFC 9110 10.2.3). */
export const PAUSING_STATUSES = [429, 503];

/** Which requests go first to an origin: retries, then continuations (the next page of a walk), then the rest. */
export type Priority = 'retry' | 'continuation' | 'new';
export const priority = (attempt: number, continuation?: boolean): Priority => (attempt > 0 ? 'retry' : continuation ? 'continuation' : 'new');

/** One origin's share of the client: requests in flight, requests waiting for a slot, the pause it asked for. */
export interface OriginGate {
  inFlight: number;
  peak: number;
  waiting: (() => void)[];
  /**
   * Requests allowed in flight now: the configured concurrency, down to 1 after a 429 or 503 and back up by one with
   * each answer that is not (a rate-limited origin is not met again with a burst the moment its pause ends).
   */
  allowed: number;
  /**
   * Retries and continuations waiting to be sent: they go before requests not sent yet, and retries before
   * continuations (after a refusal the refused request is the first to go again: the requests still in flight when
   * the refusal came are then the only ones between them, whatever a rate limit or an outage counts).
   */
  pending: Record<Exclude<Priority, 'new'>, number>;
  /** 429s and 503s without Retry-After in a row at this origin: the exponent of the origin's own backoff. */
  backoffLevel: number;
  /**
   * 429s and 503s the origin has answered so far. A request remembers the count when it is admitted: only the
   * answers of requests admitted after the latest refusal raise `allowed` again (a slow start after the refusal,
   * not the requests that were already in flight when it came).
   */
  refusals: number;
  /** No request may start before this time (epoch ms): a Retry-After the origin sent. */
  pausedUntil: number;
  pausedBy?: string;
  /** Requests not sent yet that wait for the origin: for its pause, a retry's own wait, or a free slot. */
  queued: number;
}

/** What one origin's share of the client is doing at a moment (for the console's progress lines). */
export interface OriginActivity {
  origin: string;
  inFlight: number;
  queued: number;
  /** How much longer the origin's pause lasts (ms; 0: not paused), and the answer that asked for it. */
  pausedMs: number;
  pausedBy?: string;
  /** Pauses the origin has asked for so far. */
  pauses: number;
}

export class OriginScheduler {
  private readonly gates = new Map<string, OriginGate>();
  /** Every pause an origin asked for (epoch ms), in the order they were set: the run's record of politeness. */
  readonly pauses: { origin: string; from: number; until: number; by: string }[] = [];

  constructor(
    private readonly o: {
      /** The configured bound of requests in flight per origin. */
      limit: number;
      /** A pause longer than this is not waited out. */
      maxRetryWaitMs: number;
      sleep: (ms: number) => Promise<void>;
      /** The error a request meets when the origin's pause is longer than the suite waits. */
      unavailable: (message: string) => Error;
    },
  ) {}

  /** The origin's gate, made on first use. */
  gate(origin: string): OriginGate {
    let g = this.gates.get(origin);
    if (!g) {
      g = {
        inFlight: 0,
        peak: 0,
        waiting: [],
        allowed: this.o.limit,
        backoffLevel: 0,
        refusals: 0,
        pending: { retry: 0, continuation: 0 },
        pausedUntil: 0,
        queued: 0,
      };
      this.gates.set(origin, g);
    }
    return g;
  }

  /** The most requests that were in flight at once to each origin. */
  peakInFlight(): Record<string, number> {
    return Object.fromEntries([...this.gates].map(([o, g]) => [o, g.peak]));
  }

  /** What each origin's share is doing at `now`: requests in flight and waiting, the pause and what asked for it. */
  activity(now = Date.now()): OriginActivity[] {
    return [...this.gates].map(([origin, g]) => ({
      origin,
      inFlight: g.inFlight,
      queued: g.queued,
      pausedMs: Math.max(0, g.pausedUntil - now),
      ...(g.pausedUntil > now ? { pausedBy: g.pausedBy } : {}),
      pauses: this.pauses.filter((p) => p.origin === origin).length,
    }));
  }

  /** Run `wait` (a request waiting for the origin before it is sent), counted as queued meanwhile. */
  async queuedWhile<T>(g: OriginGate, wait: () => Promise<T>): Promise<T> {
    g.queued++;
    try {
      return await wait();
    } finally {
      g.queued--;
    }
  }

  /**
   * What an answer tells the client about its origin. A 429 or 503 brings the requests allowed in flight down to 1
   * (each later answer that is not, to a request sent after it, raises them by one, up to --concurrency), and one
   * carrying Retry-After pauses every request to the origin, not only the retry of the request that got it: the
   * whole client waits. A pause longer than --max-retry-wait is not waited out: requests that would have to wait it
   * end as unavailable. `epoch`: the origin's refusal count when the request was admitted.
   */
  noteAnswer(origin: string, status: number | undefined, retryAfter: string | undefined, where: string, epoch: number): void {
    if (status === undefined) return;
    const g = this.gate(origin);
    if (!PAUSING_STATUSES.includes(status)) {
      if (epoch !== g.refusals) return;
      g.backoffLevel = 0;
      if (g.allowed < this.o.limit) {
        g.allowed++;
        this.wakeNext(g);
      }
      return;
    }
    g.refusals++;
    g.allowed = 1;
    const ms = retryAfterMs(retryAfter);
    if (ms === undefined || ms <= 0) return;
    this.pause(origin, ms, `${where} answered ${status} with Retry-After ${retryAfter}`);
  }

  /** No request to the origin starts before `ms` from now (a longer pause already set stays). */
  pause(origin: string, ms: number, by: string): void {
    const g = this.gate(origin);
    const until = Date.now() + ms;
    if (until > g.pausedUntil) {
      g.pausedUntil = until;
      g.pausedBy = by;
      this.pauses.push({ origin, from: until - ms, until, by });
    }
  }

  /**
   * Wait until the origin's pause has passed and a slot is free, and take it. A retry (of a request the origin answered 429/503,
   * say) goes before continuations, and both before requests not sent yet: when a pause ends, the request that was
   * refused is the first to go, not the last of a crowd that meets the limit again.
   */
  async slot(g: OriginGate, origin: string, waited: number, kind: Priority): Promise<void> {
    for (;;) {
      // A retry that has just waited out the pause its own response set does not wait for it twice.
      const wait = g.pausedUntil <= waited ? 0 : g.pausedUntil - Date.now();
      if (wait > this.o.maxRetryWaitMs) {
        throw this.o.unavailable(
          `target unavailable: ${g.pausedBy ?? origin}, longer than the ${this.o.maxRetryWaitMs / 1000} s the suite waits; no request is sent to ${origin} before then`,
        );
      }
      if (wait > 0) {
        const until = g.pausedUntil;
        await this.o.sleep(wait);
        // A later response may have extended the pause meanwhile.
        if (g.pausedUntil > until) continue;
      }
      // g.allowed never exceeds the configured bound (noteAnswer raises it up to that).
      const ahead = kind === 'retry' ? 0 : kind === 'continuation' ? g.pending.retry : g.pending.retry + g.pending.continuation;
      if (g.inFlight < g.allowed && ahead === 0) {
        // Taken in the same turn as the test above: no other request can take it in between.
        g.inFlight++;
        return;
      }
      await new Promise<void>((resolve) => g.waiting.push(resolve));
    }
  }

  /** A slot may be free: every waiting request looks again (in the order they came), and those that cannot go wait on. */
  wakeNext(g: OriginGate): void {
    for (const wake of g.waiting.splice(0)) wake();
  }

  /** Give up the request's slot, after the caller has seen the answer (a retry it marks pending goes first). */
  release(g: OriginGate): void {
    setImmediate(() => {
      g.inFlight--;
      this.wakeNext(g);
    });
  }
}
