// Admin dashboard client. The server renders complete pages that work
// without script; this keeps them live (a room's figures and charts, the
// rooms list) and posts the forms in place.

import { browserEnv, wsURL } from "./browser";
import { Charts, clockFormat } from "./admin_charts";
import { fill, Strings, t } from "./admin_format";
import { controlForms, roomForm } from "./admin_forms";
import { Live, LiveStatus } from "./admin_live";
import { Series } from "./admin_series";
import { parseOverview, parseRoomMessage, Point, RoomView } from "./admin_types";
import { View } from "./admin_view";
import { localEchoes, localTimes, utcText } from "./admin_times";
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

/**
 * Indicator is the page's connection line: how figures arrive ("Live"), or,
 * while this server cannot read Redis, the outage and the time of the last
 * figures read, so stale figures never sit under a green "Live".
 */
class Indicator {
  private mode: LiveStatus | "static" = "static";
  private down = false;
  private lastGood = Date.now();

  constructor(
    private readonly el: HTMLElement | null,
    private readonly strings: Strings,
    private readonly lang: string,
  ) {}

  status(s: LiveStatus): void {
    this.mode = s;
    this.render();
  }

  health(redisUp: boolean): void {
    if (redisUp) this.lastGood = Date.now();
    this.down = !redisUp;
    this.render();
  }

  private render(): void {
    if (!this.el) return;
    if (this.down) {
      this.el.dataset.mode = "outage";
      this.el.textContent = fill(t(this.strings, "admin.conn.outage"), { time: clockFormat(this.lang, false)(this.lastGood / 1000) });
      this.el.title = utcText(this.lastGood); // the operator's zone above, UTC on hover
      return;
    }
    this.el.removeAttribute("title");
    this.el.dataset.mode = this.mode;
    this.el.textContent = this.mode === "static" ? "" : t(this.strings, `admin.conn.${this.mode}`);
  }
}

function startLive(path: string, indicator: Indicator, onMessage: (text: string) => void): Live {
  const live = new Live({
    path,
    wsURL: wsURL(path),
    env: browserEnv(),
    pollMs: POLL_MS,
    silenceMs: SILENCE_MS,
    message: onMessage,
    status: (s: LiveStatus) => indicator.status(s),
    signedOut: () => location.assign(`/admin/login?next=${encodeURIComponent(location.pathname)}`),
  });
  live.start();
  // Back/forward cache restores a page with dead sockets: start over.
  window.addEventListener("pageshow", (ev) => {
    if (ev.persisted) location.reload();
  });
  return live;
}

function indicator(strings: Strings, lang: string): Indicator {
  return new Indicator(document.querySelector<HTMLElement>('[data-testid="live-status"]'), strings, lang);
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
  const ind = indicator(strings, lang);
  startLive(root.dataset.livePath ?? "", ind, (text) => {
    const m = parseRoomMessage(text);
    if (!m) return;
    if ("deleted" in m) {
      location.assign("/admin");
      return;
    }
    view.room(m);
    ind.health(m.health.redis_up);
    if (!ranged && series.add(m.point)) charts?.update();
  });
}

function roomsPage(root: HTMLElement, strings: Strings, lang: string): void {
  const view = new View(document, strings, lang);
  const ind = indicator(strings, lang);
  startLive(root.dataset.livePath ?? "/admin/live", ind, (text) => {
    const o = parseOverview(text);
    if (!o) return;
    view.overview(o);
    ind.health(o.health.redis_up);
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
  localEchoes(document, lang, t(strings, "admin.field.local_time"));
  confirmActions(document);
  for (const b of Array.from(document.querySelectorAll<HTMLElement>("[data-print]"))) {
    b.addEventListener("click", () => window.print());
  }
  const form = document.querySelector<HTMLFormElement>("form[data-room-form]");
  if (form && csrf) roomForm(form, csrf);
}

main();
