// A newcomer turned away by a frozen room (sold out, or closed for
// maintenance) has no ticket, so nothing is pushed to it. The page asks to
// enter again at the ticket's pace, as the page without script reloads, and
// once the room takes it in follows the new ticket in place.

import { backoffDelay, DEFAULT_BACKOFF } from "./backoff";
import { parseTicketText, Ticket } from "./ticket";
import { Reason, State } from "./vocab";

/** Never ask more often than this, whatever the room's tiers say: a sold out crowd is large. */
export const REOPEN_FLOOR_MS = 2_000;

/** frozenNewcomer: a ticket with no place that a room's undo can turn into one. */
export function frozenNewcomer(t: Ticket): boolean {
  return !t.ticket && (t.state === State.SoldOut || (t.state === State.Closed && t.reason === Reason.Maintenance));
}

export interface ReopenHooks {
  /** still: the room is still frozen (its message may have changed). */
  still(t: Ticket): void;
  /** placed: the room took the visitor in: a ticket to follow. */
  placed(t: Ticket): void;
  /** other: anything else (a check first, a full line, an end): the server's page says it. */
  other(): void;
}

/**
 * reopen asks POST enterURL after first.next_update_ms (at least
 * REOPEN_FLOOR_MS) until the room answers something other than frozen.
 * Failures and 429 or 5xx answers back off; the returned function stops it.
 */
export function reopen(enterURL: string, first: Ticket, hooks: ReopenHooks): () => void {
  let timer: number | undefined;
  let stopped = false;
  let failures = 0;
  const later = (ms: number) => {
    if (!stopped) timer = window.setTimeout(ask, ms);
  };
  const pace = (t: Ticket) => Math.max(REOPEN_FLOOR_MS, t.next_update_ms);
  const retry = (retryAfterS = 0) => later(Math.max(retryAfterS * 1000, REOPEN_FLOOR_MS + backoffDelay(++failures, DEFAULT_BACKOFF)));
  const ask = async () => {
    if (stopped) return;
    let res: Response;
    let text: string;
    try {
      res = await fetch(enterURL, {
        method: "POST",
        credentials: "same-origin",
        cache: "no-store",
        headers: { Accept: "application/json", "Content-Type": "application/json" },
        body: "{}",
      });
      text = await res.text();
    } catch {
      retry();
      return;
    }
    if (stopped) return;
    if (res.status === 429 || res.status >= 500) {
      retry(Number(res.headers.get("Retry-After")) || 0);
      return;
    }
    const t = res.ok ? parseTicketText(text) : null;
    if (!t) {
      hooks.other(); // a refusal (proof of work first, …): the server's page explains
      return;
    }
    failures = 0;
    if (frozenNewcomer(t)) {
      hooks.still(t);
      later(pace(t));
    } else if (t.ticket) {
      hooks.placed(t);
    } else {
      hooks.other();
    }
  };
  later(pace(first));
  return () => {
    stopped = true;
    window.clearTimeout(timer);
  };
}
