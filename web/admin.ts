// Admin dashboard client. The server renders complete pages that work
// without script; this keeps them live (a room's figures and charts, the
// rooms list) and posts the forms in place.

import { browserEnv, wsURL } from "./browser";
import { Charts } from "./admin_charts";
import { Strings, t } from "./admin_format";
import { controlForms, roomForm } from "./admin_forms";
import { Live, LiveStatus } from "./admin_live";
import { Series } from "./admin_series";
import { parseOverview, parseRoomMessage, Point, RoomView } from "./admin_types";
import { View } from "./admin_view";
import { localTimes } from "./admin_times";
import { confirmActions } from "./admin_confirm";

function json<T>(id: string, fallback: T): T {
  try {
    return JSON.parse(document.getElementById(id)?.textContent ?? "") as T;
  } catch {
    return fallback;
  }
}

const POLL_MS = 2000;
const SILENCE_MS = 30_000;

function startLive(path: string, strings: Strings, onMessage: (text: string) => void): Live {
  const indicator = document.querySelector<HTMLElement>('[data-testid="live-status"]');
  const live = new Live({
    path,
    wsURL: wsURL(path),
    env: browserEnv(),
    pollMs: POLL_MS,
    silenceMs: SILENCE_MS,
    message: onMessage,
    status: (s: LiveStatus) => {
      if (!indicator) return;
      indicator.dataset.mode = s;
      indicator.textContent = t(strings, `admin.conn.${s}`);
    },
    signedOut: () => location.assign(`/admin/login?next=${encodeURIComponent(location.pathname)}`),
  });
  live.start();
  // Back/forward cache restores a page with dead sockets: start over.
  window.addEventListener("pageshow", (ev) => {
    if (ev.persisted) location.reload();
  });
  return live;
}

function roomPage(root: HTMLElement, strings: Strings, lang: string, csrf: string): void {
  const view = new View(document, strings, lang);
  // A range of the sale's history is drawn as the page gave it; the live
  // figures above it stay live.
  const ranged = root.querySelector<HTMLElement>("[data-range]")?.dataset.range === "range";
  const series = new Series(json<Point[]>("admin-series", []), ranged ? Infinity : undefined);
  const initial = json<RoomView | null>("admin-live", null);
  if (initial && !ranged) series.add(initial.point);
  let charts: Charts | null = null;
  try {
    charts = new Charts(root, series, strings, lang);
  } catch (e) {
    console.error("dashboard: charts", e); // the figures still work
  }
  controlForms(root, csrf, strings, () => {});
  startLive(root.dataset.livePath ?? "", strings, (text) => {
    const m = parseRoomMessage(text);
    if (!m) return;
    if ("deleted" in m) {
      location.assign("/admin");
      return;
    }
    view.room(m);
    if (!ranged && series.add(m.point)) charts?.update();
  });
}

function roomsPage(root: HTMLElement, strings: Strings, lang: string): void {
  const view = new View(document, strings, lang);
  startLive(root.dataset.livePath ?? "/admin/live", strings, (text) => {
    const o = parseOverview(text);
    if (o) view.overview(o);
  });
}

function main(): void {
  const strings = json<Strings>("admin-strings", {});
  const lang = document.documentElement.lang || "en";
  const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? "";
  const room = document.querySelector<HTMLElement>("[data-admin-room]");
  if (room) roomPage(room, strings, lang, csrf);
  const rooms = document.querySelector<HTMLElement>("[data-admin-rooms]");
  if (rooms) roomsPage(rooms, strings, lang);
  localTimes(document, lang);
  confirmActions(document);
  for (const b of Array.from(document.querySelectorAll<HTMLElement>("[data-print]"))) {
    b.addEventListener("click", () => window.print());
  }
  const form = document.querySelector<HTMLFormElement>("form[data-room-form]");
  if (form && csrf) roomForm(form, csrf);
}

main();
