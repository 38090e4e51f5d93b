// A room's texts in the page's language: the waiting page, the accept page
// and the embed, opened by a Korean browser (Accept-Language), an English
// one, and each switched to the other language with ?lang=. READY after the
// waiting pages: the Go side then turns degraded mode on, and the accept
// pages (which name the product only then) follow. RESULT lists what each
// page showed; the Go side judges it. Screenshots go to OUT_DIR.

import { BASE_URL, ROOM, WAIT_MS, need, outPath, ready, run } from "./lib.mjs";

const FALLBACK_ROOM = need("FALLBACK_ROOM");
const PARENT = need("PARENT");

const text = async (page, id) => {
  const el = page.locator(`[data-testid="${id}"]`).first();
  return (await el.count()) ? (await el.textContent()).trim() : null;
};

/** show reads the room's texts off the page at path. */
async function show(page, locale, name, path) {
  await page.goto(BASE_URL + path, { waitUntil: "domcontentloaded" });
  return {
    locale,
    name,
    lang: await page.evaluate(() => document.documentElement.lang),
    docTitle: await page.title(),
    title: await text(page, "room-title"),
    message: await text(page, "room-message"),
    product: await text(page, "accept-product"),
  };
}

await run(async (browser, seen) => {
  seen.pages = [];
  const pageErrors = [];
  seen.pageErrors = pageErrors;
  const pages = {};
  for (const locale of ["ko-KR", "en-US"]) {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(`${locale}: ${e}`));
    pages[locale] = page;
    for (const [name, path] of [
      ["waiting", `/rooms/${ROOM}`],
      ["waiting-ko", `/rooms/${ROOM}?lang=ko`],
      ["waiting-en", `/rooms/${ROOM}?lang=en`],
      ["fallback", `/rooms/${FALLBACK_ROOM}`],
      ["embed", `/embed/rooms/${ROOM}?parent=${encodeURIComponent(PARENT)}`],
    ]) {
      seen.pages.push(await show(page, locale, name, path));
      if (name === "waiting") await page.screenshot({ path: outPath(`texts-waiting-${locale}.png`), fullPage: true });
    }
  }
  ready({});
  // Degraded mode is on (or coming): the accept page names the product.
  for (const [locale, page] of Object.entries(pages)) {
    const deadline = Date.now() + WAIT_MS;
    let shown = await show(page, locale, "accept", `/rooms/${ROOM}/accept`);
    while (shown.product === null && Date.now() < deadline) shown = await show(page, locale, "accept", `/rooms/${ROOM}/accept`);
    seen.pages.push(shown);
    await page.screenshot({ path: outPath(`texts-accept-${locale}.png`), fullPage: true });
  }
  return seen;
});
