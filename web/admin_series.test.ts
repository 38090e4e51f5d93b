import assert from "node:assert/strict";
import { test } from "node:test";
import { Series, SPAN_MS } from "./admin_series";
import { Point } from "./admin_types";

function pt(t: number, waiting = 0, rate: number | null = null): Point {
  return { t, waiting, active: 0, capacity: 10, admitted_per_s: rate, entries_per_s: null, abandoned_per_s: null, no_shows_per_min: null, idle_per_min: null, tail_eta_s: null };
}

test("a repeated or older sample is not added twice", () => {
  const s = new Series([pt(1000), pt(3000)]);
  assert.equal(s.add(pt(3000)), false);
  assert.equal(s.add(pt(2000)), false);
  assert.equal(s.add(pt(5000)), true);
  assert.deepEqual(
    s.points.map((p) => p.t),
    [1000, 3000, 5000],
  );
});

test("points older than 15 minutes fall off", () => {
  const s = new Series();
  for (let t = 0; t <= SPAN_MS + 4000; t += 2000) s.add(pt(t));
  assert.equal(s.points[0].t, 4000);
  assert.equal(s.points.length, SPAN_MS / 2000 + 1);
});

test("columns: x in seconds, unknown values as null", () => {
  const s = new Series([pt(1000, 5, 2.5), pt(3000, 7, null)]);
  assert.deepEqual(s.columns(["waiting", "admitted_per_s"]), [
    [1, 3],
    [5, 7],
    [2.5, null],
  ]);
});

test("a range of the sale's history keeps every minute", () => {
  const pts = Array.from({ length: 120 }, (_, i) => ({ t: i * 60_000 }) as Point);
  assert.equal(new Series(pts, Infinity).points.length, 120);
  assert.ok(new Series(pts).points.length <= 16);
});
