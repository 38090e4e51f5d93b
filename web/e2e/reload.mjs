// A reload keeps the place: the same ticket, no further back in line.
// The Go side keeps the room paused, so the place cannot move on its own.

import { BASE_URL, ROOM, check, log, number, record, run, waitShown, watchRequests } from "./lib.mjs";

/** look reads what the visitor sees once the page is live again. */
async function look(page) {
  await waitShown(page, '[data-testid="connection"][data-mode="ws"]', "the connection indicator saying ws");
  const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
  const position = number(await page.locator('[data-testid="position"]').textContent());
  const entry = await page.evaluate(
    (key) => window.sessionStorage.getItem(key),
    `waitroom:entry:${ROOM}:${ticket}`,
  );
  return { ticket, position, entry: number(entry) };
}

await run(async (browser, seen) => {
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  const events = await record(page);
  const requests = [];
  watchRequests(page, requests);
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  Object.assign(seen, { events, pageErrors });

  const res = await page.goto(`${BASE_URL}/rooms/${ROOM}`, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET /rooms/${ROOM} answered ${res && res.status()}`);
  const before = await look(page);
  log(`before the reload: ${JSON.stringify(before)}`);
  Object.assign(seen, { before });

  const again = await page.reload({ waitUntil: "domcontentloaded" });
  check(again && again.status() === 200, `the reload answered ${again && again.status()}`);
  const after = await look(page);
  log(`after the reload: ${JSON.stringify(after)}`);

  return {
    before,
    after,
    modes: events.map((e) => e.mode).filter((m, i, ms) => i === 0 || m !== ms[i - 1]),
    foreign: requests.filter((r) => r.foreign).map((r) => r.url),
    pageErrors,
  };
});
