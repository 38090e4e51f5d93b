// Waiting page client. The server renders a complete page that works without
// JavaScript (it refreshes itself); this script replaces the refresh with a
// live connection and updates the page in place.

import { followAccept, retryForm } from "./accept";
import { browserEnv, wsURL } from "./browser";
import { secondsLeft } from "./format";
import { leaveControls } from "./leave";
import { browserNotifyEnv, NotifyOption } from "./notify";
import { Page } from "./page";
import { type Challenge, factor, fetchChallenge, longer, solve } from "./pow";
import { frozenNewcomer, reopen } from "./reopen";
import { formatNumber, plural, Strings } from "./strings";
import { isTerminal, parseTicketText, safeURL, Ticket } from "./ticket";
import { Connection } from "./transport";
import { entryPositionFor, toView } from "./view";
import { Display, Method, State } from "./vocab";

function readStrings(): Strings {
  try {
    return JSON.parse(document.getElementById("waitroom-strings")?.textContent ?? "{}");
  } catch {
    return {};
  }
}

/** sessionStorage can throw (privacy modes); the bar then starts where the page says. */
function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/**
 * sayLonger tells the visitor why this check takes longer than usual: their
 * network already holds places in this line, and each more costs more work.
 */
function sayLonger(root: HTMLElement, c: Challenge): void {
  const status = root.querySelector<HTMLElement>('[data-testid="checking-status"]');
  const text = readStrings()["checking.longer"];
  if (!status || !text) return;
  const lang = document.documentElement.lang || "en";
  status.textContent = text.replace("{held}", formatNumber(c.parameters.held, lang)).replace("{factor}", formatNumber(factor(c), lang));
  status.dataset.longer = "true";
}

/**
 * check is the page's first step when the room asks for proof of work and the
 * visitor has no place yet: solve a challenge in Web Workers, enter with it
 * through the API, and reload, which now shows the place.
 */
async function check(root: HTMLElement, room: string, challengeURL: string, workerURL: string): Promise<void> {
  const enterURL = `/api/rooms/${encodeURIComponent(room)}/enter`;
  // A challenge can expire or be spent (another tab): try a fresh one, twice more.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const began = performance.now();
      const challenge = await fetchChallenge(challengeURL);
      if (longer(challenge)) sayLonger(root, challenge);
      const payload = await solve(challenge, workerURL);
      try {
        // How long the check took (challenge and work), for the browser test's timing.
        sessionStorage.setItem("waitroom:pow-ms", String(Math.round(performance.now() - began)));
      } catch {
        // storage may be off: the timing is only a measurement
      }
      const res = await fetch(enterURL, {
        method: "POST",
        credentials: "same-origin",
        cache: "no-store",
        headers: { Accept: "application/json", "Content-Type": "application/json" },
        body: JSON.stringify({ pow: payload }),
      });
      if (res.ok) {
        location.reload();
        return;
      }
      // 403: spent, expired, or the network's price rose meanwhile; 429 and
      // 503: the next fetch waits its Retry-After.
      if (res.status !== 403 && res.status !== 429 && res.status !== 503) break;
    } catch {
      // the network or a worker: try again
    }
  }
  const status = root.querySelector<HTMLElement>('[data-testid="checking-status"]');
  const failed = root.querySelector<HTMLElement>('[data-testid="checking-failed"]');
  const strings = readStrings();
  if (status && strings["checking.failed"]) status.textContent = strings["checking.failed"];
  root.querySelector('[data-testid="checking-progress"]')?.remove();
  if (failed) failed.hidden = false;
}

/**
 * powForm: the accept page of degraded mode, when the room asks for proof of
 * work. Sending the form first solves a challenge into its "pow" field.
 */
function powForm(form: HTMLFormElement): void {
  const d = form.dataset;
  const field = form.querySelector<HTMLInputElement>('input[name="pow"]');
  const status = form.querySelector<HTMLElement>('[data-testid="accept-checking"]');
  if (!d.challengeUrl || !d.powWorker || !field) return;
  let busy = false;
  form.addEventListener("submit", (ev) => {
    if (field.value) return; // solved: let it go
    ev.preventDefault();
    if (busy) return;
    busy = true;
    if (status) status.hidden = false;
    void (async () => {
      try {
        field.value = await solve(await fetchChallenge(d.challengeUrl!), d.powWorker!);
        form.submit();
      } catch {
        busy = false;
        const text = readStrings()["checking.failed"];
        if (status && text) status.textContent = text;
      }
    })();
  });
}

/**
 * retryFull counts down the full line's hint, then loads the room again,
 * which enters anew. The count is not a live region: it would speak every
 * second.
 */
function retryFull(root: HTMLElement, seconds: number, strings: Strings, lang: string): void {
  const el = root.querySelector<HTMLElement>('[data-testid="full-retry"]');
  let left = Math.max(1, seconds);
  const tick = () => {
    if (el) el.textContent = plural(strings, "full.retry", left, lang);
    if (left <= 0) {
      location.reload();
      return;
    }
    left--;
    window.setTimeout(tick, 1000);
  };
  tick();
}

function main(): void {
  const acceptRoot = document.querySelector<HTMLElement>("[data-accept]");
  if (acceptRoot) {
    const form = acceptRoot.querySelector<HTMLFormElement>("form[data-challenge-url]");
    if (form) powForm(form);
    const sent = acceptRoot.querySelector<HTMLFormElement>("form[data-retry-after]");
    if (sent) retryForm(sent);
    followAccept(acceptRoot, readStrings());
    return;
  }
  const root = document.querySelector<HTMLElement>("[data-waitroom]");
  if (!root) return;
  const d = root.dataset;
  const room = d.room ?? "";
  if (room && d.challengeUrl && d.powWorker) {
    void check(root, room, d.challengeUrl, d.powWorker);
    return;
  }
  const lang = d.lang || document.documentElement.lang || "en";
  const initial = parseTicketText(d.ticketJson ?? "");
  if (initial?.state === State.Full) {
    retryFull(root, initial.retry_after_s, readStrings(), lang);
    return;
  }
  if (!room || !initial) return; // leave the no-JS page as it is
  const strings = readStrings();
  const page = new Page(root, strings, lang);
  if (d.ticket) {
    follow(root, room, lang, strings, page, initial);
    return;
  }
  if (!frozenNewcomer(initial)) return;
  // Sold out or closed for maintenance when this visitor came: no ticket,
  // so nothing is pushed. Ask again until the operator undoes it, then
  // follow the new place here, without a reload.
  reopen(`/api/rooms/${encodeURIComponent(room)}/enter`, initial, {
    still: (t) => {
      page.renderMethod(t, "");
      page.showState(t.display);
    },
    placed: (t) => {
      root.dataset.ticket = t.ticket;
      follow(root, room, lang, strings, page, t);
    },
    other: () => location.reload(),
  });
}

/** follow keeps the page live for the ticket initial.ticket. */
function follow(root: HTMLElement, room: string, lang: string, strings: Strings, page: Page, initial: Ticket): void {
  const d = root.dataset;
  const ticketID = initial.ticket;
  // Countdowns run on the server's clock: the page says what time it was there.
  // Compare it with when the response arrived, not when this script runs:
  // time spent loading the page is not clock skew.
  const serverNow = Date.parse(d.serverNow ?? "");
  const nav = performance.getEntriesByType?.("navigation")[0] as PerformanceNavigationTiming | undefined;
  const arrived = nav && nav.responseStart > 0 ? performance.timeOrigin + nav.responseStart : Date.now();
  const skewMs = Number.isFinite(serverNow) ? serverNow - arrived : 0;

  const entryKey = `waitroom:entry:${room}:${ticketID}`;
  const store = storage();
  let entry = entryPositionFor(Number(store?.getItem(entryKey)), Number(d.entryPosition), initial.position);
  let left = false; // the visitor left the line here: nothing more to show
  let followed = false; // past the first render: a change now is news
  const notify = new NotifyOption(page, strings, lang, room, ticketID, browserNotifyEnv(store));

  let countdown: number | undefined;
  let conn: Connection | null = null;

  function admit(t: Ticket): void {
    const go = safeURL(t.redirect_url, location.href);
    const at = Date.parse(t.orderable_at ?? "");
    const tick = () => {
      const now = Date.now() + skewMs;
      const left = Number.isFinite(at) ? secondsLeft(at, now) : 0;
      page.setCountdown(left);
      if (left > 0) {
        page.hideGo(); // no early "Continue": it only meets "too early"
        // Wake on the next whole second before orderable_at, not on the wall clock's.
        countdown = window.setTimeout(tick, (at - now) % 1000 || 1000);
      } else if (go) {
        page.showGo(go);
        location.assign(go);
      }
    };
    window.clearTimeout(countdown);
    tick();
  }

  // The pre-queue's countdown to the opening. When it runs out here the
  // connection asks at once (the draw is pushed too, but a polling page
  // would wait); a page that loads after the opening just waits for it.
  let opening: number | undefined;
  function scheduled(t: Ticket): void {
    const at = Date.parse(t.opens_at ?? "");
    window.clearTimeout(opening);
    if (!Number.isFinite(at)) return;
    let counting = false;
    const tick = () => {
      const now = Date.now() + skewMs;
      const left = secondsLeft(at, now);
      page.setOpening(left, new Date(at));
      if (left > 0) {
        counting = true;
        opening = window.setTimeout(tick, (at - now) % 1000 || 1000);
      } else if (counting) {
        conn?.nudge();
      }
    };
    tick();
  }

  function show(t: Ticket): void {
    if (left) return;
    if (t.state === State.Scheduled) {
      scheduled(t);
    } else {
      window.clearTimeout(opening);
    }
    if (t.state === State.Waiting) {
      entry = entryPositionFor(entry, t.entry_position, t.position);
      try {
        store?.setItem(entryKey, String(entry));
      } catch {
        // full or disabled: the bar just restarts next visit
      }
      page.setEnteredAt(t.entered_at);
      const view = toView(t, entry, strings, lang);
      page.renderWaiting(view, new Date());
      page.renderMethod(t, view.waiting);
      page.setTitle(t.queueing_method === Method.Random ? null : view.position);
      notify.offer(t);
    } else if (t.state === State.Admitted) {
      // The tab's title says it too, for a tab in the background.
      page.setTurnTitle();
      if (followed) notify.admitted(d.title ?? document.title);
    } else {
      page.renderMethod(t, "");
      page.setTitle(null);
    }
    if (t.state === State.Expired) page.renderExpired(t.reason);
    page.showState(t.display);
    if (!isTerminal(t.state)) return;
    conn?.stop();
    if (t.state === State.Admitted) admit(t);
    if (t.state === State.Bypassed) {
      const go = safeURL(t.accept_url ?? d.acceptUrl ?? null, location.href);
      if (go) location.assign(go);
    }
  }

  show(initial);
  followed = true;
  if (isTerminal(initial.state)) return;

  const base = `/api/rooms/${encodeURIComponent(room)}/tickets/${encodeURIComponent(ticketID)}`;
  conn = new Connection({
    room,
    ticket: ticketID,
    ticketURL: base,
    wsURL: wsURL(base),
    nextUpdateMs: initial.next_update_ms,
    env: browserEnv(),
    hooks: { ticket: show, status: (s) => page.setStatus(s) },
  });
  conn.start();
  leaveControls(page, base, strings, () => {
    left = true;
    conn?.stop();
    page.setTitle(null);
    page.showState(Display.Left);
  });

  // Timers sleep in background tabs and networks drop: catch up at once.
  const nudge = () => conn?.nudge();
  window.addEventListener("online", nudge);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") nudge();
  });
  // A background tab the browser froze (Chrome's energy saver) catches up
  // as it resumes, whether or not it is shown: a notification may be due.
  document.addEventListener("resume", nudge);
  // Back/forward cache restores a frozen page with dead sockets: start over.
  window.addEventListener("pageshow", (ev) => {
    if (ev.persisted) location.reload();
  });
}

main();
