// The embed during a scheduled opening: the shop's frame shows the
// pre-queue's countdown, then, when the opening comes, the place drawn for
// the visitor, pushed into the frame and told to the shop.
//
// The Go side makes the room with opens_at an hour ahead; once this script
// says READY (the countdown is counting in the frame) it moves the opening
// to a few seconds ahead, so the frame counts down to it and the admission
// loop draws at the opening itself.

import { check, log, ready, run } from "./lib.mjs";
import { SHOP_URL, WAITROOM, embedFrame, embedView, recordMessages, watchHosts } from "./embed-lib.mjs";

const q = (id) => `[data-testid="${id}"]`;

await run(async (browser, seen) => {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: "en-US" });
  const page = await context.newPage();
  const messages = await recordMessages(page);
  const foreign = [];
  watchHosts(page, foreign);
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  // Every text the frame's countdown shows, as it changes: the frame's
  // observer calls straight into node, so no change is missed between looks.
  const countdown = [];
  await page.exposeBinding("__wrCountdown", (_source, text) => {
    countdown.push({ text, t: Date.now() });
  });
  await page.addInitScript(() => {
    if (window.top === window) return;
    document.addEventListener("DOMContentLoaded", () => {
      const el = document.querySelector('[data-testid="opens-countdown"]');
      if (!el) return;
      let last = "";
      const snap = () => {
        const text = el.textContent.trim();
        if (text !== last) window.__wrCountdown((last = text));
      };
      new MutationObserver(snap).observe(el, { childList: true, characterData: true, subtree: true });
      snap();
    });
  });
  Object.assign(seen, { countdown, pageErrors });

  const res = await page.goto(SHOP_URL, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET ${SHOP_URL} answered ${res && res.status()}`);
  const frame = page.frameLocator('iframe[src*="/embed/rooms/"]');
  await frame.locator(q("scheduled")).waitFor({ state: "visible", timeout: 20_000 });
  await frame.locator(`${q("connection")}[data-mode="ws"]`).waitFor({ state: "attached", timeout: 20_000 }).catch(() => {});
  // Counting: wait for the text to change by itself once.
  const first = (await frame.locator(q("opens-countdown")).textContent()).trim();
  await frame.locator(q("opens-countdown")).filter({ hasNotText: first }).waitFor({ timeout: 5_000 });
  const unknown = (await frame.locator(q("scheduled-position")).textContent()).trim();
  const waitingHidden = await frame.locator(q("waiting")).isHidden();
  log(`the frame counts down: ${first}`);
  ready({ first });

  // The opening moves to a few seconds ahead: the count reaches it, the place is drawn.
  await frame.locator(q("waiting")).waitFor({ state: "visible", timeout: 30_000 });
  await frame.locator(`${q("position")}`).filter({ hasText: /\d/ }).waitFor({ timeout: 20_000 });
  const view = await embedView(page);
  const scheduledHidden = await frame.locator(q("scheduled")).isHidden();
  const frameURL = embedFrame(page).url();
  log(`drawn: place ${view.position}, countdown seen ${JSON.stringify(countdown.map((c) => c.text))}`);
  return {
    first,
    unknown,
    waitingHidden,
    countdown,
    position: view.position,
    scheduledHidden,
    frameURL,
    updates: messages
      .filter((m) => m.top && m.from === WAITROOM && m.data && m.data.type === "waitroom:update")
      .map((m) => ({ state: m.data.state, position: m.data.position, t: m.t })),
    foreign,
    pageErrors,
  };
});
