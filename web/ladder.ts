// The transport ladder: WebSocket, then Server-Sent Events, then polling.
// Pure state so the stepping rules can be tested without a browser.

import { backoffDelay, BackoffOptions, DEFAULT_BACKOFF } from "./backoff";

export type Transport = "ws" | "sse" | "poll";

const RUNGS: readonly Transport[] = ["ws", "sse", "poll"];

/** What the browser offers; polling (fetch) is assumed everywhere. */
export interface Support {
  ws: boolean;
  sse: boolean;
}

/** Failures in a row, without one good message, before stepping down a rung. */
export const FAILURES_BEFORE_FALLBACK = 3;

/**
 * A server that goes away (close code 1001, a deploy) drops everyone at once;
 * retries start no lower than this attempt so the crowd spreads over seconds.
 */
export const GOING_AWAY_MIN_ATTEMPT = 3;

export interface Ladder {
  transport: Transport;
  /** Failures on this rung since the last good message. */
  failures: number;
  /** Retries on this rung since the last good message: drives the backoff. */
  attempt: number;
}

export interface Retry {
  ladder: Ladder;
  delayMs: number;
}

function supported(t: Transport, s: Support): boolean {
  return t === "poll" || s[t];
}

export function start(support: Support): Ladder {
  const transport = RUNGS.find((t) => supported(t, support)) ?? "poll";
  return { transport, failures: 0, attempt: 0 };
}

/** A good message proves the rung works: forget past failures. */
export function onMessage(l: Ladder): Ladder {
  return { transport: l.transport, failures: 0, attempt: 0 };
}

/**
 * onFailure records a connection that could not open, broke, or went silent,
 * and says where and after how long to try again. The ticket is kept, so a
 * retry resumes the same place in line.
 *
 * The backoff starts again on a new rung: a proxy that blocks WebSocket says
 * nothing about SSE, and a page that stays silent too long is taken for
 * abandoned by the server (30 s by default), so the way down must be quick.
 */
export function onFailure(
  l: Ladder,
  support: Support,
  opts: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): Retry {
  let { transport } = l;
  let failures = l.failures + 1;
  let attempt = l.attempt + 1;
  if (failures >= FAILURES_BEFORE_FALLBACK) {
    const lower = RUNGS.slice(RUNGS.indexOf(transport) + 1).find((t) => supported(t, support));
    if (lower) {
      transport = lower;
      failures = 0;
      attempt = 1;
    }
  }
  return { ladder: { transport, failures, attempt }, delayMs: backoffDelay(attempt, opts, random) };
}

/**
 * onGoingAway handles a clean "server shutting down" close: the transport is
 * fine, so it does not count towards stepping down, but the retry is spread.
 */
export function onGoingAway(
  l: Ladder,
  opts: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): Retry {
  const attempt = Math.max(l.attempt + 1, GOING_AWAY_MIN_ATTEMPT);
  return { ladder: { ...l, attempt }, delayMs: backoffDelay(attempt, opts, random) };
}

/**
 * silenceLimitMs is how long a push channel may stay quiet before it is taken
 * for dead (a proxy can hold a socket open that no longer delivers). The
 * server skips a message that would repeat the last one and its keep-alives
 * are invisible to script, so a still line (a paused room) is quiet too: the
 * limit is generous, and a reconnect costs one message.
 */
export function silenceLimitMs(nextUpdateMs: number): number {
  return Math.max(6 * nextUpdateMs, 60_000);
}

/** pollDelayMs keeps polling at the server's pace, within sane bounds. */
export function pollDelayMs(nextUpdateMs: number): number {
  if (!Number.isFinite(nextUpdateMs) || nextUpdateMs <= 0) return 5_000;
  return Math.min(Math.max(nextUpdateMs, 1_000), 60_000);
}
