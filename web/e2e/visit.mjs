// A visitor's whole way: open the waiting page, see the place in line fall,
// get admitted, wait out the jitter and land on the demo checkout.
//
// The room starts paused so the page can settle on its transport first:
// READY says the connection indicator shows EXPECT_TRANSPORT (ws, sse or
// poll, depending on what the Go side's fake proxy blocks), and the Go side
// then opens the room. RESULT holds everything seen, for the Go side to judge.

import {
  BASE_URL,
  ROOM,
  check,
  log,
  need,
  number,
  outPath,
  ready,
  record,
  run,
  waitShown,
  watchRequests,
} from "./lib.mjs";

const EXPECT = need("EXPECT_TRANSPORT");
check(["ws", "sse", "poll"].includes(EXPECT), `EXPECT_TRANSPORT=${EXPECT}: want ws, sse or poll`);

/** dedupe drops repeats in a row. */
function dedupe(xs) {
  return xs.filter((x, i) => i === 0 || x !== xs[i - 1]);
}

await run(async (browser, seen) => {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: "en-US" });
  const page = await context.newPage();
  const events = await record(page);
  const requests = [];
  watchRequests(page, requests);
  const shopResponses = [];
  const httpErrors = [];
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (r.status() >= 400) httpErrors.push(`${r.status()} ${r.request().method()} ${u.pathname}`);
    if (u.pathname === "/shop") {
      shopResponses.push({ t: Date.now(), withCode: u.searchParams.has("wr_code"), status: r.status() });
    }
  });
  const pageErrors = [];
  page.on("pageerror", (e) => {
    pageErrors.push(String(e));
    log("page error:", String(e));
  });
  page.on("console", (m) => log(`console.${m.type()}: ${m.text()} (${m.location().url || page.url()})`));
  Object.assign(seen, { events, shopResponses, httpErrors, pageErrors });

  const res = await page.goto(`${BASE_URL}/rooms/${ROOM}`, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET /rooms/${ROOM} answered ${res && res.status()}`);
  const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
  check(ticket, "the waiting page has no data-ticket");
  // When the page was rendered, and when its first byte and its script came:
  // the client takes server time minus the clock at script time for skew.
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const at = (ms) => Math.round(performance.timeOrigin + ms);
    return {
      serverNow: Date.parse(document.querySelector("[data-waitroom]").dataset.serverNow),
      responseStart: at(nav.responseStart),
      domInteractive: at(nav.domInteractive),
    };
  });

  await waitShown(page, `[data-testid="connection"][data-mode="${EXPECT}"]`, `the connection indicator saying ${EXPECT}`);
  const connection = page.locator('[data-testid="connection"]');
  const connText = (await connection.textContent()).trim();
  const position = number(await page.locator('[data-testid="position"]').textContent());
  log(`on ${EXPECT} ("${connText}"), ticket ${ticket} at place ${position}`);
  ready({ ticket, position, mode: EXPECT, connText });

  // The Go side opens the room now. The checkout is two navigations away
  // (the redirect with the hand-off code wr_code, then /shop), and the wait spans both.
  await waitShown(page, '[data-testid="shop"][data-status="checkout"]', "the demo checkout");
  log(`at checkout: ${page.url()}`);
  await page.screenshot({ path: outPath(`checkout-${EXPECT}.png`), fullPage: true });

  const onRoom = events.filter((e) => e.path === `/rooms/${ROOM}`);
  const waiting = onRoom.filter((e) => e.state === "waiting");
  const admitted = onRoom.filter((e) => e.state === "admitted");
  const codeRequest = requests.find((r) => new URL(r.url).searchParams.has("wr_code"));
  const tokenInURL = requests.some((r) => new URL(r.url).searchParams.has("wr_token"));
  const cookies = await context.cookies(`${BASE_URL}/shop`); // the shop's cookie has Path=/shop
  const shopCookie = cookies.find((c) => c.name === "shop_token");
  return {
    ticket,
    position,
    connText,
    timing,
    positions: dedupe(waiting.map((e) => number(e.position))),
    modes: dedupe(onRoom.map((e) => e.mode)),
    connTexts: dedupe(onRoom.map((e) => e.connText)),
    countdowns: dedupe(admitted.map((e) => e.countdown)),
    admittedAt: admitted.length ? admitted[0].t : null,
    navAt: codeRequest ? codeRequest.t : null,
    wrCode: codeRequest ? new URL(codeRequest.url).searchParams.get("wr_code") : null,
    tokenInURL,
    shopToken: shopCookie ? shopCookie.value : null,
    shopResponses,
    httpErrors,
    finalURL: page.url(),
    foreign: requests.filter((r) => r.foreign).map((r) => r.url),
    pageErrors,
  };
});
