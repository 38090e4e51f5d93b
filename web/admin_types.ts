// The dashboard's live JSON, as templates/admin_props.go writes it.

export interface Outbox {
  pending: number;
  published: number;
  processed: number;
  rejected: number;
  minute_processed: number | null;
  minute_rejected: number | null;
  minute_span_s: number;
}

export interface Health {
  redis_up: boolean;
  degraded: boolean | null; // null: this server has no degraded mode
  forced: true | null; // true during a drill; null automatic
  reason: string; // English; reason_key names the catalogue's words
  reason_key: string;
  outbox: Outbox | null;
}

export interface Point {
  t: number; // Unix ms
  waiting: number; // the pre-queue included
  pre_queue?: number;
  active: number;
  capacity: number;
  admitted_per_s: number | null;
  entries_per_s: number | null;
  abandoned_per_s: number | null;
  no_shows_per_min: number | null;
  idle_per_min: number | null;
  tail_eta_s: number | null;
}

export interface RoomView {
  room: string;
  title: string;
  titles?: Record<string, string>; // by language, when the room has a title per language
  paused: boolean;
  closed: boolean;
  sold_out: boolean;
  scheduled: boolean;
  capacity: number;
  batch_size: number;
  batch_interval_ms: number;
  configured_rate: number;
  activation: string;
  line_on: boolean | null;
  line_reason_key: string;
  line_reason_args?: Record<string, string>;
  line_reason: string;
  line_signal_error?: string;
  wait_p50_s: number | null;
  wait_p95_s: number | null;
  point: Point;
  health: Health;
}

export interface RoomSummary {
  room: string;
  title: string;
  titles?: Record<string, string>; // by language, when the room has a title per language
  paused: boolean;
  closed: boolean;
  sold_out: boolean;
  scheduled: boolean;
  activation: string;
  waiting: number;
  active: number;
  capacity: number;
  admitted_per_s: number | null;
}

export interface Overview {
  rooms: RoomSummary[];
  stale: boolean;
  health: Health;
}

/** What a room's stream says once the room is gone. */
export interface Deleted {
  room: string;
  deleted: true;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** parseRoomMessage reads one message of a room's stream; null when garbled. */
export function parseRoomMessage(text: string): RoomView | Deleted | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(v) || typeof v.room !== "string") return null;
  if (v.deleted === true) return { room: v.room, deleted: true };
  if (!isObject(v.point) || typeof v.point.t !== "number" || !isObject(v.health)) return null;
  return v as unknown as RoomView;
}

/** parseOverview reads one message of the rooms list's stream; null when garbled. */
export function parseOverview(text: string): Overview | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(v) || !Array.isArray(v.rooms) || !isObject(v.health)) return null;
  return v as unknown as Overview;
}
