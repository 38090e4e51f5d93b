// The ticket JSON the API returns and every push message carries.

import { Display, State } from "./vocab";

export { Display, State };

/** The states this page takes a ticket in (ordered is the accept page's). */
const STATES: readonly State[] = [
  State.Waiting,
  State.Scheduled,
  State.Admitted,
  State.Expired,
  State.Closed,
  State.Bypassed,
  State.SoldOut,
  State.Full,
];

const DISPLAYS: readonly string[] = Object.values(Display);

export interface Ticket {
  room: string;
  ticket: string;
  state: State;
  /** What the page shows (vocab.DisplayOf on the server): the state, the draw or maintenance. */
  display: Display;
  position: number;
  waiting: number;
  /** Seconds; null (or negative on the wire) when the server has no estimate yet. */
  eta_s: number | null;
  /** The range the wait most likely falls in; null with eta_s, or when the server sends none. */
  eta_low_s: number | null;
  eta_high_s: number | null;
  next_update_ms: number;
  token: string | null;
  orderable_at: string | null;
  redirect_url: string | null;
  /** Only for bypassed tickets, when the server sends it. */
  accept_url: string | null;
  paused: boolean;
  /** The place at entry; 0 when the server sends none. */
  entry_position: number;
  /** When the ticket joined the line (RFC 3339); null when unknown. */
  entered_at: string | null;
  /** fifo, random (no places: "in the draw"), passthrough or reject. */
  queueing_method: string;
  /** Why a ticket is closed (ended, maintenance) or expired; "" when none. */
  reason: string;
  /** The room's message, when sold out. */
  sold_out_message: string;
  /** When full: seconds until trying again; 0 otherwise. */
  retry_after_s: number;
  /** The room's scheduled opening (RFC 3339); null or absent without one. */
  opens_at?: string | null;
}

/**
 * Terminal states end the connection: nothing more will change. A sold out
 * or closed (maintenance) ticket keeps its place until the operator undoes
 * it, so its page stays connected.
 */
export function isTerminal(state: State): boolean {
  return state !== State.Waiting && state !== State.Scheduled && state !== State.SoldOut && state !== State.Closed;
}

function num(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

/**
 * localText is a room's text in the page's language: the API sends a string
 * (every language) or an object by language; else English, else any.
 */
function localText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || typeof v !== "object") return "";
  const byLang = v as Record<string, unknown>;
  const lang = typeof document === "undefined" ? "en" : document.documentElement.lang || "en";
  for (const k of [lang, "en", ...Object.keys(byLang)]) {
    if (typeof byLang[k] === "string") return byLang[k] as string;
  }
  return "";
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

/**
 * parseTicket checks a decoded message and fills gaps with safe defaults.
 * It returns null for anything that is not a ticket, so a garbled message
 * never counts as a sign that the connection works.
 */
export function parseTicket(raw: unknown): Ticket | null {
  if (typeof raw !== "object" || raw === null) return null;
  const o = raw as Record<string, unknown>;
  const state = o.state;
  if (typeof state !== "string" || !STATES.includes(state as State)) return null;
  if (typeof o.ticket !== "string") return null;
  const eta = num(o.eta_s, -1);
  const low = num(o.eta_low_s, -1);
  const high = num(o.eta_high_s, -1);
  const ranged = eta >= 0 && low >= 0 && high >= 0;
  return {
    room: typeof o.room === "string" ? o.room : "",
    ticket: o.ticket,
    state: state as State,
    // A server from before display shows the state's own block.
    display: typeof o.display === "string" && DISPLAYS.includes(o.display) ? (o.display as Display) : (state as Display),
    position: Math.max(0, Math.trunc(num(o.position, 0))),
    waiting: Math.max(0, Math.trunc(num(o.waiting, 0))),
    eta_s: eta < 0 ? null : eta,
    eta_low_s: ranged ? low : null,
    eta_high_s: ranged ? high : null,
    next_update_ms: num(o.next_update_ms, 0),
    token: str(o.token),
    orderable_at: str(o.orderable_at),
    redirect_url: str(o.redirect_url),
    accept_url: str(o.accept_url),
    paused: o.paused === true,
    entry_position: Math.max(0, Math.trunc(num(o.entry_position, 0))),
    entered_at: str(o.entered_at),
    queueing_method: str(o.queueing_method) ?? "fifo",
    reason: str(o.reason) ?? "",
    sold_out_message: localText(o.sold_out_message),
    retry_after_s: Math.max(0, Math.trunc(num(o.retry_after_s, 0))),
    opens_at: str(o.opens_at),
  };
}

/** parseTicketText parses a message body; null when it is not ticket JSON. */
export function parseTicketText(text: string): Ticket | null {
  try {
    return parseTicket(JSON.parse(text));
  } catch {
    return null;
  }
}

/**
 * safeURL accepts only http(s) URLs (absolute or relative to base), so a
 * bad redirect_url can never run script through location.assign.
 */
export function safeURL(url: string | null, base: string): string | null {
  if (!url) return null;
  try {
    const u = new URL(url, base);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}
