import assert from "node:assert/strict";
import { test } from "node:test";
import { FAILURES_BEFORE_FALLBACK } from "./ladder";
import { ticket } from "./testing";
import { Ticket } from "./ticket";
import { Channel, ChannelHandlers, ConnStatus, Connection, Env } from "./transport";

class FakeChannel implements Channel {
  closed = false;
  constructor(
    readonly kind: string,
    readonly url: string,
    readonly h: ChannelHandlers,
  ) {}
  close() {
    this.closed = true;
  }
  send(t: Ticket) {
    this.h.message(JSON.stringify(t));
  }
}

interface PendingGet {
  url: string;
  resolve: (r: { status: number; text: string }) => void;
  reject: (e: Error) => void;
}

class FakeEnv implements Env {
  timers = new Map<number, { fn: () => void; ms: number }>();
  private nextID = 1;
  channels: FakeChannel[] = [];
  gets: PendingGet[] = [];
  openWS?: Env["openWS"] = (url, h) => this.push(new FakeChannel("ws", url, h));
  openSSE?: Env["openSSE"] = (url, h) => this.push(new FakeChannel("sse", url, h));
  get = (url: string) => new Promise<{ status: number; text: string }>((resolve, reject) => this.gets.push({ url, resolve, reject }));
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.nextID++;
    this.timers.set(id, { fn, ms });
    return id;
  };
  clearTimeout = (id: unknown) => void this.timers.delete(id as number);
  random = () => 0.5;

  private push(c: FakeChannel) {
    this.channels.push(c);
    return c;
  }
  get last(): FakeChannel {
    return this.channels[this.channels.length - 1];
  }
  /** Fires the one pending timer and returns its delay. */
  fire(): number {
    assert.equal(this.timers.size, 1, `want one pending timer, have ${this.timers.size}`);
    const [id, t] = [...this.timers][0];
    this.timers.delete(id);
    t.fn();
    return t.ms;
  }
}

const tick = () => new Promise((r) => setImmediate(r));

function setup(env = new FakeEnv(), onTicket?: (t: Ticket, c: Connection) => void) {
  const statuses: ConnStatus[] = [];
  const tickets: Ticket[] = [];
  const conn: Connection = new Connection({
    room: "drop",
    ticket: "t1",
    ticketURL: "/api/rooms/drop/tickets/t1",
    wsURL: "ws://wait.test/api/rooms/drop/tickets/t1",
    nextUpdateMs: 2000,
    env,
    hooks: {
      ticket: (t) => {
        tickets.push(t);
        onTicket?.(t, conn);
      },
      status: (s) => statuses.push(s),
    },
  });
  return { env, conn, statuses, tickets };
}

test("WebSocket first: open, message, status live ws", () => {
  const { env, conn, statuses, tickets } = setup();
  conn.start();
  assert.equal(env.last.kind, "ws");
  assert.equal(env.last.url, "ws://wait.test/api/rooms/drop/tickets/t1/ws");
  env.last.h.open();
  env.last.send(ticket({ position: 5 }));
  assert.deepEqual(statuses, ["connecting", "ws", "ws"]);
  assert.equal(tickets[0].position, 5);
  assert.equal(env.timers.size, 1, "only the silence watchdog");
});

test("falls from WebSocket to SSE to polling, keeping the same ticket", async () => {
  const { env, conn, statuses, tickets } = setup();
  conn.start();
  for (let i = 0; i < FAILURES_BEFORE_FALLBACK; i++) {
    assert.equal(env.last.kind, "ws");
    env.last.h.closed(false);
    env.fire();
  }
  assert.equal(env.last.kind, "sse");
  assert.equal(env.last.url, "/api/rooms/drop/tickets/t1/events");
  for (let i = 0; i < FAILURES_BEFORE_FALLBACK; i++) {
    env.last.h.closed(false);
    env.fire();
  }
  assert.equal(conn.transport, "poll");
  assert.equal(env.gets.length, 1);
  assert.equal(env.gets[0].url, "/api/rooms/drop/tickets/t1");
  env.gets[0].resolve({ status: 200, text: JSON.stringify(ticket({ position: 3, next_update_ms: 5000 })) });
  await tick();
  assert.equal(tickets[0].position, 3);
  assert.equal(statuses.at(-1), "poll");
  assert.equal(env.fire(), 5000, "polls again after next_update_ms");
  assert.equal(env.gets.length, 2);
});

test("backoff delays grow between failures and restart on a new rung", () => {
  const { env, conn } = setup();
  conn.start();
  const delays: number[] = [];
  for (let i = 0; i < 7; i++) {
    env.last.h.closed(false);
    delays.push(env.fire());
    if (conn.transport === "poll") break;
  }
  // random() = 0.5: half the ceiling, which restarts on each new rung
  assert.deepEqual(delays, [500, 1000, 500, 1000, 2000, 500]);
});

test("a 1001 close reconnects on the same rung after a spread-out delay", () => {
  const { env, conn, statuses } = setup();
  conn.start();
  env.last.h.open();
  env.last.send(ticket());
  env.last.h.closed(true);
  assert.equal(statuses.at(-1), "reconnecting");
  assert.equal(env.fire(), 2000);
  assert.equal(env.last.kind, "ws");
  assert.equal(env.channels.length, 2);
});

test("a channel that goes silent is taken for dead", () => {
  const { env, conn } = setup();
  conn.start();
  env.last.h.open();
  env.last.send(ticket());
  const first = env.last;
  assert.equal(env.fire(), 60_000, "watchdog at the silence limit");
  assert.ok(first.closed);
  env.fire(); // the retry
  assert.equal(env.channels.length, 2);
});

test("late messages from a replaced channel are ignored", () => {
  const { env, conn, tickets } = setup();
  conn.start();
  const old = env.last;
  old.h.closed(false);
  old.send(ticket({ position: 99 }));
  assert.equal(tickets.length, 0);
  env.fire();
  env.last.send(ticket({ position: 4 }));
  assert.deepEqual(
    tickets.map((t) => t.position),
    [4],
  );
});

test("stopping from the ticket hook leaves nothing running", () => {
  const { env, conn } = setup(undefined, (t, c) => {
    if (t.state !== "waiting") c.stop();
  });
  conn.start();
  env.last.send(ticket({ state: "admitted" }));
  assert.equal(env.timers.size, 0);
  assert.ok(env.last.closed);
});

test("a 404 while polling means the place is gone", async () => {
  const env = new FakeEnv();
  env.openWS = undefined;
  env.openSSE = undefined;
  const { conn, tickets } = setup(env);
  conn.start();
  env.gets[0].resolve({ status: 404, text: "" });
  await tick();
  assert.equal(tickets[0].state, "expired");
  assert.equal(tickets[0].ticket, "t1");
});

test("a network error while polling backs off and polls again", async () => {
  const env = new FakeEnv();
  env.openWS = undefined;
  env.openSSE = undefined;
  const { conn, statuses } = setup(env);
  conn.start();
  env.gets[0].reject(new Error("offline"));
  await tick();
  assert.equal(statuses.at(-1), "connecting", "never connected yet: not 'reconnecting'");
  env.fire();
  assert.equal(env.gets.length, 2);
  env.gets[1].resolve({ status: 200, text: JSON.stringify(ticket()) });
  await tick();
  env.fire();
  env.gets[2].resolve({ status: 503, text: "" });
  await tick();
  assert.equal(statuses.at(-1), "reconnecting");
});

test("nudge skips a pending retry but leaves a live channel alone", () => {
  const { env, conn } = setup();
  conn.start();
  env.last.h.open();
  conn.nudge();
  assert.equal(env.channels.length, 1);
  env.last.h.closed(false);
  conn.nudge();
  assert.equal(env.channels.length, 2);
  assert.equal(env.timers.size, 1, "the new channel's connect timeout only");
});
