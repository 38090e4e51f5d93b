// The embed's transport.Env: the page's, plus the visitor's key. Fetches
// carry it in a header. WebSocket and EventSource cannot send headers, so
// the key goes into their URLs only when the frame's cookies do not stick
// (the server's partitioned cookie carries it otherwise): a URL may end up
// in a proxy's log, a header rarely does.

import { Env } from "./transport";

export const KEY_HEADER = "X-Waitroom-Key";
const GET_TIMEOUT_MS = 10_000;

/** withKey adds key=<key> to url. */
export function withKey(url: string, key: string): string {
  return `${url}${url.includes("?") ? "&" : "?"}key=${encodeURIComponent(key)}`;
}

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** keyedGet is browser.ts's get with the key header. */
export function keyedGet(fetchFn: Fetch, key: string | null) {
  return async (url: string): Promise<{ status: number; text: string }> => {
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), GET_TIMEOUT_MS);
    try {
      const headers: Record<string, string> = { Accept: "application/json" };
      if (key) headers[KEY_HEADER] = key;
      const res = await fetchFn(url, { credentials: "same-origin", cache: "no-store", headers, signal: ctrl.signal });
      return { status: res.status, text: await res.text() };
    } finally {
      clearTimeout(timer);
    }
  };
}

/** embedEnv wraps base so every channel finds the visitor by key. */
export function embedEnv(base: Env, fetchFn: Fetch, key: string | null, keyInURL: boolean): Env {
  const wrap = (url: string) => (key && keyInURL ? withKey(url, key) : url);
  const { openWS, openSSE } = base;
  return {
    ...base,
    openWS: openWS && ((url, h) => openWS(wrap(url), h)),
    openSSE: openSSE && ((url, h) => openSSE(wrap(url), h)),
    get: keyedGet(fetchFn, key),
  };
}

/**
 * cookiesStick sets a partitioned test cookie from script and reads it back:
 * a browser that refuses the frame's cookies refuses both kinds alike. path
 * must be the document's, or document.cookie would not show it.
 */
export function cookiesStick(doc: Document, path: string): boolean {
  const attrs = `; Path=${path}; SameSite=None; Secure; Partitioned`;
  try {
    doc.cookie = `wr_probe=1${attrs}; Max-Age=60`;
    const ok = doc.cookie.split(/;\s*/).includes("wr_probe=1");
    doc.cookie = `wr_probe=${attrs}; Max-Age=0`;
    return ok;
  } catch {
    return false; // sandboxed or otherwise forbidden
  }
}
