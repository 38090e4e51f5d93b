// DOM updates for the waiting page. Elements are found by data-testid, the
// same hooks the Go tests use, so markup and client cannot drift apart quietly.

import { countdownText, formatClock, formatHourMinute, formatMoment, openingText } from "./format";
import { Key, Strings, t } from "./strings";
import { Ticket } from "./ticket";
import { Display, Reason } from "./vocab";
import { ConnStatus } from "./transport";
import { WaitingView } from "./view";

/**
 * A block of the page is a display state (vocab.Display): the ticket's
 * display field says which, as the server's vocab.DisplayOf picks it; "left"
 * is the page's own (the visitor gave up the place here).
 */
export type Block = Display;

/** The blocks showState switches between (the checking step's is its own). */
const BLOCKS: readonly Block[] = [
  Display.Scheduled,
  Display.Waiting,
  Display.Admitted,
  Display.Expired,
  Display.Closed,
  Display.Bypassed,
  Display.Left,
  Display.Draw,
  Display.SoldOut,
  Display.Full,
  Display.Maintenance,
];

export class Page {
  constructor(
    readonly root: HTMLElement,
    private readonly strings: Strings,
    private readonly lang: string,
  ) {}

  el<T extends HTMLElement = HTMLElement>(testid: string): T | null {
    return this.root.querySelector<T>(`[data-testid="${testid}"]`);
  }

  /** setText writes only on change, so live regions speak only when something changed. */
  setText(testid: string, text: string): void {
    const e = this.el(testid);
    if (e && e.textContent !== text) e.textContent = text;
  }

  /** showState shows the block for state and moves focus to it when it changes. */
  showState(state: Block): void {
    // The live status and leaving go with a place in line: the waiting block or the draw.
    const footer = this.el("live-status");
    if (footer) footer.hidden = state !== Display.Waiting && state !== Display.Draw;
    for (const s of BLOCKS) {
      const block = this.el(s);
      if (!block) continue;
      const show = s === state;
      if (block.hidden === !show) continue;
      block.hidden = !show;
      if (show && s !== Display.Waiting) {
        // A new heading is the quickest way to tell a screen reader what happened.
        const h = block.querySelector<HTMLElement>("h2");
        if (h) {
          h.tabIndex = -1;
          h.focus();
        }
      }
    }
  }

  /** renderExpired words the expired block for why the ticket ended (templates.expiredKey). */
  renderExpired(reason: string): void {
    const lapsed = reason === Reason.NoShow || reason === Reason.Idle;
    this.setText("expired-heading", t(this.strings, lapsed ? (`expired.${reason}.heading` as Key) : "expired.heading"));
    this.setText("expired-body", t(this.strings, lapsed ? (`expired.${reason}.body` as Key) : "expired.body"));
  }

  renderWaiting(v: WaitingView, updatedAt: Date): void {
    this.setText("position", v.position);
    this.setText("ahead", v.ahead);
    this.setText("waiting-total", v.waiting);
    this.setText("eta", v.eta);
    const bar = this.el<HTMLProgressElement>("progress");
    if (bar && bar.value !== v.progress) {
      bar.value = v.progress;
      bar.textContent = `${v.progress}%`;
    }
    const paused = this.el("paused-notice");
    if (paused) paused.hidden = !v.paused;
    const when = this.el("last-update");
    if (when) {
      when.textContent = formatClock(updatedAt, this.lang);
      when.setAttribute("datetime", updatedAt.toISOString());
    }
  }

  /** renderMethod fills the blocks of a random line and a sold out sale. */
  renderMethod(tk: Ticket, waiting: string): void {
    this.setText("draw-waiting", waiting);
    const paused = this.el("draw-paused");
    if (paused) paused.hidden = !tk.paused;
    const msg = this.el("sold-out-message");
    if (msg) {
      if (msg.textContent !== tk.sold_out_message) msg.textContent = tk.sold_out_message;
      msg.hidden = tk.sold_out_message === "";
      const thanks = this.el("sold-out-thanks");
      if (thanks) thanks.hidden = !msg.hidden; // the operator's message thanks on its own
    }
  }

  setStatus(s: ConnStatus): void {
    const conn = this.el("connection");
    if (!conn || conn.dataset.mode === s) return;
    conn.dataset.mode = s;
    const text = conn.querySelector("[data-conn-text]") ?? conn;
    text.textContent = t(this.strings, `conn.${s}`);
    // Lost: say so out loud, and mark the numbers as the last known ones
    // until a message comes through again.
    const lost = s === "reconnecting";
    for (const id of ["reconnecting", "draw-reconnecting", "stale-tag"]) {
      const el = this.el(id);
      if (el) el.hidden = !lost;
    }
    for (const id of [Display.Waiting, Display.Draw]) this.el(id)?.toggleAttribute("data-stale", lost);
  }

  /** setEnteredAt shows the time of entry in the visitor's own time zone. */
  setEnteredAt(iso: string | null): void {
    const at = iso ? new Date(iso) : null;
    const el = this.el("entered-at");
    if (!el || !at || Number.isNaN(at.getTime())) return;
    const text = formatHourMinute(at, this.lang);
    if (el.textContent !== text) el.textContent = text;
  }

  setCountdown(seconds: number): void {
    this.setText("countdown", countdownText(seconds, this.strings, this.lang));
  }

  /** setOpening writes the pre-queue's countdown and, in local time, when places are drawn. */
  setOpening(seconds: number, opensAt: Date): void {
    this.setText("opens-countdown", openingText(seconds, this.strings));
    const body = this.strings["scheduled.body"];
    if (body) this.setText("scheduled-body", body.replace("{time}", formatMoment(opensAt, new Date(), this.lang)));
  }

  /**
   * showGo points the "continue" button at href and reveals it, once the
   * turn has started: before, a click would only meet "too early".
   */
  showGo(href: string): void {
    const a = this.el<HTMLAnchorElement>("go-link");
    if (a) a.href = href;
    const box = this.el("go");
    if (box && box.hidden) {
      box.hidden = false;
      a?.focus();
    }
  }

  /** hideGo hides the button while the countdown runs. */
  hideGo(): void {
    const box = this.el("go");
    if (box) box.hidden = true;
  }

  /** setTurnTitle leads the tab's title with "It's your turn". */
  setTurnTitle(): void {
    const base = this.root.dataset.title ?? document.title;
    const title = `${t(this.strings, "admitted.heading")} – ${base}`;
    if (document.title !== title) document.title = title;
  }

  /** setTitle leads with the place in line, so it shows in a background tab. */
  setTitle(position: string | null): void {
    const base = this.root.dataset.title ?? document.title;
    const title = position ? `(${position}) ${base}` : base;
    if (document.title !== title) document.title = title;
  }
}
