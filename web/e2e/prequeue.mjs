// The pre-queue of a scheduled opening: two visitors wait on the countdown
// (no place yet, a timer that counts), the operator opens now through the
// admin API, and both open pages move to the line with their drawn places,
// pushed, without a reload. The Go side makes ROOM with opens_at an hour ahead.

import { BASE_URL, ROOM, check, log, need, number, run, waitShown, watchRequests } from "./lib.mjs";

const ADMIN_TOKEN = need("ADMIN_TOKEN");
const q = (id) => `[data-testid="${id}"]`;

async function admin(method, path) {
  const res = await fetch(`${BASE_URL}/admin/api${path}`, { method, headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  check(res.ok, `${method} /admin/api${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

await run(async (browser, seen) => {
  const requests = [];
  const pageErrors = [];
  const visitors = [];
  for (const lang of ["en", "ko"]) {
    const context = await browser.newContext({ locale: lang });
    const page = await context.newPage();
    const own = [];
    watchRequests(page, own);
    page.on("pageerror", (e) => pageErrors.push(`${lang}: ${e}`));
    const res = await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
    check(res && res.status() === 200, `GET /rooms/${ROOM} answered ${res && res.status()}`);
    await page.locator(q("scheduled")).waitFor({ state: "visible", timeout: 20_000 });
    await waitShown(page, `${q("connection")}[data-mode="ws"]`, "the pre-queue page going live");
    // The countdown counts: its text changes by itself.
    const first = (await page.locator(q("opens-countdown")).textContent()).trim();
    await page.waitForFunction(
      ([sel, was]) => document.querySelector(sel).textContent.trim() !== was,
      [q("opens-countdown"), first],
      { timeout: 5_000 },
    );
    const timer = await page.evaluate((sel) => {
      const el = document.querySelector(sel);
      return { role: el.getAttribute("role"), live: el.getAttribute("aria-live"), label: el.getAttribute("aria-label") };
    }, q("opens-countdown"));
    const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
    visitors.push({
      lang,
      page,
      own,
      ticket,
      first,
      timer,
      unknown: (await page.locator(q("scheduled-position")).textContent()).trim(),
      waitingHidden: await page.locator(q("waiting")).isHidden(),
    });
    log(`${lang}: scheduled, countdown ${first}`);
  }
  Object.assign(seen, { visitors: visitors.map(({ page, own, ...v }) => v) });

  const before = await admin("GET", `/rooms/${ROOM}/draw`);
  const opened = Date.now();
  await admin("POST", `/rooms/${ROOM}/open`);
  for (const v of visitors) {
    await v.page.locator(q("waiting")).waitFor({ state: "visible", timeout: 20_000 });
    await v.page.waitForFunction((sel) => /\d/.test(document.querySelector(sel).textContent), q("position"), { timeout: 20_000 });
    v.movedMs = Date.now() - opened;
    v.position = number(await v.page.locator(q("position")).textContent());
    v.scheduledHidden = await v.page.locator(q("scheduled")).isHidden();
    v.navigations = v.own.filter((r) => r.method === "GET" && r.url.includes(`/rooms/${ROOM}?`)).length;
    requests.push(...v.own);
  }
  const after = await admin("GET", `/rooms/${ROOM}/draw`);
  return {
    before,
    after,
    visitors: visitors.map(({ page, own, ...v }) => v),
    foreign: requests.filter((r) => r.foreign).map((r) => r.url),
    pageErrors,
  };
});
