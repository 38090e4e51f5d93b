// "Tell me when it's my turn": on a long wait the waiting page offers a
// toggle that asks for the browser's Notification permission; on admission
// an opted-in page shows a notification. Nothing in the page stops or
// slows down in a background tab: the transport's pushes (WebSocket or
// event stream) arrive as events, which background throttling does not
// delay; only its timers are (the watchdog, the polling fallback's next
// poll, at worst to one a minute), so the notification comes when the turn
// does, or with polling within a minute. A tab the browser froze catches
// up on "resume" (web/waiting.ts).

import { Page } from "./page";
import { Strings, t } from "./strings";
import { Ticket } from "./ticket";
import { Method, State } from "./vocab";

/** A wait this long (the estimate's upper end, in seconds) is worth a notification. */
export const LONG_WAIT_S = 120;
/** Without an estimate yet, this far back is a long wait. */
export const LONG_WAIT_PLACE = 10;

/**
 * longWait: the offer is made in a draw (random: nobody knows when), while
 * admission is paused, when the wait most likely runs 2 minutes or more,
 * or, with no estimate yet, from place 10 on.
 */
export function longWait(tk: Ticket): boolean {
  if (tk.state !== State.Waiting) return false;
  if (tk.paused || tk.queueing_method === Method.Random) return true;
  const eta = Math.max(tk.eta_s ?? -1, tk.eta_high_s ?? -1);
  if (eta < 0) return tk.position >= LONG_WAIT_PLACE;
  return eta >= LONG_WAIT_S;
}

/** The part of the browser's Notification this needs. */
export interface NotificationAPI {
  readonly permission: NotificationPermission;
  requestPermission(): Promise<NotificationPermission> | undefined;
  new (title: string, options?: NotificationOptions): { onclick: ((this: unknown, ev: Event) => unknown) | null; close(): void };
}

export interface NotifyEnv {
  /** Absent when the browser has no Notification API (then nothing is offered). */
  api?: NotificationAPI;
  store: Storage | null;
  focus(): void;
}

export function browserNotifyEnv(store: Storage | null): NotifyEnv {
  const api = typeof window.Notification === "function" ? (window.Notification as unknown as NotificationAPI) : undefined;
  return { api, store, focus: () => window.focus() };
}

/**
 * NotifyOption is the toggle in the waiting block (notify-box: the button
 * "notify", aria-pressed, and the status line "notify-status", a polite
 * live region). The choice is kept for the ticket in sessionStorage, so a
 * reload keeps it.
 */
export class NotifyOption {
  private on = false;
  private offered = false;
  private readonly key: string;

  constructor(
    private readonly page: Pick<Page, "el" | "setText">,
    private readonly strings: Strings,
    private readonly lang: string,
    room: string,
    ticket: string,
    private readonly env: NotifyEnv,
  ) {
    this.key = `waitroom:notify:${room}:${ticket}`;
    const button = page.el<HTMLButtonElement>("notify");
    if (!env.api || !button) return;
    button.addEventListener("click", () => void this.toggle());
    let kept = false;
    try {
      kept = env.store?.getItem(this.key) === "1";
    } catch {
      // storage off: the choice is for this page only
    }
    if (kept && env.api.permission === "granted") {
      this.reveal();
      this.set(true, false);
    }
  }

  get enabled(): boolean {
    return this.on;
  }

  /** offer shows the toggle once the wait is long; it then stays. */
  offer(tk: Ticket): void {
    if (!this.offered && this.env.api && longWait(tk)) this.reveal();
  }

  private reveal(): void {
    const box = this.page.el("notify-box");
    if (!box) return;
    this.offered = true;
    box.hidden = false;
  }

  private async toggle(): Promise<void> {
    const api = this.env.api;
    if (!api) return;
    if (this.on) {
      this.set(false, true);
      return;
    }
    let p = api.permission;
    if (p === "default") {
      try {
        p = (await api.requestPermission()) ?? api.permission;
      } catch {
        p = api.permission;
      }
    }
    if (p === "granted") {
      this.set(true, true);
    } else {
      this.say(t(this.strings, "notify.blocked"));
    }
  }

  private set(on: boolean, announce: boolean): void {
    this.on = on;
    this.page.el("notify")?.setAttribute("aria-pressed", String(on));
    try {
      if (on) this.env.store?.setItem(this.key, "1");
      else this.env.store?.removeItem(this.key);
    } catch {
      // storage off: kept for this page only
    }
    if (announce || on) this.say(t(this.strings, on ? "notify.on" : "notify.off"));
  }

  private say(text: string): void {
    this.page.setText("notify-status", text);
  }

  /**
   * admitted shows the notification when the visitor asked for it and the
   * permission still stands; true when one was shown.
   */
  admitted(title: string): boolean {
    const api = this.env.api;
    if (!this.on || !api || api.permission !== "granted") return false;
    const heading = t(this.strings, "admitted.heading");
    try {
      const n = new api(heading, {
        body: t(this.strings, "notify.body").replace("{title}", title),
        lang: this.lang,
        tag: this.key, // one per ticket, even from two tabs
      });
      n.onclick = () => {
        this.env.focus();
        n.close();
      };
      return true;
    } catch {
      return false; // e.g. Chrome on Android only shows them from a service worker; the title still says it
    }
  }
}
