// Every state of the waiting page and the accept page, checked with axe-core
// in each language at a phone (390x844) and a desktop (1280x800) viewport,
// with a screenshot of each into SHOT_DIR as <state>-<lang>-<viewport>.png.
// It drives the room itself through the admin API (ADMIN_TOKEN): paused,
// open but slow, fast with a long jitter, degraded on and off. Along the way
// it checks what the issue asks of each state: the live ring, the
// reconnecting banner and its recovery, leaving, no early "Continue", the
// accept page's recovery. RESULT holds the findings for the Go side.
//
// Rooms the Go side sets up: ROOM (paused, others ahead), CHECKING_ROOM
// (proof of work on), CLOSED_ROOM (ends_at passed) and SCHEDULED_ROOM
// (opens_at ahead: the pre-queue); for the queueing methods DRAW_ROOM
// (random, paused), MAINT_ROOM (reject), FULL_ROOM (max_waiting reached)
// and SOLD_ROOM (paused, sold out and undone here); for the embed
// FRAMED_ROOM (paused) and FRAMED_SCHEDULED_ROOM (opens_at ahead), both
// framed by BASE_URL's own origin, where a page made up here holds the frame.

import { readFileSync } from "node:fs";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { BASE_URL, LIVE, ROOM, admin, check, log, need, q, run, waitShown } from "./lib.mjs";

need("ADMIN_TOKEN"); // the admin API drives the rooms: say at once when it is missing
const CHECKING_ROOM = need("CHECKING_ROOM");
const CLOSED_ROOM = need("CLOSED_ROOM");
const DRAW_ROOM = need("DRAW_ROOM");
const MAINT_ROOM = need("MAINT_ROOM");
const FULL_ROOM = need("FULL_ROOM");
const SOLD_ROOM = need("SOLD_ROOM");
const SCHEDULED_ROOM = need("SCHEDULED_ROOM");
const FRAMED_ROOM = need("FRAMED_ROOM");
const FRAMED_SCHEDULED_ROOM = need("FRAMED_SCHEDULED_ROOM");
const SHOT_DIR = need("SHOT_DIR");
const LANGS = (process.env.LANGS || "en,ko").split(",");
/** PART: "line" (the waiting page's states, sold out, degraded) or "more" (see more). */
const PART = process.env.PART || "line";
const VIEWPORTS = [
  { name: "mobile", viewport: { width: 390, height: 844 } },
  { name: "desktop", viewport: { width: 1280, height: 800 } },
];
mkdirSync(SHOT_DIR, { recursive: true });

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** room changes the room's settings through the admin API. */
async function room(change) {
  const s = await admin("GET", `/rooms/${ROOM}`);
  await admin("PUT", `/rooms/${ROOM}`, { ...s, ...change });
  log(`room ${ROOM}: ${JSON.stringify(change)}`);
}

/** visible waits until the element with testid is on the page and not hidden. */
async function visible(page, testid, what) {
  try {
    await page.locator(q(testid)).first().waitFor({ state: "visible", timeout: 20_000 });
  } catch {
    throw new Error(`${what}: ${q(testid)} not visible within 20 s; page is at ${page.url()}`);
  }
}

const results = []; // {state, lang, viewport, file, violations: [{id, impact, nodes: [target]}]}

/**
 * audit runs axe on the page as it is and saves a screenshot. The
 * animations are left running: axe and the screenshot see the page as a
 * visitor does.
 */
async function audit(page, state, lang, vp, target = page) {
  if (!(await target.evaluate(() => typeof window.axe === "object"))) await target.evaluate(AXE);
  const out = await target.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }));
  });
  const file = join(SHOT_DIR, `${state}-${lang}-${vp.name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  results.push({ state, lang, viewport: vp.name, file, violations: out });
  log(`${state}-${lang}-${vp.name}: ${out.length ? JSON.stringify(out) : "no violations"}`);
}

/** newPage opens a page for one visitor of the combination. */
async function newPage(browser, lang, vp, extra = {}) {
  const context = await browser.newContext({ viewport: vp.viewport, locale: lang, ...extra });
  const page = await context.newPage();
  page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}: ${e}`));
  return { context, page };
}

const pageErrors = [];

/** pageString reads one of the catalogue strings the page carries for its script. */
const pageString = (target, key) =>
  target.evaluate((k) => JSON.parse(document.getElementById("waitroom-strings").textContent)[k] ?? null, key);

/**
 * framed opens a made-up shop page on BASE_URL's origin (in the rooms'
 * allowed_embedders) that frames room's embed, and returns the frame once
 * its block testid shows.
 */
async function framed(page, room, lang, testid) {
  const origin = new URL(BASE_URL).origin;
  const src = `/embed/rooms/${room}?parent=${encodeURIComponent(origin)}&lang=${lang}`;
  await page.route(`${origin}/__shop/${room}`, (r) =>
    r.fulfill({
      contentType: "text/html; charset=utf-8",
      body: `<!DOCTYPE html><html lang="${lang}"><head><meta charset="utf-8"><title>Shop</title><link rel="icon" href="data:,"></head><body><main><iframe title="Waiting room" src="${src}" style="display:block;width:100%;height:640px;border:0"></iframe></main></body></html>`,
    }),
  );
  await page.goto(`${origin}/__shop/${room}`, { waitUntil: "domcontentloaded" });
  try {
    await page.frameLocator("iframe").locator(q(testid)).waitFor({ state: "visible", timeout: 20_000 });
  } catch {
    throw new Error(`the embed of ${room}: ${q(testid)} not visible within 20 s`);
  }
  return page.frames().find((f) => f.url().includes("/embed/rooms/"));
}

const combos = LANGS.flatMap((lang) => VIEWPORTS.map((vp) => ({ lang, vp })));

/**
 * more is PART=more: the states around the line, in a run of their own so
 * each run fits its budget on a loaded machine: the pre-queue after its
 * count (draw pending), the embed in a shop's frame (in line, pre-queue),
 * a room that does not exist, the page of a room without checkout, and the
 * accept page once the line is back.
 */
async function more(browser) {
  const facts = { drawPending: [], acceptRecovered: [] };
  for (const { lang, vp } of combos) {
    {
      // The count over, the draw not yet heard: the page's clock is moved
      // past the opening (the server's is not, so the draw never comes).
      const { context, page } = await newPage(browser, lang, vp);
      await page.clock.install({ time: new Date() });
      await page.goto(`${BASE_URL}/rooms/${SCHEDULED_ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "scheduled", "the pre-queue before the opening");
      const drawing = await pageString(page, "scheduled.drawing");
      await page.clock.fastForward(3 * 3600 * 1000);
      await page.locator(q("opens-countdown")).filter({ hasText: drawing }).waitFor({ timeout: 20_000 });
      facts.drawPending.push({ lang, viewport: vp.name, text: (await page.locator(q("opens-countdown")).textContent()).trim() });
      await audit(page, "draw-pending", lang, vp);
      await context.close();
    }
    {
      // The embed, in a shop's frame: in line, and in the pre-queue.
      const { context, page } = await newPage(browser, lang, vp);
      let frame = await framed(page, FRAMED_ROOM, lang, "waiting");
      await page.frameLocator("iframe").locator(LIVE).waitFor({ state: "attached", timeout: 20_000 });
      await audit(page, "embed", lang, vp, frame);
      frame = await framed(page, FRAMED_SCHEDULED_ROOM, lang, "scheduled");
      await audit(page, "embed-scheduled", lang, vp, frame);
      await context.close();
    }
    {
      // The pages around the line: a room that does not exist, and where a
      // room's default target_url leads until its operator sets one.
      const { context, page } = await newPage(browser, lang, vp);
      await page.goto(`${BASE_URL}/rooms/no-such-room?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "not-found", "the page of a room that does not exist");
      await audit(page, "not-found", lang, vp);
      await page.goto(`${BASE_URL}/checkout-not-configured?room=${ROOM}&lang=${lang}`, { waitUntil: "domcontentloaded" });
      await page.locator("main h1").first().waitFor({ state: "visible", timeout: 20_000 });
      await audit(page, "no-checkout", lang, vp);
      await context.close();
    }
    {
      // The accept page once the line is back: the notice, then the move to
      // the line, which answers 204 here so the page stays for the audit.
      const { context, page } = await newPage(browser, lang, vp);
      const toLine = (u) => new URL(u).pathname === `/rooms/${ROOM}`;
      await page.route((u) => toLine(u.href), (r) => r.fulfill({ status: 204 }));
      const moved = page.waitForRequest((r) => toLine(r.url()), { timeout: 20_000 });
      await page.goto(`${BASE_URL}/rooms/${ROOM}/accept?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "line-back", "the accept page's way back to the line");
      await page.locator(q("accept-recovered")).filter({ hasText: /\S/ }).waitFor({ timeout: 20_000 });
      const notice = (await page.locator(q("accept-recovered")).textContent()).trim();
      const expected = await pageString(page, "accept.recovered");
      await moved;
      facts.acceptRecovered.push({ lang, viewport: vp.name, notice, expected, moved: true });
      await audit(page, "accept-recovered", lang, vp);
      await context.close();
    }
  }
  return { results, facts, pageErrors };
}

await run(async (browser, seen) => {
  Object.assign(seen, { results, pageErrors });
  if (PART === "more") return more(browser);
  const facts = { reconnect: [], left: [], early: [] };

  // The room is paused: check, closed, the page before its script, paused
  // and live, reconnecting; the combinations side by side, each keeping one
  // live visitor for the later states.
  const open = await Promise.all(combos.map(async ({ lang, vp }) => {
    {
      const { context, page } = await newPage(browser, lang, vp);
      await page.route("**/challenge", () => {}); // held: the page stays on the checking step
      await page.goto(`${BASE_URL}/rooms/${CHECKING_ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "checking", "the checking step");
      await audit(page, "checking", lang, vp);
      await page.goto(`${BASE_URL}/rooms/${CLOSED_ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "closed", "the closed room");
      await audit(page, "closed", lang, vp);
      await page.goto(`${BASE_URL}/rooms/${SCHEDULED_ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, "scheduled", "the pre-queue before the opening");
      await audit(page, "scheduled", lang, vp);
      await context.close();
    }
    {
      // The page as the server renders it, before (or without) its script.
      const { context, page } = await newPage(browser, lang, vp);
      await page.route("**/waiting.*.js", (r) => r.abort());
      await page.route("**/waiting.js", (r) => r.abort());
      await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "load" });
      await visible(page, "waiting", "the server-rendered waiting page");
      await audit(page, "waiting", lang, vp);
      await context.close();
    }
    const { context, page } = await newPage(browser, lang, vp);
    // The WebSocket runs through playwright, so the test can cut it: going
    // offline alone leaves an open socket open.
    const sockets = [];
    let cutOff = false;
    await page.routeWebSocket(/\/ws$/, (ws) => {
      if (cutOff) {
        ws.close();
        return;
      }
      ws.connectToServer();
      sockets.push(ws);
    });
    await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
    await waitShown(page, LIVE, `the ${lang} page going live`);
    await visible(page, "paused-notice", "the paused notice");
    const ringStyle = () => {
      const after = getComputedStyle(document.querySelector('[data-testid="connection"] .conn-dot'), "::after");
      return { animation: after.animationName, opacity: after.opacity, border: after.borderTopStyle };
    };
    const ring = await page.evaluate(ringStyle);
    // Reduced motion: the ring stands still but stays, a clear "live" without movement.
    await page.emulateMedia({ reducedMotion: "reduce" });
    const stillRing = await page.evaluate(ringStyle);
    await page.emulateMedia({ reducedMotion: null });
    await audit(page, "paused", lang, vp);

    // Cut the network: the banner shows, the numbers are marked, and the page comes back by itself.
    cutOff = true;
    await context.setOffline(true); // and the event stream and polling with it
    for (const ws of sockets.splice(0)) await ws.close();
    await waitShown(page, `${q("connection")}[data-mode="reconnecting"]`, "the reconnecting state");
    await visible(page, "reconnecting", "the reconnecting banner");
    const stale = await page.evaluate(() => ({
      stale: document.querySelector('[data-testid="waiting"]').hasAttribute("data-stale"),
      tag: !document.querySelector('[data-testid="stale-tag"]').hidden,
      role: document.querySelector('[data-testid="reconnecting"]').getAttribute("role"),
    }));
    await audit(page, "reconnecting", lang, vp);
    const cut = Date.now();
    cutOff = false;
    await context.setOffline(false);
    await waitShown(page, LIVE, "live again after the network came back");
    const bannerGone = await page.locator(q("reconnecting")).isHidden();
    facts.reconnect.push({ lang, viewport: vp.name, ring, stillRing, ...stale, recoveredMs: Date.now() - cut, bannerGone });
    return { lang, vp, context, page }; // kept for the later states
  }));

  // Open but slow: nobody else moves for a minute. The live page without the paused notice.
  await room({ paused: false, batch_size: 1, batch_interval_ms: 60_000 });
  for (const { lang, vp, page } of open) {
    await page.locator(q("paused-notice")).waitFor({ state: "hidden", timeout: 20_000 });
    await waitShown(page, LIVE, "live");
    const since = await page.locator(q("entered-at")).textContent();
    // The bar and the place in one read: the line moves (one admission at the unpause).
    const { progress, ...place } = await page.evaluate((room) => {
      const main = document.querySelector("[data-waitroom]");
      const digits = (t) => Number(String(t).replace(/[^\d]/g, ""));
      return {
        progress: document.querySelector('[data-testid="progress"]').getAttribute("value"),
        position: digits(document.querySelector('[data-testid="position"]').textContent),
        entry: digits(sessionStorage.getItem(`waitroom:entry:${room}:${main.dataset.ticket}`)),
      };
    }, ROOM);
    await audit(page, "live", lang, vp);
    // Leave: it asks first, then the place is given up.
    await page.locator(q("leave")).click();
    await visible(page, "leave-confirm", "the leave confirmation");
    const focused = await page.evaluate(() => document.activeElement?.dataset.testid ?? null);
    await audit(page, "leave-confirm", lang, vp);
    const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
    await page.locator(q("leave-yes")).click();
    await visible(page, "left", "the left state");
    await audit(page, "left", lang, vp);
    const again = await page.locator(q("join-again")).getAttribute("href");
    facts.left.push({ lang, viewport: vp.name, ticket, since: since.trim(), progress: Number(progress), ...place, focused, again });
  }

  // Expired: a page whose ticket is gone (left from another tab).
  await Promise.all(open.map(async ({ lang, vp, context, page }) => {
    await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
    await waitShown(page, LIVE, "live after joining again");
    const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
    const res = await context.request.delete(`${BASE_URL}/api/rooms/${ROOM}/tickets/${ticket}`);
    check(res.status() === 204, `DELETE the ticket from another tab: ${res.status()}`);
    await visible(page, "expired", "the expired state");
    await audit(page, "expired", lang, vp);
    await context.close();
  }));

  // Fast, with a long jitter: admitted, a countdown, then "Continue". The
  // shop answers 204 so the page stays put after its turn starts.
  // The combinations wait for their turns side by side: the jitter is most
  // of this step's time.
  await room({ batch_size: 50, batch_interval_ms: 200, capacity: 1000, jitter_ms: 12_000 });
  const inLine = await Promise.all(combos.map(async ({ lang, vp }) => {
    const { context, page } = await newPage(browser, lang, vp);
    await page.route("**/shop**", (r) => r.fulfill({ status: 204 }));
    await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
    await visible(page, "admitted", "the admitted state");
    const goEarly = await page.locator(q("go")).isVisible();
    const countdown = (await page.locator(q("countdown")).textContent()).trim();
    await audit(page, "admitted-countdown", lang, vp);
    // Continue and the count, read in one turn of the page's script: on a
    // busy machine the audit can outlast what was left of the jitter, and
    // then the count has run out and Continue shows, as it should.
    const afterAudit = await page.evaluate(() => ({
      goHidden: document.querySelector('[data-testid="go"]').hidden,
      countdown: document.querySelector('[data-testid="countdown"]').textContent.trim(),
    }));
    await visible(page, "go", "the Continue button once the turn starts");
    await audit(page, "admitted", lang, vp);
    facts.early.push({ lang, viewport: vp.name, goEarly, countdown, afterAudit });
    await page.close();
    return { lang, vp, context }; // degraded mode takes requests only from visitors who were in line
  }));

  // Queueing methods, line full, sold out: each page audited; sold out is
  // pushed to an open page and undone, the place back.
  facts.soldOut = [];
  for (const { lang, vp } of combos) {
    const { context, page } = await newPage(browser, lang, vp);
    for (const [roomID, testid, state] of [
      [DRAW_ROOM, "draw", "draw"],
      [MAINT_ROOM, "maintenance", "maintenance"],
      [FULL_ROOM, "full", "full"],
    ]) {
      await page.goto(`${BASE_URL}/rooms/${roomID}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      await visible(page, testid, `the ${state} page`);
      await audit(page, state, lang, vp);
    }
    await page.goto(`${BASE_URL}/rooms/${SOLD_ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
    await waitShown(page, LIVE, `the ${lang} page in ${SOLD_ROOM} going live`);
    const before = await page.locator(q("position")).textContent();
    const at = Date.now();
    await admin("POST", `/rooms/${SOLD_ROOM}/sold-out`, { sold_out: true });
    await visible(page, "sold_out", "the sold out page, pushed");
    const shownMs = Date.now() - at;
    const message = (await page.locator(q("sold-out-message")).textContent()).trim();
    const live = await page.locator(LIVE).count(); // still connected: undo must reach it
    await audit(page, "sold-out", lang, vp);
    await admin("POST", `/rooms/${SOLD_ROOM}/sold-out`, { sold_out: false });
    await visible(page, "waiting", "the line back after undo");
    const after = await page.locator(q("position")).textContent();
    facts.soldOut.push({ lang, viewport: vp.name, shownMs, message, live, before, after });
    log(`sold out reached the ${lang} ${vp.name} page in ${shownMs} ms; undone, place ${before} -> ${after}`);
    await context.close();
  }

  // Degraded (a drill): the accept page, then the drill ends and the page goes back to the line.
  await admin("POST", "/degrade", { on: true });
  let recovery = null;
  for (const { lang, vp, context } of inLine) {
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}: ${e}`));
    await page.goto(`${BASE_URL}/rooms/${ROOM}/accept?lang=${lang}`, { waitUntil: "domcontentloaded" });
    await visible(page, "accept-form", "the accept form");
    const metaRefresh = await page.evaluate(() => document.querySelectorAll('meta[http-equiv="refresh" i]').length);
    await audit(page, "accept", lang, vp);
    await page.locator(q("accept-submit")).click();
    await page.waitForURL(/intent=/, { timeout: 20_000 });
    await visible(page, "intent", "the intent's progress");
    const intentMetaRefresh = await page.evaluate(() => document.querySelectorAll('meta[http-equiv="refresh" i]').length);
    await audit(page, "accept-intent", lang, vp);
    seen.meta = [...(seen.meta || []), { lang, viewport: vp.name, metaRefresh, intentMetaRefresh }];
    await page.close();
  }
  {
    const { context, page } = await newPage(browser, "en", VIEWPORTS[0]);
    await page.goto(`${BASE_URL}/rooms/${ROOM}/accept?lang=en`, { waitUntil: "domcontentloaded" });
    await visible(page, "accept-form", "the accept form");
    const off = Date.now();
    await admin("POST", "/degrade", { on: false });
    await page.waitForURL((u) => u.pathname === `/rooms/${ROOM}`, { timeout: 20_000 });
    recovery = { movedMs: Date.now() - off, url: page.url() };
    log(`the accept page went back to the line ${recovery.movedMs} ms after the drill ended`);
    await context.close();
  }
  await admin("POST", "/degrade", { on: null });

  return { results, facts, meta: seen.meta, recovery, pageErrors };
});
