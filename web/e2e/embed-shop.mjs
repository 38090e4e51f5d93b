// The example shop on one origin embeds the line from another: the frame
// goes live, its height follows its content, updates reach the shop by
// postMessage, and admission resolves the SDK's promise, after which the
// example shop takes the tab to checkout.
//
// The Go side keeps the room paused until READY, then opens it.

import { check, log, ready, run, waitShown } from "./lib.mjs";
import {
  SHOP_URL,
  WAITROOM,
  embedFrame,
  embedView,
  lastTicket,
  recordDemo,
  recordMessages,
  waitEmbedLive,
  watchHosts,
} from "./embed-lib.mjs";

await run(async (browser, seen) => {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: "en-US" });
  const page = await context.newPage();
  const messages = await recordMessages(page);
  const demo = await recordDemo(page);
  const foreign = [];
  watchHosts(page, foreign);
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => log(`console.${m.type()}: ${m.text()}`));
  const navigations = [];
  page.on("request", (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigations.push(r.url());
  });
  Object.assign(seen, { messages, demo, pageErrors });

  const res = await page.goto(SHOP_URL, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET ${SHOP_URL} answered ${res && res.status()}`);
  await waitEmbedLive(page, "the shop's embedded line");
  const view = await embedView(page);
  const frameHeight = await page.locator('iframe[src*="/embed/rooms/"]').evaluate((f) => f.getBoundingClientRect().height);
  const frameURL = embedFrame(page).url();
  const t = lastTicket(messages);
  check(t, "no waitroom:update reached the shop");
  log(`embedded: ticket ${t.ticket} at ${view.position}, frame ${frameHeight} px for ${view.contentHeight} px of content`);
  ready({ ticket: t.ticket, position: view.position });

  // The Go side opens the room: the place falls, the promise resolves, and
  // after orderable_at the shop goes to checkout with the token.
  await waitShown(page, '[data-testid="shop"][data-status="checkout"]', "the demo checkout after admission");
  return {
    ticket: t.ticket,
    position: view.position,
    frameURL,
    frameHeight,
    contentHeight: view.contentHeight,
    messages,
    demo,
    navigations,
    finalURL: page.url(),
    waitroom: WAITROOM,
    foreign,
    pageErrors,
  };
});
