// Times the server writes in UTC (<time datetime data-local-time>) shown in
// the operator's zone and language, the UTC text kept on hover.

/** localTime formats an RFC 3339 time in the browser's zone; "" when unreadable. */
export function localTime(iso: string, lang: string, zone?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const opts: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "short", timeZone: zone };
  try {
    return new Intl.DateTimeFormat(lang, opts).format(d);
  } catch {
    return new Intl.DateTimeFormat(undefined, opts).format(d);
  }
}

export function localTimes(doc: Document, lang: string): void {
  for (const el of Array.from(doc.querySelectorAll<HTMLTimeElement>("time[data-local-time]"))) {
    const text = localTime(el.dateTime, lang);
    if (!text) continue;
    el.title = el.textContent ?? "";
    el.textContent = text;
  }
}

/** utcText is a moment as the dashboard writes it without script: "2026-12-02 18:40:05 UTC". */
export function utcText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ") + " UTC";
}
