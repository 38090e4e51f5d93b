// Proof of work in the browser: for each of LANGS, a new visitor opens the
// waiting page of a room that asks for work, sees the checking step (its
// heading and live status in the page's language), the page solves in Web
// Workers and enters, and the visitor lands in line. READY hands the tickets
// to the Go side, which opens the room; the first visitor then goes on to the
// demo checkout. Then SOLVES more fresh visitors time the whole step (page
// load to place in line), for docs/benchmarks.md.

import { BASE_URL, ROOM, check, log, need, ready, run, waitShown, watchRequests } from "./lib.mjs";

const LANGS = need("LANGS").split(",");
const SOLVES = Number(process.env.SOLVES || 0);

/** visit opens the page as a new visitor in lang and returns what the checking step showed. */
async function visit(browser, lang, requests, pageErrors) {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: lang });
  const page = await context.newPage();
  watchRequests(page, requests);
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  const start = Date.now();
  const res = await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET /rooms/${ROOM} answered ${res && res.status()}`);
  const checking = await page.evaluate(() => {
    const q = (id) => document.querySelector(`[data-testid="${id}"]`);
    const main = document.querySelector("[data-waitroom]");
    return {
      shown: !!q("checking") && !q("checking").hidden,
      ticket: main ? main.dataset.ticket : "",
      heading: q("checking") ? q("checking").querySelector("h2").textContent.trim() : "",
      status: q("checking-status") ? q("checking-status").textContent.trim() : "",
      role: q("checking-status") ? q("checking-status").getAttribute("role") : "",
      htmlLang: document.documentElement.lang,
    };
  });
  await waitShown(page, '[data-waitroom]:not([data-ticket=""])', "the waiting page with a place");
  const tookMs = Date.now() - start;
  const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
  log(`${lang}: checking step ${JSON.stringify(checking)}, in line as ${ticket} after ${tookMs} ms`);
  return { page, context, result: { lang, ...checking, ticketAfter: ticket, tookMs } };
}

await run(async (browser, seen) => {
  const requests = [];
  const pageErrors = [];
  Object.assign(seen, { pageErrors });
  const visits = [];
  const pages = [];
  for (const lang of LANGS) {
    const v = await visit(browser, lang, requests, pageErrors);
    visits.push(v.result);
    pages.push(v);
  }
  ready({ tickets: visits.map((v) => v.ticketAfter) });
  // The Go side opens the room: the first visitor goes through to checkout.
  await waitShown(pages[0].page, '[data-testid="shop"][data-status="checkout"]', "the demo checkout");
  const finalURL = pages[0].page.url();
  for (const p of pages) await p.context.close();

  const times = [];
  for (let i = 0; i < SOLVES; i++) {
    const v = await visit(browser, "en", requests, pageErrors);
    times.push(v.result.tookMs);
    await v.context.close();
  }
  return {
    visits,
    finalURL,
    times,
    foreign: requests.filter((r) => r.foreign).map((r) => r.url),
    pageErrors,
  };
});
