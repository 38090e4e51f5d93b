import assert from "node:assert/strict";
import { test } from "node:test";
import { fill, formatActive, formatRate, formatSeconds, stateText } from "./admin_format";

const EN = { "admin.na": "n/a", "admin.unit.per_s": "{n}/s", "admin.unit.one_per_s": "1 per {n} s", "admin.unit.one_per_min": "1 per {n} min", "admin.unit.s": "{n} s", "admin.unit.min": "{n} min", "admin.unit.h": "{n} h" };
const KO = { "admin.na": "해당 없음", "admin.unit.per_s": "초당 {n}", "admin.unit.one_per_s": "{n}초에 1", "admin.unit.one_per_min": "{n}분에 1", "admin.unit.s": "{n}초", "admin.unit.min": "{n}분", "admin.unit.h": "{n}시간" };

// The same table as TestAdminFormat in templates/admin_props_test.go.
test("rates: one decimal, grouped, n/a when unknown", () => {
  const cases: [number | null, string, string][] = [
    [null, "n/a", "해당 없음"],
    [0, "0.0/s", "초당 0.0"],
    [2, "2.0/s", "초당 2.0"],
    [12.25, "12.3/s", "초당 12.3"],
    [1234.5, "1,234.5/s", "초당 1,234.5"],
    [1 / 30, "1 per 30 s", "30초에 1"],
    [0.5, "1 per 2 s", "2초에 1"],
    [1 / 240, "1 per 4 min", "4분에 1"],
    [0.96, "1.0/s", "초당 1.0"],
  ];
  for (const [v, en, ko] of cases) {
    assert.equal(formatRate(v, EN, "en"), en);
    assert.equal(formatRate(v, KO, "ko"), ko);
  }
});

test("seconds: s under two minutes, min under two hours, else h", () => {
  const cases: [number | null, string, string][] = [
    [null, "n/a", "해당 없음"],
    [0, "0 s", "0초"],
    [59.5, "60 s", "60초"],
    [119.4, "119 s", "119초"],
    [120, "2 min", "2분"],
    [7199, "120 min", "120분"],
    [7200, "2 h", "2시간"],
    [36_000_000, "10,000 h", "10,000시간"],
  ];
  for (const [v, en, ko] of cases) {
    assert.equal(formatSeconds(v, EN, "en"), en);
    assert.equal(formatSeconds(v, KO, "ko"), ko);
  }
});

test("fill and active", () => {
  assert.equal(fill("{processed} processed, {rejected} rejected", { processed: "3", rejected: "0" }), "3 processed, 0 rejected");
  assert.equal(fill("{x} stays", {}), "{x} stays");
  assert.equal(formatActive(1234, 5000, "en"), "1,234 / 5,000");
});

// The same table as TestAdminStateIsTrueToAdmission in templates/admin_props_test.go.
test("state: at capacity it does not claim to be admitting", () => {
  const S = {
    "admin.state.running": "Admitting",
    "admin.state.full": "Full",
    "admin.state.held": "Held",
    "admin.state.paused": "Paused",
    "admin.state.closed": "Closed",
    "admin.state.sold_out": "Sold out",
    "admin.state.scheduled": "Scheduled",
  };
  const cases: [boolean, boolean, boolean, boolean, boolean | null, number, number, string][] = [
    [false, false, false, false, false, 3, 10, "Admitting"],
    [false, false, false, false, null, 3, 10, "Admitting"],
    [false, false, false, false, false, 10, 10, "Full"],
    [false, false, false, false, false, 12, 10, "Full"],
    [false, false, false, false, true, 3, 10, "Held"],
    [true, false, false, false, true, 10, 10, "Paused"],
    [false, true, false, false, false, 0, 10, "Closed"],
    [true, false, true, false, false, 3, 10, "Sold out"],
    [false, false, false, true, false, 0, 10, "Scheduled"],
  ];
  for (const [paused, closed, soldOut, scheduled, degraded, active, capacity, want] of cases) {
    assert.equal(stateText(paused, closed, soldOut, scheduled, degraded, active, capacity, S), want);
  }
});
