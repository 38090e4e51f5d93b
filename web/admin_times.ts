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

/**
 * localEchoes fills each date field's echo (data-local-of: the input's id)
 * with its UTC value in the operator's zone, as it is typed; empty or
 * unreadable values hide it. text is the catalogue's "… {time}".
 */
export function localEchoes(doc: Document, lang: string, text: string): void {
  for (const echo of Array.from(doc.querySelectorAll<HTMLElement>("[data-local-of]"))) {
    const input = doc.getElementById(echo.dataset.localOf ?? "") as HTMLInputElement | null;
    if (!input) continue;
    const show = () => {
      const when = input.value ? localTime(fromFormUTC(input.value), lang) : "";
      echo.hidden = when === "";
      echo.textContent = when ? text.replace("{time}", when) : "";
    };
    input.addEventListener("input", show);
    show();
  }
}

/** fromFormUTC reads a datetime-local value ("2026-12-03T12:00" or with seconds) as UTC. */
export function fromFormUTC(v: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(v) ? v + (v.length === 16 ? ":00Z" : "Z") : "";
}
