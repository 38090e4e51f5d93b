import { test } from "node:test";
import assert from "node:assert/strict";
import { fromFormUTC, localTime, utcText } from "./admin_times";
import { clockFormat, spansDays } from "./admin_charts";

test("a UTC time reads in the operator's zone", () => {
  const seoul = localTime("2026-12-01T01:00:00Z", "en-US", "Asia/Seoul");
  assert.match(seoul, /Dec 1, 2026/);
  assert.match(seoul, /10:00/);
  const ny = localTime("2026-12-01T01:00:00Z", "en-US", "America/New_York");
  assert.match(ny, /Nov 30, 2026/);
  assert.match(ny, /8:00/);
});

test("an unreadable time is left alone", () => {
  assert.equal(localTime("not a time", "en"), "");
});

test("UTC on hover, to the second", () => {
  assert.equal(utcText(Date.UTC(2026, 11, 2, 18, 40, 5, 700)), "2026-12-02 18:40:05 UTC");
});

test("a chart over days says the date; the day is the operator's", () => {
  const a = Date.UTC(2026, 11, 1, 14, 0); // 23:00 in Seoul, 09:00 in New York
  const b = Date.UTC(2026, 11, 1, 16, 0); // 01:00 the next day in Seoul, 11:00 in New York
  assert.equal(spansDays(a, b, "Asia/Seoul"), true);
  assert.equal(spansDays(a, b, "America/New_York"), false);
  assert.match(clockFormat("en-US", false, true, "Asia/Seoul")(b / 1000), /Dec 2.*1:00/);
  assert.doesNotMatch(clockFormat("en-US", false, false, "Asia/Seoul")(b / 1000), /Dec/);
});

test("a date field's value is UTC", () => {
  assert.equal(fromFormUTC("2026-12-03T12:00"), "2026-12-03T12:00:00Z");
  assert.equal(fromFormUTC("2026-12-03T12:00:30"), "2026-12-03T12:00:30Z");
  assert.equal(fromFormUTC(""), "");
  assert.equal(fromFormUTC("tomorrow"), "");
  assert.match(localTime(fromFormUTC("2026-12-03T20:00"), "en-US", "Asia/Seoul"), /Dec 4, 2026.*5:00/);
});
