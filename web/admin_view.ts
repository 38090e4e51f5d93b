// Puts live views into the page the server rendered, element by element, so
// what a viewer is typing or pointing at stays put.

import { fill, formatActive, formatCount, formatPerMin, formatRate, formatSeconds, stateText, Strings, t } from "./admin_format";
import { Health, Overview, RoomSummary, RoomView } from "./admin_types";

export class View {
  constructor(
    private readonly root: ParentNode,
    private readonly strings: Strings,
    private readonly lang: string,
  ) {}

  private el(id: string): HTMLElement | null {
    return this.root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
  }

  private text(id: string, s: string, value?: number | null): void {
    const e = this.el(id);
    if (!e) return;
    if (e.textContent !== s) e.textContent = s;
    if (value !== undefined) e.dataset.value = value === null ? "" : String(value);
  }

  room(v: RoomView): void {
    const { strings: s, lang } = this;
    const p = v.point;
    this.text("stat-waiting", formatCount(p.waiting, lang), p.waiting);
    const pre = this.el("stat-pre-queue");
    if (pre) {
      pre.hidden = !p.pre_queue;
      this.text("stat-pre-queue", fill(t(s, "admin.stat.pre_queue"), { n: formatCount(p.pre_queue ?? 0, lang) }));
    }
    this.text("stat-active", formatActive(p.active, v.capacity, lang));
    this.text("stat-admitted-rate", formatRate(p.admitted_per_s, s, lang), p.admitted_per_s);
    this.text("stat-entry-rate", formatRate(p.entries_per_s, s, lang), p.entries_per_s);
    this.text("stat-abandon-rate", formatRate(p.abandoned_per_s, s, lang), p.abandoned_per_s);
    this.text("stat-no-show-rate", formatPerMin(p.no_shows_per_min, s, lang), p.no_shows_per_min);
    this.text("stat-idle-rate", formatPerMin(p.idle_per_min, s, lang), p.idle_per_min);
    this.text("stat-tail-eta", formatSeconds(p.tail_eta_s, s, lang));
    this.text("stat-wait-p50", formatSeconds(v.wait_p50_s, s, lang));
    this.text("stat-wait-p95", formatSeconds(v.wait_p95_s, s, lang));
    this.text("stat-line", v.line_on === null ? t(s, "admin.na") : t(s, v.line_on ? "admin.line.on" : "admin.line.off"));
    this.text("stat-line-reason", v.line_reason_key ? fill(t(s, v.line_reason_key), v.line_reason_args ?? {}) : v.line_reason);
    // The signal's error is the reader's own text (shown as code), after the page's words.
    const signal = this.el("stat-line-signal");
    if (signal) signal.hidden = !v.line_signal_error;
    this.text("stat-line-signal-error", v.line_signal_error ?? "");
    this.text("stat-state", stateText(v.paused, v.closed, v.sold_out, v.scheduled, v.health.degraded, v.point.active, v.capacity, s));
    this.controls(v);
    this.health(v.health);
  }

  /** controls shows the settings in force; inputs being edited are left alone. */
  private controls(v: RoomView): void {
    const pause = this.el("control-pause");
    if (pause) {
      pause.dataset.paused = String(v.paused);
      const label = t(this.strings, v.paused ? "admin.control.resume" : "admin.control.pause");
      if (pause.textContent?.trim() !== label) pause.textContent = label;
    }
    const next = this.el("control-paused-value") as HTMLInputElement | null;
    if (next) next.value = String(!v.paused);
    const sold = this.el("control-sold-out");
    if (sold) {
      sold.setAttribute("aria-pressed", String(v.sold_out));
      sold.classList.toggle("danger", !v.sold_out);
      const label = t(this.strings, v.sold_out ? "admin.soldout.off" : "admin.soldout.on");
      if (sold.textContent?.trim() !== label) sold.textContent = label;
    }
    const soldNext = this.el("control-sold-out-value") as HTMLInputElement | null;
    if (soldNext) soldNext.value = String(!v.sold_out);
    const soldState = this.el("control-sold-out-state");
    if (soldState) soldState.hidden = !v.sold_out;
    const pace = this.root.querySelector<HTMLFormElement>('form[data-control="pace"]');
    if (pace && pace.dataset.dirty !== "true") {
      for (const [name, value] of [
        ["batch_size", v.batch_size],
        ["batch_interval_ms", v.batch_interval_ms],
        ["capacity", v.capacity],
      ] as const) {
        const input = pace.elements.namedItem(name) as HTMLInputElement | null;
        if (input && document.activeElement !== input) input.value = String(value);
      }
    }
    const act = this.root.querySelector<HTMLFormElement>('form[data-control="activation"]');
    if (act && act.dataset.dirty !== "true") {
      for (const r of Array.from(act.querySelectorAll<HTMLInputElement>('input[name="activation"]'))) {
        r.checked = r.value === v.activation;
      }
    }
  }

  health(h: Health): void {
    const { strings: s, lang } = this;
    const redis = t(s, h.redis_up ? "admin.redis.up" : "admin.redis.down");
    let degraded = t(s, "admin.na");
    if (h.degraded !== null) {
      degraded = t(s, h.degraded ? "admin.degraded.on" : "admin.degraded.off");
      if (h.forced !== null) degraded += " " + t(s, "admin.degraded.forced");
    }
    this.text("stat-redis", redis);
    this.text("stat-degraded", degraded);
    this.text("stat-degraded-reason", h.reason_key ? t(s, h.reason_key) : h.reason);
    const badgeRedis = document.querySelector<HTMLElement>('[data-testid="health-redis"]');
    if (badgeRedis) {
      badgeRedis.textContent = `${t(s, "admin.stat.redis")}: ${redis}`;
      badgeRedis.dataset.up = String(h.redis_up);
      badgeRedis.classList.toggle("bad", !h.redis_up);
    }
    const badgeDeg = document.querySelector<HTMLElement>('[data-testid="health-degraded"]');
    if (badgeDeg) {
      badgeDeg.textContent = `${t(s, "admin.stat.degraded")}: ${degraded}`;
      badgeDeg.classList.toggle("bad", h.degraded === true);
    }
    const o = h.outbox;
    this.text(
      "stat-outbox",
      o ? `${formatCount(o.pending, lang)} / ${formatCount(o.published, lang)} / ${formatCount(o.processed, lang)}` : t(s, "admin.na"),
    );
    this.text(
      "stat-results",
      o && o.minute_processed !== null && o.minute_rejected !== null
        ? fill(t(s, "admin.results"), {
            processed: formatCount(o.minute_processed, lang),
            rejected: formatCount(o.minute_rejected, lang),
          })
        : t(s, "admin.na"),
    );
    const mode = h.forced === true ? "on" : "auto"; // a drill forces degraded mode on; normal mode is never forced
    for (const b of Array.from(document.querySelectorAll<HTMLElement>('[data-testid^="control-degrade-"]'))) {
      const on = b.dataset.testid === `control-degrade-${mode}`;
      b.classList.toggle("current", on);
      b.setAttribute("aria-pressed", String(on));
    }
  }

  /** overview rewrites the rooms table's rows from the list. */
  overview(o: Overview): void {
    const table = this.el("rooms");
    const body = table?.querySelector("tbody");
    if (table && body) {
      const rows = o.rooms.map((r) => this.row(r, o.health.degraded));
      body.replaceChildren(...rows);
      table.hidden = o.rooms.length === 0;
    }
    const empty = this.el("rooms-empty");
    if (empty) empty.hidden = o.rooms.length > 0;
    const stale = this.el("rooms-stale");
    if (stale) stale.hidden = !o.stale;
    this.health(o.health);
  }

  private row(r: RoomSummary, degraded: boolean | null): HTMLTableRowElement {
    const { strings: s, lang } = this;
    const tr = document.createElement("tr");
    tr.dataset.testid = "room-row";
    tr.dataset.room = r.room;
    const th = document.createElement("th");
    th.scope = "row";
    const a = document.createElement("a");
    a.href = `/admin/rooms/${encodeURIComponent(r.room)}`;
    a.dataset.testid = "room-link";
    a.textContent = r.room;
    th.append(a);
    tr.append(th);
    const cells: [string, string, boolean][] = [
      ["title", r.titles?.[lang] ?? r.title, false],
      ["waiting", formatCount(r.waiting, lang), true], // vocab: not a state (a count)
      ["active", formatActive(r.active, r.capacity, lang), true],
      ["admitted_per_s", formatRate(r.admitted_per_s, s, lang), true],
      ["state", stateText(r.paused, r.closed, r.sold_out, r.scheduled, degraded, r.active, r.capacity, s), false],
    ];
    for (const [field, text, num] of cells) {
      const td = document.createElement("td");
      if (field !== "title") td.dataset.field = field;
      if (num) td.className = "num";
      td.textContent = text;
      tr.append(td);
    }
    return tr;
  }
}
