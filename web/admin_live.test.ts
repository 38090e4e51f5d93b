import assert from "node:assert/strict";
import { test } from "node:test";
import { Live, LiveStatus, TRIES_PER_RUNG } from "./admin_live";
import { Channel, ChannelHandlers, Env } from "./transport";

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
}

class FakeEnv implements Env {
  timers = new Map<number, { fn: () => void; ms: number }>();
  private id = 1;
  channels: FakeChannel[] = [];
  gets: { url: string; resolve: (r: { status: number; text: string }) => void }[] = [];
  openWS?: Env["openWS"] = (url, h) => this.push(new FakeChannel("ws", url, h));
  openSSE?: Env["openSSE"] = (url, h) => this.push(new FakeChannel("sse", url, h));
  get = (url: string) => new Promise<{ status: number; text: string }>((resolve) => this.gets.push({ url, resolve }));
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.id++;
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
  /** fire runs the one pending timer (the retry) and returns its delay. */
  fire(): number {
    assert.equal(this.timers.size, 1, `want one pending timer, have ${this.timers.size}`);
    const [id, t] = [...this.timers][0];
    this.timers.delete(id);
    t.fn();
    return t.ms;
  }
}

function start(env: FakeEnv) {
  const got: string[] = [];
  const statuses: LiveStatus[] = [];
  let signedOut = false;
  const live = new Live({
    path: "/admin/rooms/drop/live",
    wsURL: "ws://h/admin/rooms/drop/live",
    env,
    pollMs: 2000,
    silenceMs: 30_000,
    message: (t) => got.push(t),
    status: (s) => statuses.push(s),
    signedOut: () => (signedOut = true),
  });
  live.start();
  return { live, got, statuses, signedOut: () => signedOut };
}

test("WebSocket first; messages pass through and say live", () => {
  const env = new FakeEnv();
  const { got, statuses } = start(env);
  assert.equal(env.last.url, "ws://h/admin/rooms/drop/live/ws");
  env.last.h.open();
  env.last.h.message('{"a":1}');
  assert.deepEqual(got, ['{"a":1}']);
  assert.deepEqual(statuses, ["connecting", "ws"]);
});

test("a rung that never delivers gives way to the next: ws, then sse, then polling", async () => {
  const env = new FakeEnv();
  const { got, statuses } = start(env);
  for (let i = 0; i < TRIES_PER_RUNG; i++) {
    assert.equal(env.last.kind, "ws");
    env.last.h.closed(false);
    env.fire();
  }
  assert.equal(env.last.kind, "sse");
  assert.equal(env.last.url, "/admin/rooms/drop/live/events");
  for (let i = 0; i < TRIES_PER_RUNG; i++) {
    env.last.h.closed(false);
    env.fire();
  }
  assert.equal(env.gets.length, 1);
  env.gets[0].resolve({ status: 200, text: '{"p":1}' });
  await Promise.resolve();
  assert.deepEqual(got, ['{"p":1}']);
  assert.equal(statuses[statuses.length - 1], "poll");
  assert.equal(env.fire(), 2000); // the next poll
  assert.equal(env.gets.length, 2);
});

test("a rung that worked is tried again after a drop, saying reconnecting", () => {
  const env = new FakeEnv();
  const { statuses } = start(env);
  for (let i = 0; i < TRIES_PER_RUNG + 1; i++) {
    env.last.h.message("{}");
    env.last.h.closed(false);
    env.fire();
    assert.equal(env.last.kind, "ws");
  }
  assert.ok(statuses.includes("reconnecting"));
});

test("silence past the limit counts as a failure", () => {
  const env = new FakeEnv();
  start(env);
  const first = env.last;
  env.last.h.open();
  assert.equal(env.fire(), 30_000); // the watchdog
  assert.equal(first.closed, true);
  env.fire(); // the retry
  assert.notEqual(env.last, first);
});

test("a 401 while polling sends the viewer to sign in", async () => {
  const env = new FakeEnv();
  env.openWS = undefined;
  env.openSSE = undefined;
  const { signedOut } = start(env);
  env.gets[0].resolve({ status: 401, text: "" });
  await Promise.resolve();
  assert.equal(signedOut(), true);
  assert.equal(env.timers.size, 0);
});
