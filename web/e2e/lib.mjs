// Shared parts of the browser scripts. Plain ESM so they run with node and no
// build step. A Go test (internal/e2e/browser_test.go) starts the server and runs a
// script; the script talks back on stdout:
//
//   READY {json}   a point the Go side waits for (e.g. to open the room)
//   RESULT {json}  the last line: what was seen, for the Go side to judge
//
// Anything else on stdout or stderr is log. Failure: a FAIL line on stderr
// and exit status 1.

import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openBrowser } from "./browser.mjs";

export { ARGS, CHROMIUM } from "./browser.mjs";

/** need reads a required environment variable. */
export function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`environment variable ${name} is not set`);
  return v;
}

export const BASE_URL = need("BASE_URL").replace(/\/$/, "");
export const ROOM = process.env.ROOM || "demo";
export const OUT_DIR = process.env.OUT_DIR || "test-output/browser";
export const SCENARIO = process.env.SCENARIO || "browser";
/** Overall budget; the Go side kills us a little later, so we fail first, with a message. */
export const TIMEOUT_MS = Number(process.env.TIMEOUT_MS) || 45_000;
/** Budget for one wait. */
export const WAIT_MS = Number(process.env.WAIT_MS) || 30_000;

const started = Date.now();

/** log prints a line with the seconds since start; the Go side logs it. */
export function log(...args) {
  console.log(`[${((Date.now() - started) / 1000).toFixed(2)}s]`, ...args);
}

export function ready(obj) {
  console.log("READY " + JSON.stringify(obj));
}

/** check throws with msg unless cond holds. */
export function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

/** number reads "1,234" or "1234" as 1234; null when there are no digits. */
export function number(text) {
  const digits = String(text ?? "").replace(/[^\d]/g, "");
  return digits ? Number(digits) : null;
}

/** launch gives the script Debian's Chromium, headless: the shared one where the test runs one. */
export async function launch() {
  return openBrowser(WAIT_MS);
}

/**
 * watchRequests fails the run on any request to a host that is not the
 * server under test: the tests stay on loopback.
 */
export function watchRequests(page, into) {
  const allowed = new URL(BASE_URL).host;
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.protocol === "data:" || u.protocol === "blob:" || u.protocol === "about:") return;
    into.push({ t: Date.now(), method: r.method(), url: r.url(), foreign: u.host !== allowed });
  });
}

/**
 * record installs, in every document the page loads, an observer that sends a
 * snapshot of what the visitor sees each time it changes: which block shows,
 * the place in line, the connection indicator, the countdown, the shop status.
 * Snapshots go straight to node through a binding, so nothing is lost when the
 * page navigates away and nothing depends on how often we look.
 */
export async function record(page) {
  const events = [];
  await page.exposeBinding("__wrRecord", (_source, ev) => {
    events.push(ev);
  });
  await page.addInitScript(() => {
    let last = "";
    let loaded = false;
    const q = (id) => document.querySelector(`[data-testid="${id}"]`);
    const snap = () => {
      if (!loaded) return;
      const main = document.querySelector("[data-waitroom]");
      const conn = q("connection");
      const blocks = ["waiting", "admitted", "expired", "closed", "bypassed"];
      const s = {
        path: location.pathname,
        ticket: main ? main.dataset.ticket : null,
        state: blocks.find((b) => q(b) && !q(b).hidden) || null,
        position: q("position") ? q("position").textContent.trim() : null,
        mode: conn ? conn.dataset.mode : null,
        connText: conn ? conn.textContent.trim() : null,
        countdown: q("countdown") ? q("countdown").textContent.trim() : null,
        shop: q("shop") ? q("shop").dataset.status : null,
      };
      const key = JSON.stringify(s);
      if (key === last) return;
      last = key;
      window.__wrRecord({ ...s, t: Date.now() });
    };
    new MutationObserver(snap).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
    document.addEventListener("DOMContentLoaded", () => {
      loaded = true;
      snap();
    });
  });
  return events;
}

/** waitShown waits until selector is on page, across navigations, failing with what was awaited. */
export async function waitShown(page, selector, what, timeout = WAIT_MS) {
  try {
    await page.locator(selector).first().waitFor({ state: "attached", timeout });
  } catch (e) {
    throw new Error(`${what}: not seen within ${timeout} ms (${selector}); page is at ${page.url()}`);
  }
}

mkdirSync(OUT_DIR, { recursive: true });

/** outPath names a file in OUT_DIR. */
export function outPath(name) {
  return join(OUT_DIR, name);
}

/**
 * run starts the browser, runs fn(browser, seen), prints RESULT and exits:
 * 0 when fn returned, 1 when it threw or the time ran out, with a FAIL line,
 * what fn put in seen so far, and a screenshot of every open page.
 */
export async function run(fn) {
  let browser = null;
  const seen = {};
  const fail = async (err) => {
    const msg = String(err && err.message ? err.message : err).replace(/\x1b\[[0-9;]*m/g, ""); // playwright colours its call log
    console.error(`FAIL ${SCENARIO}: ${msg}`);
    console.error(`SEEN ${JSON.stringify(seen)}`);
    if (browser) {
      let i = 0;
      for (const ctx of browser.contexts()) {
        for (const p of ctx.pages()) {
          const file = outPath(`failure-${SCENARIO}-${i++}.png`);
          try {
            await p.screenshot({ path: file, fullPage: true, timeout: 5_000 });
            console.error(`FAIL ${SCENARIO}: screenshot of ${p.url()} in ${file}`);
          } catch {
            // the page may be gone
          }
        }
      }
      await browser.close().catch(() => {});
    }
    process.exit(1);
  };
  // A failure screenshot from an earlier run would only mislead.
  for (const f of readdirSync(OUT_DIR, { withFileTypes: true })) {
    if (f.isFile() && f.name.startsWith(`failure-${SCENARIO}-`)) rmSync(join(OUT_DIR, f.name));
  }
  const timer = setTimeout(() => fail(new Error(`scenario took longer than ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  try {
    browser = await launch();
    log(`chromium ${browser.version()}${process.env.BROWSER_WS ? " (shared)" : ""}`);
    const result = await fn(browser, seen);
    clearTimeout(timer);
    console.log("RESULT " + JSON.stringify(result));
    await closeWithin(browser);
    process.exit(0);
  } catch (err) {
    clearTimeout(timer);
    await fail(err);
  }
}

/**
 * closeWithin closes a context or a browser, waiting at most ms. Once a
 * scenario has its result, a close that hangs must not fail it: the shared
 * Chromium under load has, rarely, never finished closing a context whose
 * page had gone on to checkout. What is left open ends with the browser.
 */
export async function closeWithin(what, ms = 10_000) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const closed = what.close().then(
    () => true,
    () => true,
  );
  if (!(await Promise.race([closed, late]))) log(`closing took longer than ${ms} ms: left to the browser`);
  clearTimeout(timer);
}

/** q selects an element by its data-testid. */
export const q = (id) => `[data-testid="${id}"]`;

/** LIVE is the connection indicator in any live mode. */
export const LIVE = `${q("connection")}:is([data-mode="ws"],[data-mode="sse"],[data-mode="poll"])`;

/** admin calls the admin API with ADMIN_TOKEN; the parsed answer, null when empty. */
export async function admin(method, path, body) {
  const res = await fetch(`${BASE_URL}/admin/api${path}`, {
    method,
    headers: { Authorization: `Bearer ${need("ADMIN_TOKEN")}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  check(res.ok, `${method} /admin/api${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
