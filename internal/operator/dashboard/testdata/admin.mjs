// The admin dashboard in headless Chromium, driven by
// internal/operator/dashboard/browser_test.go. Same protocol as web/e2e: READY {json}
// lines the Go side waits for, one RESULT {json} line at the end, a FAIL
// line on stderr and exit status 1 on failure. Plain ESM, no build step.
//
// Sign in, create a room (a bad value first: the inline message), watch the
// counts move while the Go side enters simulated visitors, change the pace
// and watch the admitted rate follow, and see a post without the CSRF token
// refused.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openBrowser } from "../../../../web/e2e/browser.mjs";

const need = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`environment variable ${k} is not set`);
  return v;
};
const BASE_URL = need("BASE_URL").replace(/\/$/, "");
const ADMIN_TOKEN = need("ADMIN_TOKEN");
const ROOM = need("ROOM");
const OUT_DIR = process.env.OUT_DIR || "test-output/browser";
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS) || 90_000;
const WAIT_MS = Number(process.env.WAIT_MS) || 30_000;
// How long a rate must hold: longer than the server's rate window (2 s in the test).
const HOLD_MS = Number(process.env.HOLD_MS) || 3000;

const started = Date.now();
const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(2)}s]`, ...a);
const check = (cond, msg) => {
  if (!cond) throw new Error(msg);
};
mkdirSync(OUT_DIR, { recursive: true });

const tid = (id) => `[data-testid="${id}"]`;

/** value reads a stat's data-value: a number, or null (n/a). */
async function value(page, id) {
  const raw = await page.locator(tid(id)).getAttribute("data-value");
  return raw === null || raw === "" ? null : Number(raw);
}

/** nextChange waits until the stat's data-value differs from raw, or until the time given. */
async function nextChange(page, id, raw, until) {
  await page
    .waitForFunction(([sel, prev]) => document.querySelector(sel)?.getAttribute("data-value") !== prev, [tid(id), raw], {
      timeout: Math.max(until - Date.now(), 1),
    })
    .catch(() => {});
}

/** waitValue waits until the stat's data-value satisfies ok, and returns it. */
async function waitValue(page, id, ok, what, timeout = WAIT_MS) {
  const deadline = Date.now() + timeout;
  let last = null;
  while (Date.now() < deadline) {
    last = await value(page, id);
    if (ok(last)) return last;
    await nextChange(page, id, last === null ? "" : String(last), deadline);
  }
  throw new Error(`${what}: ${id} never got there within ${timeout} ms (last ${last})`);
}

/**
 * waitSteady waits until every value the stat shows satisfies ok for
 * holdMs on end (longer than the server's rate window, so no reading from
 * before counts), and returns when that began and the values seen.
 */
async function waitSteady(page, id, ok, holdMs, what, timeout = WAIT_MS) {
  const deadline = Date.now() + timeout;
  let since = null;
  let values = [];
  let last = null;
  while (Date.now() < deadline) {
    last = await value(page, id);
    if (!ok(last)) {
      since = null;
      values = [];
    } else {
      if (since === null) since = Date.now();
      values.push(last);
      if (Date.now() - since >= holdMs) return { since, values };
    }
    await nextChange(page, id, last === null ? "" : String(last), since === null ? deadline : Math.min(deadline, since + holdMs));
  }
  throw new Error(`${what}: ${id} never held within ${timeout} ms (last ${last})`);
}

async function main(browser, seen) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
  const page = await ctx.newPage();
  seen.pageErrors = [];
  seen.foreign = [];
  seen.httpErrors = [];
  page.on("pageerror", (e) => seen.pageErrors.push(String(e)));
  page.on("console", (m) => {
    // Answers >= 400 are in httpErrors, judged by the Go side.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) seen.pageErrors.push("console: " + m.text());
  });
  const host = new URL(BASE_URL).host;
  page.on("request", (r) => {
    const u = new URL(r.url());
    if ((u.protocol === "http:" || u.protocol === "https:" || u.protocol === "ws:") && u.host !== host) seen.foreign.push(r.url());
  });
  page.on("response", (r) => {
    if (r.status() >= 400) seen.httpErrors.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });

  // Every change of the live figures goes to node, with the document it
  // happened in: the counts must move without a reload.
  seen.samples = [];
  await page.exposeBinding("__adminRecord", (_src, s) => seen.samples.push(s));
  await page.addInitScript(() => {
    const doc = Math.random().toString(36).slice(2);
    let last = "";
    const v = (id) => document.querySelector(`[data-testid="${id}"]`)?.getAttribute("data-value") ?? null;
    const snap = () => {
      const s = {
        doc,
        path: location.pathname,
        waiting: v("stat-waiting"),
        admitted: v("stat-admitted-rate"),
        entries: v("stat-entry-rate"),
        mode: document.querySelector('[data-testid="live-status"]')?.dataset.mode ?? null,
      };
      const key = JSON.stringify(s);
      if (key === last || s.waiting === null) return;
      last = key;
      window.__adminRecord({ ...s, t: Date.now() });
    };
    document.addEventListener("DOMContentLoaded", () => {
      snap();
      new MutationObserver(snap).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
  });

  // Signed out, /admin leads to the sign-in form.
  await page.goto(`${BASE_URL}/admin`);
  check(new URL(page.url()).pathname === "/admin/login", `not sent to sign in: ${page.url()}`);
  await page.fill(tid("login-token"), "not the token");
  await page.click(tid("login-submit"));
  await page.locator(tid("login-error")).waitFor();
  seen.loginError = (await page.textContent(tid("login-error"))).trim();
  await page.fill(tid("login-token"), ADMIN_TOKEN);
  await Promise.all([page.waitForURL(`${BASE_URL}/admin`), page.click(tid("login-submit"))]);
  check(await page.locator(tid("rooms-empty")).isVisible(), "the rooms page does not say there are no rooms");
  const cookies = await ctx.cookies();
  seen.sessionCookie = cookies.find((c) => c.name === "wr_admin") ?? null;
  log("signed in");

  // Create, with a bad capacity first: the inline message while typing (the
  // script asks the server's checks), then the same from the server on submit.
  await Promise.all([page.waitForURL(`${BASE_URL}/admin/create`), page.click(tid("new-room"))]);
  await page.fill(tid("field-room"), ROOM);
  await page.fill(tid("field-capacity"), "0");
  await page.locator(`${tid("error-capacity")}:not([hidden])`).waitFor({ timeout: WAIT_MS });
  seen.typingError = (await page.textContent(tid("error-capacity"))).trim();
  await page.click(tid("save-room"));
  await page.locator(`${tid("error-capacity")}:not([hidden])`).waitFor();
  seen.submitError = (await page.textContent(tid("error-capacity"))).trim();
  seen.submitStatusPath = new URL(page.url()).pathname;
  await page.fill(tid("field-capacity"), "1000");
  await page.fill(tid("field-batch_size"), "1");
  await page.fill(tid("field-batch_interval_ms"), "500");
  await page.fill(tid("field-abandon_after_s"), "600");
  await page.fill(tid("field-title"), "Flash sale");
  // Structured inputs: a tier added before the open-ended one, the first
  // removed; the end as a UTC date and time.
  const rows = page.locator(`[data-tier-rows] ${tid("tier-row")}`);
  seen.tierRowsAtStart = await rows.count();
  await page.click(tid("tier-add"));
  await rows.nth(2).locator(tid("tier-max")).fill("2000");
  await rows.nth(2).locator(tid("tier-interval")).fill("4000");
  await rows.nth(0).locator(tid("tier-remove")).click();
  await page.fill(tid("field-ends_at"), "2031-02-03T04:05");
  await page.screenshot({ path: join(OUT_DIR, "admin-form-en.png"), fullPage: true });
  await Promise.all([page.waitForURL(`${BASE_URL}/admin/rooms/${ROOM}`), page.click(tid("save-room"))]);
  log("room created");

  // Live over WebSocket, charts drawn.
  await page.locator(`${tid("live-status")}[data-mode="ws"]`).waitFor({ timeout: WAIT_MS });
  seen.liveText = (await page.textContent(tid("live-status"))).trim();
  const roomDoc = seen.samples.length ? seen.samples[seen.samples.length - 1].doc : null;
  ready({ room: ROOM });

  // The Go side enters visitors: the line grows, entries show.
  seen.waitingSeen = await waitValue(page, "stat-waiting", (v) => v !== null && v >= 30, "visitors enter");
  seen.entriesSeen = await waitValue(page, "stat-entry-rate", (v) => v !== null && v > 0, "entry rate");
  // The admitted rate settles at the pace: 1 every 500 ms.
  const before = await waitSteady(page, "stat-admitted-rate", (v) => v !== null && v >= 1 && v <= 3, HOLD_MS, "admitted rate at 2/s");
  seen.ratesBefore = before.values;
  log(`waiting ${seen.waitingSeen}, entries/s ${seen.entriesSeen}, admitted/s ${before.values.join(" ")}`);

  // Change the pace: 5 every 500 ms.
  await page.fill(tid("control-batch_size"), "5");
  const changedAt = Date.now();
  await page.click(tid("control-pace-submit"));
  await page.locator(`${tid("control-status")}:not([hidden])`).waitFor();
  seen.controlStatus = (await page.textContent(tid("control-status"))).trim();
  const after = await waitSteady(page, "stat-admitted-rate", (v) => v !== null && v >= 7 && v <= 13, HOLD_MS, "admitted rate at 10/s");
  seen.ratesAfter = after.values;
  seen.followMs = after.since - changedAt;
  log(`admitted/s ${after.values.join(" ")}, steady from ${seen.followMs} ms after the change`);

  // A post without the CSRF token, and with a wrong one, is refused.
  seen.csrf = await page.evaluate(async (room) => {
    const out = [];
    for (const header of [null, "wrong-token"]) {
      const headers = { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" };
      if (header) headers["X-CSRF-Token"] = header;
      const res = await fetch(`/admin/rooms/${room}/controls`, { method: "POST", headers, body: "paused=true" });
      out.push({ header, status: res.status, body: await res.json().catch(() => null) });
    }
    return out;
  }, ROOM);
  seen.stateAfterCSRF = (await page.textContent(tid("stat-state"))).trim();

  seen.chartPoints = Number(await page.getAttribute(tid("chart-counts"), "data-points"));
  seen.canvases = await page.locator(".chart canvas").count();
  seen.sameDocument = roomDoc !== null && seen.samples.filter((s) => s.path === `/admin/rooms/${ROOM}`).every((s) => s.doc === roomDoc);
  seen.modes = [...new Set(seen.samples.map((s) => s.mode))];
  seen.waitingValues = [...new Set(seen.samples.filter((s) => s.doc === roomDoc).map((s) => Number(s.waiting)))];

  await page.screenshot({ path: join(OUT_DIR, "admin-room-en.png"), fullPage: true });
  await page.goto(`${BASE_URL}/admin/rooms/${ROOM}?lang=ko`);
  await page.locator(`${tid("live-status")}[data-mode="ws"]`).waitFor({ timeout: WAIT_MS });
  seen.koHeading = (await page.textContent(tid("room-heading"))).trim();
  seen.koLive = (await page.textContent(tid("live-status"))).trim();
  await page.screenshot({ path: join(OUT_DIR, "admin-room-ko.png"), fullPage: true });
  await page.goto(`${BASE_URL}/admin/rooms/${ROOM}/edit`);
  seen.koTierLabel = (await page.locator(`${tid("field-tiers")} legend`).textContent()).trim();
  await page.screenshot({ path: join(OUT_DIR, "admin-form-ko.png"), fullPage: true });
  await page.goto(`${BASE_URL}/admin`);
  seen.koRowState = (await page.textContent(`${tid("room-row")}[data-room="${ROOM}"] [data-field="state"]`)).trim();
  await page.screenshot({ path: join(OUT_DIR, "admin-rooms-ko.png"), fullPage: true });

  await ctx.close();
  const { samples, ...rest } = seen;
  return { ...rest, samples: samples.length };
}

function ready(obj) {
  console.log("READY " + JSON.stringify(obj));
}

let browser = null;
const seen = {};
const fail = async (err) => {
  const msg = String(err && err.message ? err.message : err).replace(/\x1b\[[0-9;]*m/g, "");
  console.error(`FAIL admin: ${msg}`);
  const { samples, ...rest } = seen;
  console.error(`SEEN ${JSON.stringify({ ...rest, lastSamples: (samples ?? []).slice(-5) })}`);
  if (browser) {
    let i = 0;
    for (const c of browser.contexts()) {
      for (const p of c.pages()) {
        const file = join(OUT_DIR, `failure-admin-${i++}.png`);
        await p.screenshot({ path: file, fullPage: true, timeout: 5_000 }).catch(() => {});
        console.error(`FAIL admin: screenshot of ${p.url()} in ${file}`);
      }
    }
    await browser.close().catch(() => {});
  }
  process.exit(1);
};
const timer = setTimeout(() => fail(new Error(`scenario took longer than ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
process.on("SIGTERM", () => fail(new Error("stopped by the test (SIGTERM)")));
try {
  browser = await openBrowser(WAIT_MS);
  log(`chromium ${browser.version()}`);
  const result = await main(browser, seen);
  clearTimeout(timer);
  await browser.close();
  console.log("RESULT " + JSON.stringify(result));
  process.exit(0);
} catch (err) {
  clearTimeout(timer);
  await fail(err);
}
