import assert from "node:assert/strict";
import { test } from "node:test";
import { EN, ticket } from "./testing";
import { entryPositionFor, progressPercent, toView } from "./view";

test("progress runs from the place at entry to the front", () => {
  assert.equal(progressPercent(101, 101), 0);
  assert.equal(progressPercent(101, 51), 50);
  assert.equal(progressPercent(101, 1), 100);
  assert.equal(progressPercent(1, 1), 100, "first in line is at the front");
  assert.equal(progressPercent(0, 7), 0, "unknown entry starts at the current place");
  assert.equal(progressPercent(5, 9), 0, "never negative if the line grew behind a stale record");
  assert.equal(progressPercent(10, 0), 100);
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
    eta: "about 3 minutes",
    progress: 50,
    paused: true,
  });
  assert.equal(toView(ticket({ position: 1 }), 1, EN, "en").ahead, "No one is ahead of you");
});
