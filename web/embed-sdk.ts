// waitroom-embed.js: puts a room's line into a shop's page.
//
//   Waitroom.mount(element, { room, server, lang, userToken, onUpdate, onAdmitted, onLeft })
//     → Promise<{ token, orderable_at, redirect_url }>
//
// It makes the iframe, sizes it to its content, answers the frame's
// "ready" with who the visitor is, keeps an anonymous visitor's key in this
// site's localStorage (so a reload keeps the place even where the browser
// refuses the frame's cookies), and resolves on admission. Messages are
// taken only from the frame it made and only from the waitroom's origin.

import { Admission, messageType, parseAdmission, parseUpdate } from "./embed-messages";
import { Ticket } from "./ticket";

export interface MountOptions {
  room: string;
  /** The waitroom's URL; defaults to where this script came from. */
  server?: string;
  lang?: string;
  /** The shop's user token (HS256 with the room's user_secret): one place per user, in any tab. */
  userToken?: string;
  /** The frame's accessible name. */
  title?: string;
  onUpdate?: (t: Ticket) => void;
  onAdmitted?: (a: Admission) => void;
  /** The visitor left the line with the frame's button (the frame offers to join again). */
  onLeft?: () => void;
}

/** A key is kept as long as the frame's cookie would be. */
const KEY_TTL_MS = 24 * 3600 * 1000;

const scriptOrigin = (() => {
  try {
    return new URL((document.currentScript as HTMLScriptElement | null)?.src ?? "").origin;
  } catch {
    return "";
  }
})();

/** keyStore keeps the key in localStorage, or in memory where storage is refused. */
function keyStore(name: string) {
  let mem: string | null = null;
  return {
    get(): string | null {
      try {
        const v = JSON.parse(window.localStorage.getItem(name) ?? "null");
        if (v && typeof v.key === "string" && Date.now() - Number(v.at) < KEY_TTL_MS) return v.key;
        return null;
      } catch {
        return mem;
      }
    },
    set(key: string): void {
      mem = key;
      try {
        window.localStorage.setItem(name, JSON.stringify({ key, at: Date.now() }));
      } catch {
        // full or refused: memory keeps it for this page
      }
    },
  };
}

/** call runs a shop's callback; its errors must not stop the line. */
function call<T>(fn: ((v: T) => void) | undefined, v: T): void {
  if (!fn) return;
  try {
    fn(v);
  } catch (e) {
    setTimeout(() => {
      throw e;
    });
  }
}

const mounted = new Map<Element, () => void>();

export function mount(element: Element, o: MountOptions): Promise<Admission> {
  return new Promise((resolve, reject) => {
    if (!element || !o || typeof o.room !== "string" || !o.room) {
      reject(new TypeError("Waitroom.mount(element, {room, server}): element and room are required"));
      return;
    }
    let server: URL;
    try {
      server = new URL(o.server || scriptOrigin);
    } catch {
      reject(new TypeError("Waitroom.mount: server must be the waitroom's URL"));
      return;
    }
    if (location.origin === "null") {
      reject(new Error("Waitroom.mount: the page needs an http(s) origin to embed the line"));
      return;
    }
    unmount(element);
    const origin = server.origin;
    const store = keyStore(`waitroom:key:${origin}:${o.room}`);
    const src = new URL(`embed/rooms/${encodeURIComponent(o.room)}`, server.href.replace(/\/?$/, "/"));
    src.searchParams.set("parent", location.origin);
    src.searchParams.set("sdk", "1");
    if (o.lang) src.searchParams.set("lang", o.lang);

    const frame = document.createElement("iframe");
    frame.src = src.href;
    frame.title = o.title ?? frameTitle(o.lang ?? document.documentElement.lang);
    frame.style.cssText = "display:block;width:100%;border:0;height:10rem;overflow:hidden";

    const onMessage = (ev: MessageEvent) => {
      if (ev.source !== frame.contentWindow || ev.origin !== origin) return;
      const m = ev.data;
      switch (messageType(m)) {
        case "waitroom:ready":
          frame.contentWindow?.postMessage(
            // A user's token says who they are; a stored key is for anonymous visitors.
            { type: "waitroom:init", user_token: o.userToken ?? null, key: o.userToken ? null : store.get() },
            origin,
          );
          break;
        case "waitroom:resize": {
          const h = Number(m.height);
          if (Number.isFinite(h) && h > 0) frame.style.height = `${Math.ceil(h)}px`;
          break;
        }
        case "waitroom:key":
          if (typeof m.key === "string" && m.key.startsWith("a.")) store.set(m.key);
          break;
        case "waitroom:update": {
          const t = parseUpdate(m);
          if (t) call(o.onUpdate, t);
          break;
        }
        case "waitroom:left":
          call(o.onLeft, undefined);
          break;
        case "waitroom:admitted": {
          const a = parseAdmission(m);
          if (!a) break;
          call(o.onAdmitted, a);
          resolve(a);
          break;
        }
      }
    };
    window.addEventListener("message", onMessage);
    mounted.set(element, () => {
      window.removeEventListener("message", onMessage);
      frame.remove();
    });
    element.appendChild(frame);
  });
}

/** unmount removes the line that mount put into element. */
export function unmount(element: Element): void {
  mounted.get(element)?.();
  mounted.delete(element);
}

(window as unknown as { Waitroom: object }).Waitroom = { mount, unmount };

/** frameTitle names the iframe for screen readers in the embedder's language. */
function frameTitle(lang: string | undefined): string {
  return (lang ?? "").toLowerCase().startsWith("ko") ? "대기실" : "Waiting room";
}
