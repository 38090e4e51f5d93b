// Ticket message to what the page shows: pure, so it is tested without a DOM.

import { etaRangeWords } from "./format";
import { formatNumber, plural, Strings, t } from "./strings";
import { State, Ticket } from "./ticket";

export interface WaitingView {
  state: State;
  position: string;
  ahead: string;
  waiting: string;
  eta: string;
  /** 0..100: how far from the place at entry to the front of the line. */
  progress: number;
  paused: boolean;
}

/**
 * entryPositionFor keeps the place at entry: the largest place seen, so a
 * lost or missing record starts the bar at the current place, never past it.
 */
export function entryPositionFor(stored: number, fromPage: number, position: number): number {
  return Math.max(stored || 0, fromPage || 0, position || 0);
}

/**
 * progressPercent is how far this visitor has come since entry, with being
 * next in line counted as the last step before the door: of the entry+1
 * steps, the share taken, rounded down. So the one who is first from the
 * start sees the bar half full, not empty beside "No one is ahead of you",
 * and a place far back starts near empty. Never 100 while waiting (even at
 * #1, or paused): only admission fills it.
 * The same as templates.progressPercent in Go.
 */
export function progressPercent(entryPosition: number, position: number): number {
  if (position <= 0) return 100;
  const entry = Math.max(entryPosition, position);
  return Math.min(Math.floor((100 * (entry - position + 1)) / (entry + 1)), 99);
}

export function toView(tk: Ticket, entryPosition: number, strings: Strings, lang: string): WaitingView {
  const ahead = Math.max(0, tk.position - 1);
  return {
    state: tk.state,
    position: formatNumber(tk.position, lang),
    ahead: plural(strings, "waiting.ahead", ahead, lang),
    waiting: plural(strings, "waiting.total", tk.waiting, lang),
    // No estimate while paused: nobody moves, so any figure would be a guess.
    eta: tk.paused ? t(strings, "eta.paused") : etaRangeWords(tk.eta_low_s, tk.eta_s, tk.eta_high_s, strings, lang),
    progress: progressPercent(entryPosition, tk.position),
    paused: tk.paused,
  };
}
