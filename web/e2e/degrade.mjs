// Degraded mode: an open waiting page moves to the accept page by itself,
// where the visitor submits an order request and sees it accepted.
// The Go side switches the server to degraded mode after READY.

import { BASE_URL, ROOM, check, log, ready, run, waitShown } from "./lib.mjs";

await run(async (browser, seen) => {
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  Object.assign(seen, { pageErrors });

  const res = await page.goto(`${BASE_URL}/rooms/${ROOM}`, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET /rooms/${ROOM} answered ${res && res.status()}`);
  await waitShown(page, '[data-testid="connection"][data-mode="ws"]', "the connection indicator saying ws");
  const ticket = await page.locator("[data-waitroom]").getAttribute("data-ticket");
  ready({ ticket });

  await page.waitForURL(/\/accept/, { timeout: 20_000 });
  const acceptURL = page.url();
  log(`moved to ${acceptURL}`);
  await waitShown(page, '[data-testid="accept-form"]', "the accept form");
  const product = ((await page.locator('[data-testid="accept-product"]').textContent()) || "").trim();
  await page.locator('[data-testid="accept-quantity"]').selectOption("2");
  await Promise.all([
    page.waitForURL(/intent=/, { timeout: 20_000 }),
    page.locator('[data-testid="accept-submit"]').click(),
  ]);
  await waitShown(page, '[data-testid="intent"]', "the intent's progress");
  const status = await page.locator('[data-testid="intent"]').getAttribute("data-status");
  const intentId = new URL(page.url()).searchParams.get("intent");
  return { acceptURL, finalURL: page.url(), product, status, intentId, pageErrors };
});
