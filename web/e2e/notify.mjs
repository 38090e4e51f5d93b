// The pages that say what happens next, in each language at a phone
// (390x844) and a desktop (1280x800) viewport, each state checked with
// axe-core and saved to SHOT_DIR as <state>-<lang>-<viewport>.png:
//
// - an opening two days away (FAR_ROOM), seen from Asia/Seoul and from
//   America/New_York: its date and time in the browser's zone;
// - "Tell me when it's my turn" offered in a draw (DRAW_ROOM, random) and
//   (NOTIFY_ROOMS, one paused room per
//   combination): offered on the long wait, pressed with the notification
//   permission granted, then the tab goes to the background (headless
//   Chromium keeps every page visible, so another page is brought to the
//   front and document.visibilityState is made "hidden"), the room opens,
//   and the notification is caught by wrapping window.Notification;
// - the admitted page that follows, with how long the turn is held.
//
// RESULT holds what was seen for the Go side to judge.

import { readFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { BASE_URL, LIVE, admin, check, log, need, q, run, waitShown } from "./lib.mjs";

need("ADMIN_TOKEN");
const FAR_ROOM = need("FAR_ROOM");
const DRAW_ROOM = need("DRAW_ROOM");
const NOTIFY_ROOMS = JSON.parse(need("NOTIFY_ROOMS")); // {"en-mobile": room, ...}
const SHOT_DIR = need("SHOT_DIR");
const LANGS = (process.env.LANGS || "en,ko").split(",");
const ZONES = [
  { name: "seoul", id: "Asia/Seoul" },
  { name: "new-york", id: "America/New_York" },
];
const VIEWPORTS = [
  { name: "mobile", viewport: { width: 390, height: 844 } },
  { name: "desktop", viewport: { width: 1280, height: 800 } },
];
mkdirSync(SHOT_DIR, { recursive: true });
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const results = []; // {state, lang, viewport, file, violations}
const pageErrors = [];

/** audit runs axe on the page as it is and saves a full-page screenshot. */
async function audit(page, state, lang, vp) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }));
  });
  const file = join(SHOT_DIR, `${state}-${lang}-${vp.name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  results.push({ state, lang, viewport: vp.name, file, violations });
  log(`${state}-${lang}-${vp.name}: ${violations.length ? JSON.stringify(violations) : "no violations"}`);
}

async function visible(page, testid, what) {
  try {
    await page.locator(q(testid)).first().waitFor({ state: "visible", timeout: 20_000 });
  } catch {
    throw new Error(`${what}: ${q(testid)} not visible within 20 s; page is at ${page.url()}`);
  }
}

/**
 * catchNotifications wraps window.Notification in every document of the
 * context: each construction goes to node (through a binding, so it
 * survives navigation) with what the page looked like at that moment, then
 * on to the browser's own. hideTab() makes the page report itself hidden.
 */
async function catchNotifications(context) {
  const notes = [];
  let heard = () => {};
  await context.exposeBinding("__wrNote", (_src, n) => {
    notes.push(n);
    heard();
  });
  await context.addInitScript(() => {
    const Real = window.Notification;
    let hidden = false;
    Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    Object.defineProperty(Document.prototype, "hidden", { configurable: true, get: () => hidden });
    window.__wrHideTab = () => {
      hidden = true;
      document.dispatchEvent(new Event("visibilitychange"));
    };
    if (typeof Real !== "function") return;
    function Wrapped(title, options = {}) {
      window.__wrNote({ title, body: options.body ?? "", lang: options.lang ?? "", tag: options.tag ?? "", visibility: document.visibilityState, docTitle: document.title });
      return new Real(title, options);
    }
    Object.defineProperty(Wrapped, "permission", { get: () => Real.permission });
    Wrapped.requestPermission = (...a) => Real.requestPermission(...a);
    Wrapped.prototype = Real.prototype;
    window.Notification = Wrapped;
  });
  return {
    notes,
    /** next resolves once a notification has been shown, or fails after ms. */
    next: (ms) =>
      new Promise((resolve, reject) => {
        if (notes.length > 0) return resolve();
        const timer = setTimeout(() => reject(new Error(`no notification within ${ms} ms`)), ms);
        heard = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
  };
}

const combos = LANGS.flatMap((lang) => VIEWPORTS.map((vp) => ({ lang, vp })));

await run(async (browser, seen) => {
  Object.assign(seen, { results, pageErrors });
  const facts = { opening: [], notify: [] };
  seen.facts = facts;
  for (const { lang, vp } of combos) {
    // The opening two days away, from two zones.
    for (const zone of ZONES) {
      const context = await browser.newContext({ viewport: vp.viewport, locale: lang, timezoneId: zone.id });
      const page = await context.newPage();
      page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}-${zone.name}: ${e}`));
      await page.goto(`${BASE_URL}/rooms/${FAR_ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "scheduled", "the pre-queue of the opening two days away");
      const body = page.locator(q("scheduled-body"));
      // The server writes UTC; the script rewrites it in the browser's zone.
      await body.filter({ hasNotText: "UTC" }).waitFor({ timeout: 20_000 });
      facts.opening.push({ lang, viewport: vp.name, zone: zone.id, body: (await body.textContent()).trim() });
      await audit(page, `opening-far-${zone.name}`, lang, vp);
      await context.close();
    }

    // In a draw (a random line) too: nobody knows when.
    {
      const context = await browser.newContext({ viewport: vp.viewport, locale: lang, permissions: ["notifications"] });
      const page = await context.newPage();
      page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}-draw: ${e}`));
      await page.goto(`${BASE_URL}/rooms/${DRAW_ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "draw", "the draw");
      await visible(page, "notify", "the notify option in the draw");
      await audit(page, "notify-draw", lang, vp);
      await context.close();
    }

    // Tell me when it's my turn.
    const room = NOTIFY_ROOMS[`${lang}-${vp.name}`];
    const context = await browser.newContext({ viewport: vp.viewport, locale: lang, permissions: ["notifications"] });
    const caught = await catchNotifications(context);
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}: ${e}`));
    await page.route("**/shop**", (r) => r.fulfill({ status: 204 })); // the page stays after its turn starts
    await page.goto(`${BASE_URL}/rooms/${room}?lang=${lang}`, { waitUntil: "domcontentloaded" });
    await waitShown(page, LIVE, `the ${lang} page in ${room} going live`);
    await visible(page, "notify", "the notify option on a long (paused) wait");
    const permission = await page.evaluate(() => Notification.permission);
    const pressedBefore = await page.locator(q("notify")).getAttribute("aria-pressed");
    await audit(page, "notify-offer", lang, vp);
    await page.locator(q("notify")).click();
    await page.locator(`${q("notify")}[aria-pressed="true"]`).waitFor({ timeout: 20_000 });
    const status = (await page.locator(q("notify-status")).textContent()).trim();
    const statusRole = await page.locator(q("notify-status")).getAttribute("role");
    const focused = await page.evaluate(() => document.activeElement?.dataset.testid ?? null);
    await audit(page, "notify-on", lang, vp);
    const titleWaiting = await page.title();

    // To the background: another page in front, and the tab hidden.
    const front = await context.newPage();
    await front.goto("about:blank");
    await front.bringToFront();
    await page.evaluate(() => window.__wrHideTab());
    const visibility = await page.evaluate(() => document.visibilityState);
    const opened = Date.now();
    await admin("PATCH", `/rooms/${room}`, { paused: false });
    await caught.next(20_000);
    const notifiedMs = Date.now() - opened;
    await visible(page, "admitted", "the admitted state after the notification");
    const title = await page.title();
    const held = (await page.locator(q("admitted-held")).textContent()).trim();
    log(`${lang} ${vp.name}: notified ${notifiedMs} ms after the room opened: ${JSON.stringify(caught.notes)}; title ${JSON.stringify(title)}`);
    await front.close();
    await page.bringToFront();
    await audit(page, "admitted-held", lang, vp);
    facts.notify.push({
      lang,
      viewport: vp.name,
      room,
      permission,
      pressedBefore,
      status,
      statusRole,
      focused,
      visibility,
      titleWaiting,
      title,
      held,
      notifiedMs,
      notes: caught.notes,
    });
    await context.close();
  }
  check(facts.notify.length === combos.length, `${facts.notify.length} notify runs, want ${combos.length}`);
  return { results, facts, pageErrors };
});
