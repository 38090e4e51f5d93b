// The embed of a sold out sale: the shop's frame shows the sold out page
// with no place; once the Go side (after READY) undoes it, the same frame,
// without a reload, shows the visitor's place and tells the shop.

import { check, log, ready, run } from "./lib.mjs";
import { SHOP_URL, WAITROOM, embedView, recordMessages, watchHosts } from "./embed-lib.mjs";

const q = (id) => `[data-testid="${id}"]`;

await run(async (browser, seen) => {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: "en-US" });
  const page = await context.newPage();
  const messages = await recordMessages(page);
  const foreign = [];
  watchHosts(page, foreign);
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  const frameLoads = [];
  page.on("request", (r) => {
    if (r.isNavigationRequest() && r.url().startsWith(`${WAITROOM}/embed/`)) frameLoads.push(r.url());
  });
  Object.assign(seen, { pageErrors, frameLoads });

  const res = await page.goto(SHOP_URL, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET ${SHOP_URL} answered ${res && res.status()}`);
  const frame = page.frameLocator('iframe[src*="/embed/rooms/"]');
  await frame.locator(q("sold_out")).waitFor({ state: "visible", timeout: 20_000 });
  const message = (await frame.locator(q("sold-out-message")).textContent()).trim();
  log(`the frame says sold out: ${message}`);
  ready({ message });

  await frame.locator(q("waiting")).waitFor({ state: "visible", timeout: 30_000 });
  await frame.locator(q("position")).filter({ hasText: /\d/ }).waitFor({ timeout: 20_000 });
  await frame.locator(`${q("connection")}:is([data-mode="ws"],[data-mode="sse"],[data-mode="poll"])`).waitFor({ state: "attached", timeout: 20_000 });
  const view = await embedView(page);
  const soldOutHidden = await frame.locator(q("sold_out")).isHidden();
  return {
    message,
    position: view.position,
    mode: view.mode,
    soldOutHidden,
    frameLoads,
    updates: messages
      .filter((m) => m.top && m.from === WAITROOM && m.data && m.data.type === "waitroom:update")
      .map((m) => ({ state: m.data.state, ticket: m.data.ticket, position: m.data.position })),
    foreign,
    pageErrors,
  };
});
