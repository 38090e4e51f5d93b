// Shared parts of the embed scripts: three origins on loopback, what crosses
// between their windows, and a browser whose cookie settings we choose.
//
//   WAITROOM_URL  http://localhost:B, the waitroom (the frame's origin)
//   SHOP_URL      http://127.0.0.1:A, a shop in the room's allowed_embedders
//   FOREIGN_URL   http://127.0.0.1:C, a page that is not
//
// Both shop servers answer / with the example shop page (the SDK mounts the
// line) and /blank with an empty page for scripts to build on.

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { ARGS, CHROMIUM } from "./browser.mjs";
import { WAIT_MS, need } from "./lib.mjs";

export const WAITROOM_URL = need("WAITROOM_URL");
export const SHOP_URL = need("SHOP_URL");
export const FOREIGN_URL = need("FOREIGN_URL");
export const WAITROOM = new URL(WAITROOM_URL).origin;
export const SHOP = new URL(SHOP_URL).origin;
export const FOREIGN = new URL(FOREIGN_URL).origin;

/**
 * recordMessages records every postMessage any window of page receives: the
 * receiving window's origin (at), the sender's (from) and the data. The
 * listener is installed before any page script runs, so nothing is missed.
 */
export async function recordMessages(page) {
  const messages = [];
  const waiters = [];
  /** messages.waitFor resolves with the first message, recorded or to come, that pred accepts. */
  messages.waitFor = (pred, what) => {
    const m = messages.find(pred);
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: no such message within ${WAIT_MS} ms`)), WAIT_MS);
      waiters.push({ pred, resolve: (v) => (clearTimeout(timer), resolve(v)) });
    });
  };
  await page.exposeBinding("__wrMessage", (_source, m) => {
    messages.push(m);
    for (const w of waiters.splice(0)) {
      if (w.pred(m)) w.resolve(m);
      else waiters.push(w);
    }
  });
  await page.addInitScript(() => {
    window.addEventListener("message", (ev) => {
      let data = ev.data;
      try {
        data = JSON.parse(JSON.stringify(ev.data));
      } catch {
        data = String(ev.data);
      }
      window.__wrMessage({ at: location.origin, top: window.top === window, from: ev.origin, data, t: Date.now() });
    });
  });
  return messages;
}

/** recordDemo records the example shop's status line: its text and the token its promise resolved with. */
export async function recordDemo(page) {
  const seen = [];
  await page.exposeBinding("__wrDemo", (_source, s) => {
    seen.push(s);
  });
  await page.addInitScript(() => {
    if (window.top !== window) return;
    document.addEventListener("DOMContentLoaded", () => {
      const el = document.querySelector('[data-testid="demo-status"]');
      if (!el) return;
      const snap = () => window.__wrDemo({ text: el.textContent.trim(), token: el.dataset.token || null, t: Date.now() });
      new MutationObserver(snap).observe(el, { attributes: true, childList: true, characterData: true, subtree: true });
      snap();
    });
  });
  return seen;
}

/** watchHosts lists requests to anything but the three servers: the tests stay on loopback. */
export function watchHosts(page, into) {
  const ours = new Set([WAITROOM, SHOP, FOREIGN]);
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "ws:") {
      if (!ours.has(u.origin.replace(/^ws/, "http"))) into.push(r.url());
    }
  });
}

/** embedFrame finds the waitroom's frame in page, once it has one. */
export function embedFrame(page) {
  return page.frames().find((f) => f !== page.mainFrame() && f.url().startsWith(WAITROOM + "/embed/"));
}

/** waitEmbedLive waits for the embedded line to say it is live on a WebSocket. */
export async function waitEmbedLive(page, what) {
  const sel = 'iframe[src*="/embed/rooms/"]';
  try {
    await page
      .frameLocator(sel)
      .locator('[data-testid="connection"][data-mode="ws"]')
      .waitFor({ state: "attached", timeout: WAIT_MS });
  } catch {
    throw new Error(`${what}: the embedded line did not go live on a WebSocket within ${WAIT_MS} ms`);
  }
}

/** embedView reads what the embedded line shows. */
export async function embedView(page) {
  const f = embedFrame(page);
  return f.evaluate(() => {
    const q = (id) => document.querySelector(`[data-testid="${id}"]`);
    const blocks = ["connecting", "embed-error", "waiting", "admitted", "expired", "closed", "bypassed"];
    return {
      state: blocks.find((b) => q(b) && !q(b).hidden) || null,
      position: q("position") ? Number(q("position").textContent.replace(/[^\d]/g, "")) : null,
      mode: q("connection") ? q("connection").dataset.mode : null,
      contentHeight: document.body.getBoundingClientRect().height,
    };
  });
}

/** lastTicket is the ticket of the last update the top window heard from the waitroom. */
export function lastTicket(messages) {
  const ups = messages.filter((m) => m.top && m.from === WAITROOM && m.data && m.data.type === "waitroom:update");
  return ups.length ? ups[ups.length - 1].data : null;
}

/**
 * cookieProfile makes a Chromium profile whose cookie settings are what a
 * visitor chose: "thirdparty" blocks third-party cookies (Chromium still
 * takes partitioned ones), "blocked" also blocks every cookie of the
 * waitroom's site, partitioned or not, as Safari-like browsers do.
 */
export function cookieProfile(mode) {
  const dir = mkdtempSync(join(tmpdir(), "waitroom-embed-"));
  mkdirSync(join(dir, "Default"));
  const profile = { cookie_controls_mode: 1 };
  if (mode === "blocked") {
    profile.content_settings = { exceptions: { cookies: { [`${WAITROOM},*`]: { setting: 2 } } } };
  }
  writeFileSync(join(dir, "Default", "Preferences"), JSON.stringify({ profile }));
  return dir;
}

/** launchWithProfile starts a second Chromium on a profile dir; close() also removes the dir. */
export async function launchWithProfile(dir) {
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    timeout: WAIT_MS,
    locale: "en-US",
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
