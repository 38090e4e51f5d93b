// The shopper pages' live behaviour that issue 14 asks for, in one browser:
//
//   progress  ROOM (paused, two ahead): the bar starts empty at #3; the
//             operator opens with capacity 2, the two ahead are admitted,
//             and the bar shows the share passed since entry, live.
//   soldout   SOLD_ROOM (sold out when the visitor comes): the sold out page
//             without a ticket; the operator undoes it and the same page,
//             without a reload, shows the visitor's new place, live.
//   draw      DRAW_ROOM (random, paused, one other): the draw shows the live
//             indicator, says so when the connection drops and comes back,
//             and lets the visitor leave the line.
//
// Screenshots go to OUT_DIR as shopper-<step>.png. RESULT holds the facts.

import { BASE_URL, LIVE, ROOM, admin, check, log, need, number, outPath, q, run, waitShown } from "./lib.mjs";

need("ADMIN_TOKEN"); // the admin API drives the rooms: say at once when it is missing
const SOLD_ROOM = need("SOLD_ROOM");
const DRAW_ROOM = need("DRAW_ROOM");

async function visible(page, testid, what) {
  try {
    await page.locator(q(testid)).first().waitFor({ state: "visible", timeout: 20_000 });
  } catch {
    throw new Error(`${what}: ${q(testid)} not visible within 20 s; page is at ${page.url()}`);
  }
}

/** visit opens a page in a fresh context, counting its document loads of path. */
async function visit(browser, lang, path, pageErrors) {
  const context = await browser.newContext({ locale: lang, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  page.on("pageerror", (e) => pageErrors.push(`${path}: ${e}`));
  const loads = { n: 0 };
  page.on("request", (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) loads.n++;
  });
  const res = await page.goto(`${BASE_URL}${path}`, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET ${path} answered ${res && res.status()}`);
  return { context, page, loads };
}

const shot = (page, name) => page.screenshot({ path: outPath(`shopper-${name}.png`), fullPage: true });

await run(async (browser, seen) => {
  const pageErrors = [];
  Object.assign(seen, { pageErrors });

  // Progress since entry.
  const progress = {};
  {
    const { context, page, loads } = await visit(browser, "en", `/rooms/${ROOM}?lang=en`, pageErrors);
    await waitShown(page, LIVE, "the waiting page going live");
    progress.startPosition = number(await page.locator(q("position")).textContent());
    progress.startValue = Number(await page.locator(q("progress")).getAttribute("value"));
    await admin("PUT", `/rooms/${ROOM}`, { ...(await admin("GET", `/rooms/${ROOM}`)), paused: false, capacity: 2 });
    await page.waitForFunction((sel) => /^\D*1\D*$/.test(document.querySelector(sel).textContent), q("position"), { timeout: 20_000 });
    progress.position = number(await page.locator(q("position")).textContent());
    progress.value = Number(await page.locator(q("progress")).getAttribute("value"));
    progress.text = (await page.locator(q("progress")).textContent()).trim();
    progress.entry = await page.evaluate((room) => {
      const main = document.querySelector("[data-waitroom]");
      return Number(sessionStorage.getItem(`waitroom:entry:${room}:${main.dataset.ticket}`));
    }, ROOM);
    progress.loads = loads.n;
    await shot(page, "progress");
    log(`progress: #${progress.startPosition} at ${progress.startValue}%, then #${progress.position} at ${progress.value}%`);
    await context.close();
  }

  // Sold out when the visitor came, then undone.
  const soldOut = {};
  {
    const { context, page, loads } = await visit(browser, "ko", `/rooms/${SOLD_ROOM}?lang=ko`, pageErrors);
    await visible(page, "sold_out", "the sold out page for a newcomer");
    soldOut.ticketBefore = (await page.locator("[data-waitroom]").getAttribute("data-ticket")) ?? "";
    soldOut.message = (await page.locator(q("sold-out-message")).textContent()).trim();
    await shot(page, "sold-out-newcomer");
    // The page is asking: wait for one ask to have gone out before undoing, so undo is what it hears.
    await page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith(`/api/rooms/${SOLD_ROOM}/enter`), { timeout: 20_000 });
    const at = Date.now();
    await admin("POST", `/rooms/${SOLD_ROOM}/sold-out`, { sold_out: false });
    await visible(page, "waiting", "the line after undo, without a reload");
    await waitShown(page, LIVE, "the page following its new place");
    soldOut.shownMs = Date.now() - at;
    soldOut.ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
    soldOut.position = number(await page.locator(q("position")).textContent());
    soldOut.soldOutHidden = await page.locator(q("sold_out")).isHidden();
    soldOut.loads = loads.n;
    await shot(page, "sold-out-undone");
    log(`sold out undone: the newcomer is at #${soldOut.position} ${soldOut.shownMs} ms later, ${loads.n} page load(s)`);
    await context.close();
  }

  // The draw: live indicator, reconnecting, leave.
  const draw = {};
  {
    const context = await browser.newContext({ locale: "en", viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(`draw: ${e}`));
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
    await page.goto(`${BASE_URL}/rooms/${DRAW_ROOM}?lang=en`, { waitUntil: "domcontentloaded" });
    await visible(page, "draw", "the draw");
    await waitShown(page, LIVE, "the draw going live");
    draw.indicatorVisible = await page.locator(q("connection")).isVisible();
    draw.ring = await page.evaluate(() => getComputedStyle(document.querySelector('[data-testid="connection"] .conn-dot'), "::after").animationName);
    draw.leaveVisible = await page.locator(q("leave")).isVisible();
    draw.ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
    await shot(page, "draw-live");

    cutOff = true;
    await context.setOffline(true);
    for (const ws of sockets.splice(0)) await ws.close();
    await waitShown(page, `${q("connection")}[data-mode="reconnecting"]`, "the draw reconnecting");
    await visible(page, "draw-reconnecting", "the draw's reconnecting banner");
    draw.stale = await page.evaluate(() => document.querySelector('[data-testid="draw"]').hasAttribute("data-stale"));
    await shot(page, "draw-reconnecting");
    cutOff = false;
    await context.setOffline(false);
    await waitShown(page, LIVE, "the draw live again");
    draw.bannerGone = await page.locator(q("draw-reconnecting")).isHidden();
    draw.staleAfter = await page.evaluate(() => document.querySelector('[data-testid="draw"]').hasAttribute("data-stale"));

    await page.locator(q("leave")).click();
    await visible(page, "leave-confirm", "the leave confirmation in the draw");
    draw.focused = await page.evaluate(() => document.activeElement?.dataset.testid ?? null);
    await page.locator(q("leave-yes")).click();
    await visible(page, "left", "the left state after leaving the draw");
    draw.drawHidden = await page.locator(q("draw")).isHidden();
    draw.statusHidden = await page.locator(q("live-status")).isHidden();
    await shot(page, "draw-left");
    log(`draw: live ${draw.indicatorVisible}, left ticket ${draw.ticket}`);
    await context.close();
  }

  return { progress, soldOut, draw, pageErrors };
});
