// The real browser behind transport.Env.

import { Channel, ChannelHandlers, Env } from "./transport";

const GET_TIMEOUT_MS = 10_000;
const GOING_AWAY = 1001;

function openWS(url: string, h: ChannelHandlers): Channel {
  const ws = new WebSocket(url);
  let done = false;
  const end = (goingAway: boolean) => {
    if (done) return;
    done = true;
    h.closed(goingAway);
  };
  ws.onopen = () => h.open();
  ws.onmessage = (ev: MessageEvent) => {
    if (typeof ev.data === "string") h.message(ev.data);
  };
  // error is always followed by close; close carries the code we need.
  ws.onclose = (ev: CloseEvent) => end(ev.code === GOING_AWAY);
  return {
    close() {
      done = true;
      ws.onopen = ws.onmessage = ws.onclose = null;
      try {
        ws.close(1000);
      } catch {
        // already closing
      }
    },
  };
}

function openSSE(url: string, h: ChannelHandlers): Channel {
  const es = new EventSource(url, { withCredentials: true });
  es.onopen = () => h.open();
  es.onmessage = (ev: MessageEvent) => h.message(String(ev.data));
  // EventSource would retry on its own; we close it so the ladder decides
  // when and how to try again.
  es.onerror = () => {
    es.onerror = es.onmessage = es.onopen = null;
    es.close();
    h.closed(false);
  };
  return {
    close() {
      es.onerror = es.onmessage = es.onopen = null;
      es.close();
    },
  };
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), GET_TIMEOUT_MS);
  try {
    const res = await fetch(url, {
      credentials: "same-origin",
      cache: "no-store",
      headers: { Accept: "application/json" },
      signal: ctrl.signal,
    });
    return { status: res.status, text: await res.text() };
  } finally {
    clearTimeout(timer);
  }
}

export function browserEnv(): Env {
  return {
    openWS: typeof WebSocket === "function" ? openWS : undefined,
    openSSE: typeof EventSource === "function" ? openSSE : undefined,
    get,
    setTimeout: (fn, ms) => window.setTimeout(fn, ms),
    clearTimeout: (id) => window.clearTimeout(id as number),
    random: Math.random,
  };
}

/** wsURL turns a same-origin path into a ws: or wss: URL. */
export function wsURL(path: string): string {
  const u = new URL(path, location.href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u.href;
}
