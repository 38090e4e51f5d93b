import assert from "node:assert/strict";
import { test } from "node:test";
import { countdownClock, countdownText, etaRangeWords, etaWords, formatHourMinute, formatMoment, openingText, secondsLeft } from "./format";
import { formatNumber, plural } from "./strings";
import { EN, KO } from "./testing";

// The same table as TestETAWords in templates/i18n_test.go.
const etaCases: [number | null, string, string][] = [
  [null, "Working it out…", ""],
  [-1, "Working it out…", ""],
  [0, "less than a minute", "1분 미만"],
  [59, "less than a minute", "1분 미만"],
  [60, "about 1 minute", "약 1분"],
  [89, "about 1 minute", "약 1분"],
  [90, "about 2 minutes", "약 2분"],
  [180, "about 3 minutes", "약 3분"],
  [3569, "about 59 minutes", "약 59분"],
  [3570, "about 1 hour", "약 1시간"],
  [5399, "about 1 hour", "약 1시간"],
  [5400, "about 2 hours", "약 2시간"],
  [36_000_000, "about 10,000 hours", "약 10,000시간"],
];

// The same table as TestETARangeWords in templates/i18n_test.go.
const etaRangeCases: [number | null, number | null, number | null, string, string][] = [
  [null, null, null, "Working it out…", ""],
  [null, 200, null, "about 3 minutes", "약 3분"],
  [0, 20, 59, "less than a minute", "1분 미만"],
  [30, 50, 70, "about 1 minute", "약 1분"],
  [41, 68, 140, "about 1–2 minutes", "약 1–2분"],
  [150, 240, 300, "about 3–5 minutes", "약 3–5분"],
  [170, 180, 200, "about 3 minutes", "약 3분"],
  [300, 200, 100, "about 3 minutes", "약 3분"],
  [2400, 3000, 5400, "about 1–2 hours", "약 1–2시간"],
  [3000, 3600, 5000, "about 1 hour", "약 1시간"],
  [36_000_000, 36_000_000, 72_000_000, "about 10,000–20,000 hours", "약 10,000–20,000시간"],
];

test("eta range in plain words, English and Korean", () => {
  for (const [low, point, high, en, ko] of etaRangeCases) {
    assert.equal(etaRangeWords(low, point, high, EN, "en"), en, `en ${low}–${high}`);
    if (ko) assert.equal(etaRangeWords(low, point, high, KO, "ko"), ko, `ko ${low}–${high}`);
  }
});

test("eta in plain words, English and Korean", () => {
  for (const [s, en, ko] of etaCases) {
    assert.equal(etaWords(s, EN, "en"), en, `en ${s}`);
    if (ko) assert.equal(etaWords(s, KO, "ko"), ko, `ko ${s}`);
  }
});

test("plural picks zero/one/other and falls back to other", () => {
  assert.equal(plural(EN, "waiting.ahead", 0, "en"), "No one is ahead of you");
  assert.equal(plural(EN, "waiting.ahead", 1, "en"), "1 person ahead of you");
  assert.equal(plural(EN, "waiting.ahead", 1234, "en"), "1,234 people ahead of you");
  assert.equal(plural(KO, "waiting.ahead", 1, "ko"), "내 앞에 1명");
  assert.equal(plural(EN, "waiting.total", 0, "en"), "0 people");
});

test("numbers are grouped per locale", () => {
  assert.equal(formatNumber(1234567, "en"), "1,234,567");
  assert.equal(formatNumber(1234567, "ko"), "1,234,567");
  assert.equal(formatNumber(1234567, "de"), "1.234.567");
});

test("countdown rounds up and never goes below zero", () => {
  assert.equal(secondsLeft(10_000, 0), 10);
  assert.equal(secondsLeft(10_000, 9_001), 1);
  assert.equal(secondsLeft(10_000, 10_000), 0);
  assert.equal(secondsLeft(10_000, 20_000), 0);
  assert.equal(countdownText(2, EN, "en"), "Taking you there in 2 seconds…");
  assert.equal(countdownText(1, EN, "en"), "Taking you there in 1 second…");
  assert.equal(countdownText(0, EN, "en"), "Taking you there now…");
});

// The same table as TestCountdownClock in templates/i18n_test.go.
test("countdownClock and openingText", () => {
  for (const [s, want] of [
    [0, "0:00"],
    [-3, "0:00"],
    [9, "0:09"],
    [61, "1:01"],
    [3599, "59:59"],
    [3600, "1:00:00"],
    [90061, "25:01:01"],
  ] as [number, string][]) {
    assert.equal(countdownClock(s), want, String(s));
  }
  assert.equal(openingText(125, EN), "Opens in 2:05");
  assert.equal(openingText(0, EN), "Drawing places…");
  assert.equal(openingText(3, KO), "오픈까지 0:03");
});

test("a moment shows its date only when it is not today", () => {
  const now = new Date(2026, 11, 2, 9, 0);
  const later = new Date(2026, 11, 2, 19, 19);
  const twoDays = new Date(2026, 11, 4, 19, 19);
  assert.equal(formatMoment(later, now, "en-US"), formatHourMinute(later, "en-US"));
  const far = formatMoment(twoDays, now, "en-US");
  assert.match(far, /Dec/);
  assert.match(far, /4/);
  assert.match(far, /7:19/);
  assert.match(formatMoment(twoDays, now, "ko-KR"), /12월 4일/);
});
