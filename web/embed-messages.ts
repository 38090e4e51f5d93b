// The messages between the embed (the waiting page in the shop's iframe) and
// the SDK in the shop's page. Pure, so both ends and the tests share them.
//
// frame → parent, always with the embedder's exact origin as targetOrigin:
//   waitroom:ready     the frame is listening; the SDK answers with init
//   waitroom:update    {...ticket JSON} on each update
//   waitroom:admitted  {token, orderable_at, redirect_url} once, on admission
//   waitroom:key       {key} an anonymous visitor's key, for the SDK to keep
//   waitroom:resize    {height} the content's height in CSS pixels
//   waitroom:error     {code, message} the frame could not enter
//   waitroom:left      the visitor left the line from the frame
// parent → frame, accepted only from the allowed embedder's origin:
//   waitroom:init      {user_token, key} who the visitor is, both optional

import { parseTicket, safeURL, Ticket } from "./ticket";
import { State } from "./vocab";

export interface Init {
  user_token: string | null;
  key: string | null;
}

export interface Admission {
  token: string;
  orderable_at: string;
  redirect_url: string;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

/** messageType is m.type for a waitroom message, else null. */
export function messageType(m: unknown): string | null {
  if (typeof m !== "object" || m === null) return null;
  const t = (m as { type?: unknown }).type;
  return typeof t === "string" && t.startsWith("waitroom:") ? t : null;
}

/** parseInit reads an init message; null for anything else. */
export function parseInit(m: unknown): Init | null {
  if (messageType(m) !== "waitroom:init") return null;
  const o = m as Record<string, unknown>;
  return { user_token: str(o.user_token), key: str(o.key) };
}

/**
 * absolute resolves the ticket's URLs against the waitroom's own URL: a
 * relative redirect_url means the waitroom's origin, not the shop's.
 */
export function absolute(t: Ticket, base: string): Ticket {
  return { ...t, redirect_url: safeURL(t.redirect_url, base), accept_url: safeURL(t.accept_url, base) };
}

export function updateMessage(t: Ticket): { type: "waitroom:update" } & Ticket {
  return { type: "waitroom:update", ...t };
}

/** admittedMessage is the admission, or null while the ticket lacks any part of it. */
export function admittedMessage(t: Ticket): ({ type: "waitroom:admitted" } & Admission) | null {
  if (t.state !== State.Admitted || !t.token || !t.orderable_at || !t.redirect_url) return null;
  return { type: "waitroom:admitted", token: t.token, orderable_at: t.orderable_at, redirect_url: t.redirect_url };
}

/** parseAdmission reads an admitted message; null for anything else. */
export function parseAdmission(m: unknown): Admission | null {
  if (messageType(m) !== "waitroom:admitted") return null;
  const o = m as Record<string, unknown>;
  const token = str(o.token);
  const at = str(o.orderable_at);
  const go = str(o.redirect_url);
  return token && at && go ? { token, orderable_at: at, redirect_url: go } : null;
}

/** parseUpdate reads an update message into the ticket it carries. */
export function parseUpdate(m: unknown): Ticket | null {
  if (messageType(m) !== "waitroom:update") return null;
  const { type: _type, ...rest } = m as Record<string, unknown>;
  return parseTicket(rest);
}
