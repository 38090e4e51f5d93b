// Leaving the line from the shop's frame, by keyboard, in English and in
// Korean: "Leave the line" asks first (focus on "Yes"), "Stay in line"
// closes the question (focus back on the button), "Yes" gives the place up,
// shows "You left the line" and tells the shop; in English the visitor then
// joins again from the same frame, at the back.
//
// The Go side keeps the room paused, so the visitors wait.

import { check, log, run } from "./lib.mjs";
import { SHOP_URL, WAITROOM, recordMessages, watchHosts } from "./embed-lib.mjs";

const q = (id) => `[data-testid="${id}"]`;

/** focused is the data-testid of the element focused in frame. */
const focused = (frame) => frame.evaluate(() => document.activeElement?.dataset?.testid ?? document.activeElement?.tagName);

async function visitor(browser, locale, joinAgain, pageErrors, foreign) {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale });
  const page = await context.newPage();
  const messages = await recordMessages(page);
  watchHosts(page, foreign);
  page.on("pageerror", (e) => pageErrors.push(`${locale}: ${e}`));
  const res = await page.goto(SHOP_URL, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET ${SHOP_URL} answered ${res && res.status()}`);
  const fl = page.frameLocator('iframe[src*="/embed/rooms/"]');
  await fl.locator(q("waiting")).waitFor({ state: "visible", timeout: 30_000 });
  await fl.locator(q("position")).filter({ hasText: /\d/ }).waitFor({ timeout: 20_000 });
  await fl.locator(q("leave")).waitFor({ state: "visible", timeout: 20_000 });
  const frame = page.frames().find((f) => f.url().startsWith(WAITROOM + "/embed/"));
  const text = (id) => fl.locator(q(id)).innerText().then((s) => s.trim());
  const out = { locale, button: await text("leave") };

  // Keyboard only: Enter opens the question, Space on "Stay" closes it.
  await fl.locator(q("leave")).focus();
  await page.keyboard.press("Enter");
  await fl.locator(q("leave-confirm")).waitFor({ state: "visible", timeout: 5_000 });
  out.confirm = (await fl.locator(`${q("leave-confirm")} p`).first().innerText()).trim();
  out.yes = await text("leave-yes");
  out.no = await text("leave-no");
  out.focusAsked = await focused(frame);
  out.expandedAsked = await fl.locator(q("leave")).getAttribute("aria-expanded");
  await fl.locator(q("leave-no")).focus();
  await page.keyboard.press("Space");
  await fl.locator(q("leave-confirm")).waitFor({ state: "hidden", timeout: 5_000 });
  out.focusStayed = await focused(frame);

  await page.keyboard.press("Enter"); // on "Leave the line" again
  await fl.locator(q("leave-yes")).waitFor({ state: "visible", timeout: 5_000 });
  await page.keyboard.press("Enter"); // "Yes", which has the focus
  await fl.locator(q("left")).waitFor({ state: "visible", timeout: 20_000 });
  out.leftHeading = (await fl.locator(`${q("left")} h2`).innerText()).trim();
  out.again = await text("join-again");
  out.focusLeft = await frame.evaluate(() => document.activeElement?.closest("[data-testid]")?.dataset.testid);
  out.waitingHidden = await fl.locator(q("waiting")).isHidden();
  out.statusHidden = await fl.locator(q("live-status")).isHidden();
  const left = await messages.waitFor((m) => m.top && m.from === WAITROOM && m.data?.type === "waitroom:left", "waitroom:left");
  out.leftMessage = left.data.type;
  log(`${locale}: left the line`);

  if (joinAgain) {
    await fl.locator(q("join-again")).focus();
    await page.keyboard.press("Enter");
    await fl.locator(q("waiting")).waitFor({ state: "visible", timeout: 30_000 });
    await fl.locator(q("position")).filter({ hasText: /\d/ }).waitFor({ timeout: 20_000 });
    out.leftHiddenAgain = await fl.locator(q("left")).isHidden();
    out.confirmHiddenAgain = await fl.locator(q("leave-confirm")).isHidden();
    out.leaveShownAgain = await fl.locator(q("leave")).isVisible();
    const ups = messages.filter((m) => m.top && m.from === WAITROOM && m.data?.type === "waitroom:update");
    out.tickets = [...new Set(ups.map((m) => m.data.ticket).filter(Boolean))];
    log(`${locale}: joined again`);
  }
  await context.close();
  return out;
}

await run(async (browser, seen) => {
  const pageErrors = [];
  const foreign = [];
  Object.assign(seen, { pageErrors, foreign });
  const en = await visitor(browser, "en-US", true, pageErrors, foreign);
  seen.en = en;
  const ko = await visitor(browser, "ko-KR", false, pageErrors, foreign);
  return { en, ko, pageErrors, foreign };
});
