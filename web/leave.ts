// "Leave the line": a button that asks first, then gives the place up
// through the API (DELETE on the ticket) and shows the "you left" block.

import { Page } from "./page";
import { Strings, t } from "./strings";

/** leaveRequest gives the ticket up; true when the server has let it go. */
export async function leaveRequest(ticketURL: string, headers: Record<string, string> = {}): Promise<boolean> {
  try {
    const res = await fetch(ticketURL, {
      method: "DELETE",
      credentials: "same-origin",
      cache: "no-store",
      headers: { Accept: "application/json", ...headers },
    });
    // 404: already gone (expired, or left in another tab); the place is not held either way.
    return res.ok || res.status === 404;
  } catch {
    return false;
  }
}

/** The ticket to give up, and the headers that name its visitor (the embed's key). */
export interface LeaveTarget {
  url: string;
  headers?: Record<string, string>;
}

/**
 * leaveControls wires the leave button of the waiting block; done runs once
 * the place is given up. The controls need script, so they start hidden.
 * target is the ticket, or a function giving the current one (the embed
 * enters again in the same page); null: nothing to leave.
 */
export function leaveControls(
  page: Page,
  target: string | (() => LeaveTarget | null),
  strings: Strings,
  done: () => void,
): void {
  const box = page.el("leave-box");
  const button = page.el<HTMLButtonElement>("leave");
  const confirm = page.el("leave-confirm");
  const yes = page.el<HTMLButtonElement>("leave-yes");
  const no = page.el<HTMLButtonElement>("leave-no");
  const failed = page.el("leave-failed");
  if (!box || !button || !confirm || !yes || !no) return;
  box.hidden = false;
  const ask = (open: boolean) => {
    confirm.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    (open ? yes : button).focus();
  };
  button.addEventListener("click", () => ask(confirm.hidden === true));
  no.addEventListener("click", () => ask(false));
  let busy = false;
  yes.addEventListener("click", () => {
    const to = typeof target === "string" ? { url: target } : target();
    if (busy || !to) return;
    busy = yes.disabled = true;
    void leaveRequest(to.url, to.headers).then((ok) => {
      busy = yes.disabled = false;
      if (ok) {
        // Closed again, for a page that can take a place again.
        confirm.hidden = true;
        button.setAttribute("aria-expanded", "false");
        if (failed) failed.hidden = true;
        done();
        return;
      }
      if (failed) {
        failed.textContent = t(strings, "leave.failed");
        failed.hidden = false;
      }
    });
  });
}
