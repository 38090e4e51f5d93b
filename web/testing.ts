// Shared test data: English client strings shaped like the Go catalogue's.

import { Strings } from "./strings";
import { Ticket } from "./ticket";
import { Display, State } from "./vocab";

export const EN: Strings = {
  "waiting.ahead.zero": "No one is ahead of you",
  "waiting.ahead.one": "1 person ahead of you",
  "waiting.ahead.other": "{n} people ahead of you",
  "waiting.total.one": "1 person",
  "waiting.total.other": "{n} people",
  "eta.unknown": "Working it out…",
  "eta.paused": "None while admission is paused",
  "eta.under_minute": "less than a minute",
  "eta.minutes.one": "about 1 minute",
  "eta.minutes.other": "about {n} minutes",
  "eta.hours.one": "about 1 hour",
  "eta.hours.other": "about {n} hours",
  "eta.range_minutes": "about {lo}–{hi} minutes",
  "eta.range_hours": "about {lo}–{hi} hours",
  "conn.connecting": "Connecting…",
  "conn.ws": "Live",
  "conn.sse": "Live (event stream)",
  "conn.poll": "Checking regularly",
  "conn.reconnecting": "Reconnecting…",
  "admitted.countdown.one": "Taking you there in 1 second…",
  "admitted.countdown.other": "Taking you there in {n} seconds…",
  "admitted.now": "Taking you there now…",
  "scheduled.countdown": "Opens in {t}",
  "scheduled.drawing": "Drawing places…",
};

export const KO: Strings = {
  "waiting.ahead.zero": "내 앞에 아무도 없습니다",
  "waiting.ahead.other": "내 앞에 {n}명",
  "eta.under_minute": "1분 미만",
  "eta.minutes.other": "약 {n}분",
  "eta.hours.other": "약 {n}시간",
  "eta.range_minutes": "약 {lo}–{hi}분",
  "eta.range_hours": "약 {lo}–{hi}시간",
  "scheduled.countdown": "오픈까지 {t}",
};

export function ticket(over: Partial<Ticket> = {}): Ticket {
  return {
    room: "drop",
    ticket: "t1",
    state: State.Waiting,
    display: Display.Waiting,
    position: 10,
    waiting: 100,
    eta_s: 180,
    eta_low_s: null,
    eta_high_s: null,
    next_update_ms: 2000,
    token: null,
    orderable_at: null,
    redirect_url: null,
    accept_url: null,
    paused: false,
    entry_position: 0,
    opens_at: null,
    entered_at: null,
    queueing_method: "fifo",
    reason: "",
    sold_out_message: "",
    retry_after_s: 0,
    ...over,
  };
}
