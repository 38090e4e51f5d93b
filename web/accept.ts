// The accept page of degraded mode. Without script it refreshes itself; with
// script it follows the intent through the API and watches for the end of
// degraded mode, when it takes the visitor back to the line.

import { backoffCeiling } from "./backoff";
import { Strings, t } from "./strings";

/** How often to look, at first and at most: backoff while nothing changes or the server fails. */
const FIRST_MS = 1_000;
const MOST_MS = 8_000;
/** How long the "working again" notice shows before the page moves. */
const MOVE_AFTER_MS = 1_500;

const FINAL = ["processed", "rejected"];

type Status = "accepted" | "published" | "processed" | "rejected";
const STATUSES: readonly string[] = ["accepted", "published", "processed", "rejected"];

/** nextDelay doubles the wait after a look that changed nothing, from FIRST_MS up to MOST_MS. */
export function nextDelay(unchanged: number): number {
  return Math.max(FIRST_MS, backoffCeiling(unchanged + 1, { baseMs: FIRST_MS, capMs: MOST_MS }));
}

async function getJSON(url: string): Promise<{ status: number; body: unknown }> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), 10_000);
  try {
    const res = await fetch(url, {
      credentials: "same-origin",
      cache: "no-store",
      headers: { Accept: "application/json" },
      signal: ctrl.signal,
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * followAccept runs the accept page: root is its <main data-accept>. Degraded
 * mode ends when the room's mode (/readyz's answer) says "normal"; the intent's status comes from
 * GET /api/intents/{id}. Both are read on one timer with backoff.
 */
export function followAccept(root: HTMLElement, strings: Strings): void {
  const d = root.dataset;
  const q = (id: string) => root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
  let intent = d.intent || "";
  let unchanged = 0;
  let moving = false;

  const showStatus = (status: Status, reason: string): boolean => {
    const box = q("intent");
    const text = q("intent-status");
    if (!box || box.dataset.status === status) return false;
    box.dataset.status = status;
    if (text) text.textContent = t(strings, `accept.status.${status}`);
    const why = q("intent-reason");
    if (why) {
      const known = strings[`accept.reason.${reason}`];
      why.textContent = known ?? reason;
      why.hidden = status !== "rejected" || !reason;
    }
    return true;
  };

  const look = async (): Promise<boolean> => {
    let changed = false;
    // Under /api/rooms/, which every shipped proxy routes to waitroom
    // (/readyz is the balancer's, and nginx leaves it out).
    const ready = await getJSON(`/api/rooms/${encodeURIComponent(d.room || "")}/mode`);
    const mode = (ready.body as { mode?: unknown } | null)?.mode;
    if (ready.status === 200 && mode === "normal" && !moving) {
      moving = true;
      const note = q("accept-recovered");
      if (note) note.textContent = t(strings, "accept.recovered");
      // With an intent in flight the visitor may want to see it through:
      // the notice and the link say the line is back, nothing moves.
      // Sent here by the line (data-ordered): this intent is their order,
      // and the line would only send them back.
      if (!d.ordered && (!intent || FINAL.includes(q("intent")?.dataset.status ?? ""))) {
        window.setTimeout(() => location.assign(d.lineUrl || "/"), MOVE_AFTER_MS);
      }
      changed = true;
    }
    if (intent) {
      const res = await getJSON(`/api/intents/${encodeURIComponent(intent)}`);
      const body = res.body as { status?: unknown; reason?: unknown } | null;
      if (res.status === 200 && typeof body?.status === "string" && STATUSES.includes(body.status)) {
        changed = showStatus(body.status as Status, typeof body.reason === "string" ? body.reason : "") || changed;
        if (FINAL.includes(body.status)) intent = ""; // nothing more will change
      }
    }
    return changed;
  };

  const loop = () => {
    look().then(
      (changed) => {
        unchanged = changed ? 0 : unchanged + 1;
        window.setTimeout(loop, nextDelay(unchanged));
      },
      () => window.setTimeout(loop, nextDelay(++unchanged)),
    );
  };
  loop();
}

/**
 * retryForm: the server could not save the request (its outbox could not
 * write) and sent the form back as the visitor filled it, with the seconds
 * to wait in data-retry-after. The page sends it again then, once; a second
 * failure comes back the same way and waits again.
 */
export function retryForm(form: HTMLFormElement): void {
  const secs = Number(form.dataset.retryAfter);
  if (!Number.isFinite(secs) || secs <= 0) return;
  window.setTimeout(() => form.requestSubmit(), secs * 1000);
}
