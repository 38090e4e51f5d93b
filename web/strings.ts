// Client strings come from the page (rendered from the Go catalogue in
// templates/i18n.go), so there is one catalogue. KEYS lists what this client
// reads; a Go test checks the catalogue has every one in every language.

export const KEYS = [
  "waiting.ahead.zero",
  "waiting.ahead.one",
  "waiting.ahead.other",
  "waiting.total.one",
  "waiting.total.other",
  "eta.unknown",
  "eta.paused",
  "eta.under_minute",
  "eta.minutes.one",
  "eta.minutes.other",
  "eta.hours.one",
  "eta.hours.other",
  "eta.range_minutes",
  "eta.range_hours",
  "conn.connecting",
  "conn.ws",
  "conn.sse",
  "conn.poll",
  "conn.reconnecting",
  "admitted.countdown.one",
  "admitted.countdown.other",
  "admitted.now",
  "admitted.heading",
  "notify.on",
  "notify.off",
  "notify.blocked",
  "notify.body",
  "checking.body",
  "checking.failed",
  "checking.longer",
  "embed.joining",
  "leave.failed",
  "accept.status.accepted",
  "accept.status.published",
  "accept.status.processed",
  "accept.status.rejected",
  "accept.reason.sold_out",
  "accept.recovered",
  "full.retry.one",
  "full.retry.other",
  "scheduled.body",
  "scheduled.countdown",
  "scheduled.drawing",
  "expired.heading",
  "expired.body",
  "expired.no_show.heading",
  "expired.no_show.body",
  "expired.idle.heading",
  "expired.idle.body",
] as const;

export type Key = (typeof KEYS)[number];
export type Strings = Readonly<Record<string, string>>;

/** t looks a key up; a missing key shows itself rather than an empty page. */
export function t(strings: Strings, key: Key): string {
  return strings[key] ?? key;
}

/** formatNumber groups digits the way the page's language does. */
export function formatNumber(n: number, lang: string): string {
  try {
    return new Intl.NumberFormat(lang, { maximumFractionDigits: 0 }).format(n);
  } catch {
    return String(Math.round(n));
  }
}

/**
 * plural picks "<base>.zero" for 0 and "<base>.one" for 1 when the language
 * has them, else "<base>.other", and puts the number in for {n}. The same
 * rule as templates.Tn in Go: enough for English and Korean.
 */
export function plural(strings: Strings, base: string, n: number, lang: string): string {
  const pick = (n === 0 && strings[`${base}.zero`]) || (n === 1 && strings[`${base}.one`]) || strings[`${base}.other`];
  return (pick ?? `${base}.other`).replace("{n}", formatNumber(n, lang));
}
