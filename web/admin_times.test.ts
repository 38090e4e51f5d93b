import { test } from "node:test";
import assert from "node:assert/strict";
import { localTime } from "./admin_times";

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
