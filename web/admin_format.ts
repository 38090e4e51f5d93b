// Numbers as the dashboard shows them; the same rules as the Go side's
// AdminFormatRate and AdminFormatSeconds in templates/admin_props.go.

export type Strings = Readonly<Record<string, string>>;

/** t looks a key up; a missing key shows itself. */
export function t(strings: Strings, key: string): string {
  return strings[key] ?? key;
}

/** fill puts values in for {name} placeholders. */
export function fill(s: string, values: Record<string, string>): string {
  return s.replace(/\{([a-z]+)\}/g, (m, name: string) => values[name] ?? m);
}

export function formatCount(n: number, lang: string): string {
  try {
    return new Intl.NumberFormat(lang, { maximumFractionDigits: 0 }).format(n);
  } catch {
    return String(Math.round(n));
  }
}

function oneDecimal(n: number, lang: string): string {
  try {
    return new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(n);
  } catch {
    return n.toFixed(1);
  }
}

/**
 * formatRate: "12.5/s" with one decimal; under one a second, one every so
 * often ("1 per 30 s", "1 per 4 min") so a slow room does not read as
 * stopped; or n/a (templates.AdminFormatRate).
 */
export function formatRate(v: number | null | undefined, strings: Strings, lang: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return t(strings, "admin.na");
  if (v > 0 && v < 0.95) {
    const every = Math.floor(1 / v + 0.5);
    if (every >= 120) return fill(t(strings, "admin.unit.one_per_min"), { n: formatCount(Math.floor((every + 30) / 60), lang) });
    return fill(t(strings, "admin.unit.one_per_s"), { n: formatCount(every, lang) });
  }
  return fill(t(strings, "admin.unit.per_s"), { n: oneDecimal(v, lang) });
}

/** formatPerMin: "2/min" with one decimal, or n/a (templates.AdminFormatPerMin). */
export function formatPerMin(v: number | null | undefined, strings: Strings, lang: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return t(strings, "admin.na");
  return fill(t(strings, "admin.unit.per_min"), { n: oneDecimal(v, lang) });
}

/** formatSeconds: under two minutes in seconds, under two hours in minutes, else hours; or n/a. */
export function formatSeconds(v: number | null | undefined, strings: Strings, lang: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return t(strings, "admin.na");
  if (v < 120) return fill(t(strings, "admin.unit.s"), { n: formatCount(Math.floor(v + 0.5), lang) });
  if (v < 7200) return fill(t(strings, "admin.unit.min"), { n: formatCount(Math.floor(v / 60 + 0.5), lang) });
  return fill(t(strings, "admin.unit.h"), { n: formatCount(Math.floor(v / 3600 + 0.5), lang) });
}

export function formatActive(active: number, capacity: number, lang: string): string {
  return `${formatCount(active, lang)} / ${formatCount(capacity, lang)}`;
}

/** stateText: the room's state word; degraded (this server admits nobody) or at capacity it does not claim to be admitting. */
export function stateText(
  paused: boolean,
  closed: boolean,
  soldOut: boolean,
  scheduled: boolean,
  degraded: boolean | null,
  active: number,
  capacity: number,
  strings: Strings,
): string {
  if (closed) return t(strings, "admin.state.closed");
  if (soldOut) return t(strings, "admin.state.sold_out");
  if (scheduled) return t(strings, "admin.state.scheduled");
  if (paused) return t(strings, "admin.state.paused");
  if (degraded) return t(strings, "admin.state.held");
  if (capacity > 0 && active >= capacity) return t(strings, "admin.state.full");
  return t(strings, "admin.state.running");
}
