// The embed's client: the waiting page inside a shop's iframe. Unlike the
// top-level page, it enters by itself (once the SDK has said who the
// visitor is), never navigates away, and tells the parent everything by
// postMessage, always to the one origin the server checked against the
// room's allowed_embedders.

import { browserEnv, wsURL } from "./browser";
import { DEFAULT_BACKOFF, backoffDelay } from "./backoff";
import { cookiesStick, embedEnv, KEY_HEADER } from "./embed-env";
import { absolute, admittedMessage, Init, parseInit, updateMessage } from "./embed-messages";
import { secondsLeft } from "./format";
import { leaveControls } from "./leave";
import { Page } from "./page";
import { challengeBeside, solve } from "./pow";
import { frozenNewcomer, REOPEN_FLOOR_MS } from "./reopen";
import { Strings } from "./strings";
import { isTerminal, parseTicketText, Ticket } from "./ticket";
import { Connection } from "./transport";
import { entryPositionFor, toView } from "./view";
import { Display, State } from "./vocab";

function readStrings(): Strings {
  try {
    return JSON.parse(document.getElementById("waitroom-strings")?.textContent ?? "{}");
  } catch {
    return {};
  }
}

const BLOCKS = [Display.Waiting, Display.Admitted, Display.Expired, Display.Closed, Display.Bypassed, Display.Left];

/** Enter failures that a retry may cure: the network, or a busy server. */
class Retryable extends Error {}

function main(): void {
  const root = document.querySelector<HTMLElement>("[data-waitroom-embed]");
  if (!root || window.parent === window) return;
  const d = root.dataset;
  const room = d.room ?? "";
  const parentOrigin = d.parent ?? "";
  const lang = d.lang || document.documentElement.lang || "en";
  if (!room || !parentOrigin) return;

  const post = (msg: object) => window.parent.postMessage(msg, parentOrigin);
  const strings = readStrings();
  const page = new Page(root, strings, lang);
  const api = `/api/rooms/${encodeURIComponent(room)}/embed`;
  const cookiesOK = cookiesStick(document, location.pathname);

  // The parent sizes the frame to the content, so it never scrolls inside.
  let lastHeight = -1;
  const resize = () => {
    const h = Math.ceil(document.body.getBoundingClientRect().height);
    if (h !== lastHeight) post({ type: "waitroom:resize", height: (lastHeight = h) });
  };
  if (typeof ResizeObserver === "function") new ResizeObserver(resize).observe(document.body);
  else window.setInterval(resize, 500); // old browsers: still never a scrollbar for long

  let init: Init = { user_token: null, key: null };
  let key: string | null = null;
  let conn: Connection | null = null;
  let countdown: number | undefined;
  let entry = 0;
  let admittedSent = false;
  let ticketURL: string | null = null; // the ticket in line, for leaving

  function showOnly(testid: "connecting" | "embed-error" | null): void {
    for (const id of ["connecting", "embed-error"]) {
      const el = page.el(id);
      if (el) el.hidden = id !== testid;
    }
  }

  function countdownTo(orderableAt: string | null): void {
    const at = Date.parse(orderableAt ?? "");
    const tick = () => {
      const left = Number.isFinite(at) ? secondsLeft(at, Date.now()) : 0;
      page.setCountdown(left);
      if (left > 0) countdown = window.setTimeout(tick, (at - Date.now()) % 1000 || 1000);
    };
    window.clearTimeout(countdown);
    tick();
  }

  // The pre-queue's countdown to the opening, as on the waiting page: when
  // it runs out here the connection asks at once (the draw is pushed too,
  // but a polling frame would wait).
  let opening: number | undefined;
  function openingIn(opensAt: string | null | undefined): void {
    const at = Date.parse(opensAt ?? "");
    window.clearTimeout(opening);
    if (!Number.isFinite(at)) return;
    let counting = false;
    const tick = () => {
      const left = secondsLeft(at, Date.now());
      page.setOpening(left, new Date(at));
      if (left > 0) {
        counting = true;
        opening = window.setTimeout(tick, (at - Date.now()) % 1000 || 1000);
      } else if (counting) {
        conn?.nudge();
      }
    };
    tick();
  }

  function show(raw: Ticket): void {
    const t = absolute(raw, location.href);
    showOnly(null);
    post(updateMessage(t));
    if (t.state === State.Scheduled) openingIn(t.opens_at);
    else window.clearTimeout(opening);
    if (t.state === State.Waiting) {
      entry = entryPositionFor(entry, 0, t.position);
      const view = toView(t, entry, strings, lang);
      page.renderWaiting(view, new Date());
      page.renderMethod(t, view.waiting);
    } else {
      page.renderMethod(t, "");
    }
    // The full page's link leads to the standalone page: not in a frame.
    page.el("full-again")?.remove();
    if (t.state === State.Expired) page.renderExpired(t.reason);
    page.showState(t.display);
    if (!isTerminal(t.state)) return;
    conn?.stop();
    if (t.state === State.Admitted) {
      const m = admittedMessage(t);
      if (m && !admittedSent) {
        admittedSent = true;
        post(m);
      }
      if (t.redirect_url) {
        page.showGo(t.redirect_url);
        page.el<HTMLAnchorElement>("go-link")?.setAttribute("target", "_top");
      }
      countdownTo(t.orderable_at);
    }
    if (t.state === State.Bypassed && t.accept_url) {
      page.el<HTMLAnchorElement>("bypass-link")?.setAttribute("href", t.accept_url);
    }
  }

  /** setJoining says what the joining step is doing: checking the browser, or joining. */
  function setJoining(checking: boolean): void {
    const p = page.el("connecting")?.querySelector("[role=status]");
    const text = strings[checking ? "checking.body" : "embed.joining"];
    if (p && text && p.textContent !== text) p.textContent = text;
  }

  async function enterOnce(): Promise<Ticket> {
    let pow = "";
    for (let tries = 0; ; tries++) {
      const headers: Record<string, string> = { Accept: "application/json", "Content-Type": "application/json" };
      const k = key ?? init.key;
      if (k) headers[KEY_HEADER] = k;
      let res: Response;
      try {
        const body: Record<string, string> = {};
        if (init.user_token) body.user_token = init.user_token;
        if (pow) body.pow = pow;
        res = await fetch(`${api}/enter`, { method: "POST", credentials: "same-origin", cache: "no-store", headers, body: JSON.stringify(body) });
      } catch (e) {
        throw new Retryable(String(e));
      }
      const text = await res.text();
      // The room asks for proof of work: solve the challenge that came with
      // the refusal, bound to the key the server just gave, and enter again.
      const challenge = res.status === 403 || res.status === 400 ? challengeBeside(text) : null;
      if (challenge && d.powWorker && tries < 3) {
        const issued = res.headers.get(KEY_HEADER);
        if (issued) key = issued;
        setJoining(true);
        try {
          pow = await solve(challenge, d.powWorker);
        } catch (e) {
          throw new Retryable(String(e));
        } finally {
          setJoining(false);
        }
        continue;
      }
      return ticketFrom(res, text);
    }
  }

  function ticketFrom(res: Response, text: string): Ticket {
    if (res.status >= 500 || res.status === 429) throw new Retryable(`enter: ${res.status}`);
    let message = "";
    try {
      message = JSON.parse(text)?.error?.message ?? "";
    } catch {
      // not JSON: say what the status says
    }
    const t = res.status === 200 ? parseTicketText(text) : null;
    if (!t) throw new Error(message || `enter: ${res.status}`);
    const issued = res.headers.get(KEY_HEADER);
    if (issued) {
      key = issued;
      // Only anonymous keys are kept by the SDK; a user's comes from the user token each time.
      if (issued.startsWith("a.")) post({ type: "waitroom:key", key: issued });
    }
    return t;
  }

  let entering = 0; // a newer enter (a second click) supersedes an older one still on its way
  async function enter(): Promise<void> {
    const mine = ++entering;
    conn?.stop();
    conn = null;
    admittedSent = false;
    showOnly("connecting");
    for (const id of BLOCKS) {
      const el = page.el(id);
      if (el) el.hidden = true;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const t = await enterOnce();
        if (mine === entering) live(t);
        return;
      } catch (e) {
        if (mine !== entering) return;
        if (!(e instanceof Retryable)) {
          const msg = e instanceof Error ? e.message : String(e);
          const el = page.el("embed-error-message");
          if (el && msg) el.textContent = msg;
          showOnly("embed-error");
          post({ type: "waitroom:error", code: "enter_failed", message: msg });
          return;
        }
        await new Promise((r) => setTimeout(r, backoffDelay(attempt, DEFAULT_BACKOFF)));
      }
    }
  }

  // A newcomer the room turned away while frozen (sold out, maintenance)
  // has no ticket to follow: ask again at the room's pace (never faster
  // than the floor) until the operator undoes it, without the joining step.
  function askAgain(first: Ticket): void {
    const mine = entering;
    window.setTimeout(() => {
      if (mine !== entering) return;
      enterOnce().then(
        (t) => mine === entering && live(t),
        () => mine === entering && askAgain(first),
      );
    }, Math.max(REOPEN_FLOOR_MS, first.next_update_ms));
  }

  function live(first: Ticket): void {
    ticketURL = null;
    show(first);
    if (!first.ticket) {
      if (frozenNewcomer(first)) askAgain(first);
      return;
    }
    if (isTerminal(first.state)) return;
    const base = `${api}/tickets/${encodeURIComponent(first.ticket)}`;
    ticketURL = base;
    conn = new Connection({
      room,
      ticket: first.ticket,
      ticketURL: base,
      wsURL: wsURL(base),
      nextUpdateMs: first.next_update_ms,
      // A user's key is never a cookie; an anonymous one is, where cookies stick.
      env: embedEnv(browserEnv(), (u, i) => fetch(u, i), key, !cookiesOK || !key?.startsWith("a.")),
      hooks: { ticket: show, status: (s) => page.setStatus(s) },
    });
    conn.start();
  }

  page.el("enter-again")?.addEventListener("click", () => void enter());
  page.el("join-again")?.addEventListener("click", () => void enter());
  // Leaving, as on the waiting page: the place is given up (DELETE, with
  // the visitor's key), the frame says so and tells the parent.
  leaveControls(
    page,
    () => {
      const k = key ?? init.key;
      const headers: Record<string, string> = {};
      if (k) headers[KEY_HEADER] = k;
      return ticketURL ? { url: ticketURL, headers } : null;
    },
    strings,
    () => {
      entering++; // an enter still on its way is not shown over this
      conn?.stop();
      conn = null;
      ticketURL = null;
      window.clearTimeout(opening);
      page.showState(Display.Left);
      post({ type: "waitroom:left" });
    },
  );
  const nudge = () => conn?.nudge();
  window.addEventListener("online", nudge);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") nudge();
  });

  if (d.sdk !== "1") {
    void enter(); // a plain iframe: the cookie alone says who the visitor is
    return;
  }
  // Only the embedder the server allowed may say who the visitor is: any
  // other window (another frame, a popup) is ignored, whatever it sends.
  const onInit = (ev: MessageEvent) => {
    if (ev.source !== window.parent || ev.origin !== parentOrigin) return;
    const got = parseInit(ev.data);
    if (!got) return;
    window.removeEventListener("message", onInit);
    init = got;
    void enter();
  };
  window.addEventListener("message", onInit);
  post({ type: "waitroom:ready" });
  resize();
}

main();
