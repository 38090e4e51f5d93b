import assert from "node:assert/strict";
import { test } from "node:test";
import * as ladder from "./ladder";
import { FAILURES_BEFORE_FALLBACK, Ladder } from "./ladder";

const all = { ws: true, sse: true };
const half = () => 0.5;

function failTimes(l: Ladder, n: number, support = all): Ladder {
  for (let i = 0; i < n; i++) l = ladder.onFailure(l, support, undefined, half).ladder;
  return l;
}

test("starts on the highest rung the browser supports", () => {
  assert.equal(ladder.start(all).transport, "ws");
  assert.equal(ladder.start({ ws: false, sse: true }).transport, "sse");
  assert.equal(ladder.start({ ws: false, sse: false }).transport, "poll");
});

test("steps down after repeated failures without a good message", () => {
  let l = ladder.start(all);
  l = failTimes(l, FAILURES_BEFORE_FALLBACK - 1);
  assert.equal(l.transport, "ws");
  l = failTimes(l, 1);
  assert.equal(l.transport, "sse");
  assert.equal(l.failures, 0);
  l = failTimes(l, FAILURES_BEFORE_FALLBACK);
  assert.equal(l.transport, "poll");
  l = failTimes(l, 10);
  assert.equal(l.transport, "poll", "polling is the floor");
});

test("a good message resets the count, so flaky-but-working stays put", () => {
  let l = ladder.start(all);
  for (let i = 0; i < 10; i++) {
    l = failTimes(l, FAILURES_BEFORE_FALLBACK - 1);
    l = ladder.onMessage(l);
  }
  assert.deepEqual(l, { transport: "ws", failures: 0, attempt: 0 });
});

test("skips a rung the browser lacks", () => {
  const l = failTimes(ladder.start({ ws: true, sse: false }), FAILURES_BEFORE_FALLBACK, { ws: true, sse: false });
  assert.equal(l.transport, "poll");
});

test("backoff grows on a rung and starts again on the next", () => {
  let l = failTimes(ladder.start(all), FAILURES_BEFORE_FALLBACK - 1);
  assert.equal(l.attempt, FAILURES_BEFORE_FALLBACK - 1);
  const down = ladder.onFailure(l, all, undefined, () => 0.999);
  assert.equal(down.ladder.transport, "sse");
  assert.equal(down.delayMs, 999, "the next rung is tried within a second");
  l = failTimes(ladder.start({ ws: false, sse: false }), 20, { ws: false, sse: false });
  const r = ladder.onFailure(l, all, undefined, () => 0.999);
  assert.equal(r.delayMs, 29_970, "polling backs off up to the 30 s cap");
});

test("going away spreads the retry but does not count as a failure", () => {
  const r = ladder.onGoingAway(ladder.start(all), undefined, () => 0.999);
  assert.equal(r.ladder.transport, "ws");
  assert.equal(r.ladder.failures, 0);
  assert.ok(r.delayMs >= 3000, `delay ${r.delayMs}`);
});

test("silence and poll pacing follow next_update_ms within bounds", () => {
  assert.equal(ladder.silenceLimitMs(2000), 60_000);
  assert.equal(ladder.silenceLimitMs(15_000), 90_000);
  assert.equal(ladder.pollDelayMs(0), 5000);
  assert.equal(ladder.pollDelayMs(200), 1000);
  assert.equal(ladder.pollDelayMs(5000), 5000);
  assert.equal(ladder.pollDelayMs(600_000), 60_000);
});
