// Proof of work in the browser: for each of LANGS, a new visitor opens the
// waiting page of a room that asks for work, sees the checking step (its
// heading and live status in the page's language), the page solves in Web
// Workers and enters, and the visitor lands in line. READY hands the tickets
// to the Go side, which opens the room; the first visitor then goes on to the
// demo checkout. Then SOLVES more fresh visitors time the whole step (page
// load to place in line), for docs/benchmarks.md.

import { BASE_URL, ROOM, check, closeWithin, log, need, ready, run, waitShown, watchRequests } from "./lib.mjs";

const LANGS = need("LANGS").split(",");
const SOLVES = Number(process.env.SOLVES || 0);

/** visit opens the page as a new visitor in lang and returns what the checking step showed. */
async function visit(browser, lang, requests, pageErrors) {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: lang });
  const page = await context.newPage();
  watchRequests(page, requests);
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  // What the checking step shows is read as the document loads: at a low
  // cost the script may solve and reload before a test could look.
  let checking = null;
  await page.exposeBinding("__wrChecking", (_source, c) => {
    if (!checking) checking = c;
  });
  await page.addInitScript(() => {
    document.addEventListener("DOMContentLoaded", () => {
      const q = (id) => document.querySelector(`[data-testid="${id}"]`);
      const main = document.querySelector("[data-waitroom]");
      window.__wrChecking({
        shown: !!q("checking") && !q("checking").hidden,
        ticket: main ? main.dataset.ticket : "",
        heading: q("checking") ? q("checking").querySelector("h2").textContent.trim() : "",
        status: q("checking-status") ? q("checking-status").textContent.trim() : "",
        role: q("checking-status") ? q("checking-status").getAttribute("role") : "",
        htmlLang: document.documentElement.lang,
      });
    });
  });
  const start = Date.now();
  const res = await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET /rooms/${ROOM} answered ${res && res.status()}`);
  // A dearer place (WAITROOM_POW_HELD) can take far longer than the usual wait.
  await waitShown(page, '[data-waitroom]:not([data-ticket=""])', "the waiting page with a place", 180_000);
  const tookMs = Date.now() - start;
  const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
  const solveMs = Number(await page.evaluate(() => sessionStorage.getItem("waitroom:pow-ms")));
  log(`${lang}: checking step ${JSON.stringify(checking)}, solved in ${solveMs} ms, in line as ${ticket} after ${tookMs} ms`);
  return { page, context, result: { lang, ...checking, ticketAfter: ticket, tookMs, solveMs } };
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
  log(`the first visitor is at ${finalURL}`);
  for (const p of pages) await closeWithin(p.context);
  log("closed the visitors' pages");

  const times = [];
  const solveTimes = [];
  for (let i = 0; i < SOLVES; i++) {
    const v = await visit(browser, "en", requests, pageErrors);
    times.push(v.result.tookMs);
    solveTimes.push(v.result.solveMs);
    await v.context.close();
  }
  return {
    visits,
    finalURL,
    times,
    solveTimes,
    foreign: requests.filter((r) => r.foreign).map((r) => r.url),
    pageErrors,
  };
});
