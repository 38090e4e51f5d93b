// Keeps one live channel to the ticket, walking down the ladder when a rung
// keeps failing. Browser APIs come in through Env so tests can drive it.

import * as ladder from "./ladder";
import { Ladder, Transport } from "./ladder";
import { parseTicketText, Ticket } from "./ticket";
import { Display, State } from "./vocab";

export type ConnStatus = "connecting" | "reconnecting" | Transport;

/** A push channel (WebSocket or EventSource) reduced to what the runner needs. */
export interface Channel {
  close(): void;
}

export interface ChannelHandlers {
  open(): void;
  message(text: string): void;
  /** The channel ended; goingAway when the server said it is shutting down (1001). */
  closed(goingAway: boolean): void;
}

export interface Env {
  /** Absent when the browser lacks the API. */
  openWS?: (url: string, h: ChannelHandlers) => Channel;
  openSSE?: (url: string, h: ChannelHandlers) => Channel;
  /** GET with credentials; rejects on network failure or timeout. */
  get: (url: string) => Promise<{ status: number; text: string }>;
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (id: unknown) => void;
  random: () => number;
}

export interface Hooks {
  ticket(t: Ticket): void;
  status(s: ConnStatus): void;
}

export interface Options {
  room: string;
  ticket: string;
  /** The ticket endpoint, same origin: /api/rooms/{room}/tickets/{ticket}. */
  ticketURL: string;
  /** The same endpoint with a ws: or wss: scheme. */
  wsURL: string;
  nextUpdateMs: number;
  env: Env;
  hooks: Hooks;
}

/** How long a push channel may take to open. */
export const CONNECT_TIMEOUT_MS = 10_000;

export class Connection {
  private ladder: Ladder;
  private gen = 0; // bumps on every (re)connect so late callbacks of old channels are ignored
  private channel: Channel | null = null;
  private timer: unknown = null; // retry or next poll
  private watchdog: unknown = null;
  private nextUpdateMs: number;
  private stopped = false;
  private everConnected = false; // "reconnecting" only makes sense after a connection

  constructor(private readonly o: Options) {
    this.ladder = ladder.start({ ws: !!o.env.openWS, sse: !!o.env.openSSE });
    this.nextUpdateMs = o.nextUpdateMs;
  }

  get transport(): Transport {
    return this.ladder.transport;
  }

  start(): void {
    this.o.hooks.status("connecting");
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.gen++;
    this.teardown();
  }

  /**
   * nudge skips a pending wait, for when the page comes back into view or
   * the network returns. A live push channel is left alone.
   */
  nudge(): void {
    if (this.stopped || this.channel) return;
    this.open();
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
    const { env, ticketURL, wsURL } = this.o;
    const handlers: ChannelHandlers = {
      open: () => {
        if (gen !== this.gen) return;
        this.arm(gen, ladder.silenceLimitMs(this.nextUpdateMs));
        this.o.hooks.status(this.ladder.transport);
      },
      message: (text) => {
        const t = parseTicketText(text);
        if (t) this.good(gen, t); // a garbled message is not a sign of health, nor a failure
      },
      closed: (goingAway) => this.fail(gen, goingAway),
    };
    switch (this.ladder.transport) {
      case "ws":
        this.channel = env.openWS!(wsURL + "/ws", handlers);
        this.arm(gen, CONNECT_TIMEOUT_MS);
        break;
      case "sse":
        this.channel = env.openSSE!(ticketURL + "/events", handlers);
        this.arm(gen, CONNECT_TIMEOUT_MS);
        break;
      case "poll":
        this.poll(gen);
        break;
    }
  }

  private arm(gen: number, ms: number): void {
    const env = this.o.env;
    if (this.watchdog !== null) env.clearTimeout(this.watchdog);
    this.watchdog = env.setTimeout(() => this.fail(gen, false), ms);
  }

  private poll(gen: number): void {
    this.o.env.get(this.o.ticketURL).then(
      (res) => {
        if (gen !== this.gen) return;
        if (res.status === 404 || res.status === 410) {
          // The ticket is gone: say so rather than retry forever.
          this.good(gen, this.expired());
          return;
        }
        const t = res.status === 200 ? parseTicketText(res.text) : null;
        if (t) this.good(gen, t);
        else this.fail(gen, false);
      },
      () => this.fail(gen, false),
    );
  }

  private good(gen: number, t: Ticket): void {
    if (gen !== this.gen || this.stopped) return;
    this.ladder = ladder.onMessage(this.ladder);
    this.everConnected = true;
    if (t.next_update_ms > 0) this.nextUpdateMs = t.next_update_ms;
    if (this.ladder.transport === "poll") {
      this.timer = this.o.env.setTimeout(() => this.poll(gen), ladder.pollDelayMs(this.nextUpdateMs));
    } else {
      this.arm(gen, ladder.silenceLimitMs(this.nextUpdateMs));
    }
    this.o.hooks.status(this.ladder.transport);
    this.o.hooks.ticket(t); // last: it may stop the connection
  }

  private fail(gen: number, goingAway: boolean): void {
    if (gen !== this.gen || this.stopped) return;
    this.gen++; // ignore anything more from this channel
    this.teardown();
    const r = goingAway
      ? ladder.onGoingAway(this.ladder, undefined, this.o.env.random)
      : ladder.onFailure(this.ladder, { ws: !!this.o.env.openWS, sse: !!this.o.env.openSSE }, undefined, this.o.env.random);
    this.ladder = r.ladder;
    this.o.hooks.status(this.everConnected ? "reconnecting" : "connecting");
    this.timer = this.o.env.setTimeout(() => this.open(), r.delayMs);
  }

  private expired(): Ticket {
    return {
      room: this.o.room,
      ticket: this.o.ticket,
      state: State.Expired,
      display: Display.Expired,
      position: 0,
      waiting: 0,
      eta_s: null,
      eta_low_s: null,
      eta_high_s: null,
      next_update_ms: 0,
      token: null,
      orderable_at: null,
      redirect_url: null,
      accept_url: null,
      paused: false,
      queueing_method: "fifo",
      reason: "",
      sold_out_message: "",
      retry_after_s: 0,
      entry_position: 0,
      entered_at: null,
    };
  }
}
