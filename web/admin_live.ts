// Keeps the dashboard's live stream: WebSocket first, then Server-Sent
// Events, then polling, walking down when a rung fails before it delivered
// anything (a proxy that blocks it), with jittered backoff between tries.
// Browser APIs come in through Env (./transport) so tests can drive it.

import { backoffDelay } from "./backoff";
import { Channel, ChannelHandlers, Env } from "./transport";

export type Rung = "ws" | "sse" | "poll";
export type LiveStatus = "connecting" | "reconnecting" | Rung;

export interface LiveOptions {
  /** The stream's path: /admin/rooms/{room}/live or /admin/live. */
  path: string;
  /** The same path as a ws: or wss: URL. */
  wsURL: string;
  env: Env;
  /** Polling interval, and how long a live channel may stay silent. */
  pollMs: number;
  silenceMs: number;
  message(text: string): void;
  status(s: LiveStatus): void;
  /** The session is gone (401): sign in again. */
  signedOut(): void;
}

/** Tries a rung may fail without ever delivering before the next is tried. */
export const TRIES_PER_RUNG = 2;
const BACKOFF = { baseMs: 500, capMs: 15_000 };

export function firstRung(env: Env): Rung {
  if (env.openWS) return "ws";
  if (env.openSSE) return "sse";
  return "poll";
}

function below(r: Rung, env: Env): Rung {
  if (r === "ws" && env.openSSE) return "sse";
  return "poll";
}

export class Live {
  rung: Rung;
  private gen = 0;
  private channel: Channel | null = null;
  private timer: unknown = null;
  private watchdog: unknown = null;
  private failures = 0; // in a row, on this rung, without a message
  private attempt = 0; // in a row, for the backoff
  private delivered = false; // this channel delivered something
  private ever = false;
  private stopped = false;

  constructor(private readonly o: LiveOptions) {
    this.rung = firstRung(o.env);
  }

  start(): void {
    this.o.status("connecting");
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.gen++;
    this.teardown();
  }

  private teardown(): void {
    const env = this.o.env;
    if (this.timer !== null) env.clearTimeout(this.timer);
    if (this.watchdog !== null) env.clearTimeout(this.watchdog);
    this.timer = this.watchdog = null;
    const ch = this.channel;
    this.channel = null;
    ch?.close();
  }

  private open(): void {
    this.teardown();
    const gen = ++this.gen;
    this.delivered = false;
    const h: ChannelHandlers = {
      open: () => {
        if (gen === this.gen) this.arm(gen);
      },
      message: (text) => this.good(gen, text),
      closed: (goingAway) => this.fail(gen, goingAway),
    };
    const env = this.o.env;
    switch (this.rung) {
      case "ws":
        this.channel = env.openWS!(this.o.wsURL + "/ws", h);
        this.arm(gen);
        break;
      case "sse":
        this.channel = env.openSSE!(this.o.path + "/events", h);
        this.arm(gen);
        break;
      case "poll":
        this.poll(gen);
        break;
    }
  }

  /** arm restarts the silence watchdog: a stream that says nothing for long is dead. */
  private arm(gen: number): void {
    const env = this.o.env;
    if (this.watchdog !== null) env.clearTimeout(this.watchdog);
    this.watchdog = env.setTimeout(() => this.fail(gen, false), this.o.silenceMs);
  }

  private poll(gen: number): void {
    this.o.env.get(this.o.path).then(
      (res) => {
        if (gen !== this.gen) return;
        if (res.status === 401) {
          this.stop();
          this.o.signedOut();
          return;
        }
        if (res.status !== 200) {
          this.fail(gen, false);
          return;
        }
        this.good(gen, res.text);
        if (gen === this.gen && !this.stopped) {
          this.timer = this.o.env.setTimeout(() => this.poll(gen), this.o.pollMs);
        }
      },
      () => this.fail(gen, false),
    );
  }

  private good(gen: number, text: string): void {
    if (gen !== this.gen || this.stopped) return;
    this.delivered = this.ever = true;
    this.failures = this.attempt = 0;
    if (this.rung !== "poll") this.arm(gen);
    this.o.status(this.rung);
    this.o.message(text);
  }

  private fail(gen: number, goingAway: boolean): void {
    if (gen !== this.gen || this.stopped) return;
    this.gen++;
    this.teardown();
    // A rung that worked and then dropped (a restart, a network blip) is
    // tried again; one that never delivered counts against itself.
    if (!this.delivered && !goingAway && ++this.failures >= TRIES_PER_RUNG && this.rung !== "poll") {
      this.rung = below(this.rung, this.o.env);
      this.failures = 0;
    }
    this.attempt++;
    this.o.status(this.ever ? "reconnecting" : "connecting");
    const delay = Math.max(100, backoffDelay(this.attempt, BACKOFF, this.o.env.random));
    this.timer = this.o.env.setTimeout(() => this.open(), delay);
  }
}
