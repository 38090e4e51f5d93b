// Formatting that must read the same as the server-rendered page.

import { formatNumber, plural, Strings, t } from "./strings";

/**
 * etaWords says a wait in plain words: under a minute, about N minutes,
 * about N hours. Same rounding as templates.ETAWords in Go.
 */
export function etaWords(seconds: number | null, strings: Strings, lang: string): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return t(strings, "eta.unknown");
  if (seconds < 60) return t(strings, "eta.under_minute");
  const minutes = Math.max(1, Math.round(seconds / 60));
  if (minutes < 60) return plural(strings, "eta.minutes", minutes, lang);
  return plural(strings, "eta.hours", Math.max(1, Math.round(seconds / 3600)), lang);
}

/**
 * etaRangeWords says an estimate with its range: "less than a minute" only
 * when even the high end is, "about 3–5 minutes" when the ends round to
 * different minutes, else as etaWords says the point. Without a range, the
 * point alone. Same rounding as templates.ETARangeWords in Go.
 */
export function etaRangeWords(low: number | null, point: number | null, high: number | null, strings: Strings, lang: string): string {
  const ok = (v: number | null): v is number => v !== null && Number.isFinite(v) && v >= 0;
  if (!ok(point) || !ok(low) || !ok(high)) return etaWords(point, strings, lang);
  const lo = Math.min(low, point);
  const hi = Math.max(high, point);
  if (hi < 60) return t(strings, "eta.under_minute");
  let a = Math.max(1, Math.floor((lo + 30) / 60));
  let b = Math.floor((hi + 30) / 60);
  let key: "eta.range_minutes" | "eta.range_hours" = "eta.range_minutes";
  let single = "eta.minutes";
  if (b >= 60) {
    a = Math.max(1, Math.floor((lo + 1800) / 3600));
    b = Math.floor((hi + 1800) / 3600);
    key = "eta.range_hours";
    single = "eta.hours";
  }
  if (b <= a) return plural(strings, single, a, lang);
  return t(strings, key).replace("{lo}", formatNumber(a, lang)).replace("{hi}", formatNumber(b, lang));
}

/** formatClock shows a wall-clock time in the visitor's own time zone. */
export function formatClock(d: Date, lang: string): string {
  try {
    return new Intl.DateTimeFormat(lang, { hour: "numeric", minute: "2-digit", second: "2-digit" }).format(d);
  } catch {
    return d.toLocaleTimeString();
  }
}

/** formatHourMinute is formatClock without seconds, for "in line since". */
export function formatHourMinute(d: Date, lang: string): string {
  try {
    return new Intl.DateTimeFormat(lang, { hour: "numeric", minute: "2-digit" }).format(d);
  } catch {
    return d.toLocaleTimeString();
  }
}

/**
 * formatMoment is a time of day in the visitor's zone, with its date
 * ("Fri, Dec 4, 7:19 PM") when that is not today there, so an opening two
 * days away does not read as today.
 */
export function formatMoment(d: Date, now: Date, lang: string): string {
  const sameDay = d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  if (sameDay) return formatHourMinute(d, lang);
  try {
    return new Intl.DateTimeFormat(lang, { weekday: "short", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }).format(d);
  } catch {
    return d.toLocaleString();
  }
}

/** secondsLeft counts whole seconds up to a moment, never below zero. */
export function secondsLeft(untilMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((untilMs - nowMs) / 1000));
}

/** countdownText is the line under "It's your turn". */
export function countdownText(seconds: number, strings: Strings, lang: string): string {
  return seconds > 0 ? plural(strings, "admitted.countdown", seconds, lang) : t(strings, "admitted.now");
}

/** countdownClock is a countdown as h:mm:ss (m:ss under an hour), as templates.CountdownClock. */
export function countdownClock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor(s / 60) % 60;
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** openingText is the pre-queue's countdown line, or "drawing" once it is over. */
export function openingText(seconds: number, strings: Strings): string {
  return seconds > 0 ? t(strings, "scheduled.countdown").replace("{t}", countdownClock(seconds)) : t(strings, "scheduled.drawing");
}
