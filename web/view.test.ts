import assert from "node:assert/strict";
import { test } from "node:test";
import { EN, ticket } from "./testing";
import { entryPositionFor, progressPercent, toView } from "./view";

test("progress runs from the place at entry to the door", () => {
  assert.equal(progressPercent(100, 100), 0, "empty at entry far back");
  assert.equal(progressPercent(100, 51), 49);
  assert.equal(progressPercent(100, 1), 99, "#1 still waiting is not full");
  assert.equal(progressPercent(100_000, 1), 99, "not even when rounding would say 100");
  assert.equal(progressPercent(1, 1), 50, "entered at #1: being next is half the way");
  assert.equal(progressPercent(2, 2), 33, "entered at #2: a third");
  assert.equal(progressPercent(2, 1), 66, "then #1");
  assert.equal(progressPercent(0, 7), 12, "unknown entry starts at the current place");
  assert.equal(progressPercent(5, 9), 10, "never negative if the line grew behind a stale record");
  assert.equal(progressPercent(10, 0), 100, "admitted");
});

test("the entry place is the largest seen", () => {
  assert.equal(entryPositionFor(NaN, NaN, 40), 40);
  assert.equal(entryPositionFor(0, 120, 40), 120);
  assert.equal(entryPositionFor(300, 120, 40), 300);
});

test("a waiting ticket becomes the words on the page", () => {
  const v = toView(ticket({ position: 1235, waiting: 5000, eta_s: 180, paused: true }), 2469, EN, "en");
  assert.deepEqual(v, {
    state: "waiting",
    position: "1,235",
    ahead: "1,234 people ahead of you",
    waiting: "5,000 people",
    eta: "None while admission is paused",
    progress: 50,
    paused: true,
  });
  assert.equal(toView(ticket({ position: 1235, eta_s: 180, paused: false }), 2469, EN, "en").eta, "about 3 minutes");
  assert.equal(toView(ticket({ position: 1 }), 1, EN, "en").ahead, "No one is ahead of you");
});
