// A room page during a Redis outage, driven by outage_browser_test.go:
// the page goes live, says LIVE on stdout and waits for the test to kill
// Redis; the connection line must then say so in place of "Live", in
// English and Korean, at 390 and 1280 px (screenshots). One RESULT {json}
// line; a FAIL line on stderr and exit status 1 on failure.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openBrowser } from "../../../../web/e2e/browser.mjs";

const need = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`environment variable ${k} is not set`);
  return v;
};
const BASE_URL = need("BASE_URL").replace(/\/$/, "");
const ADMIN_TOKEN = need("ADMIN_TOKEN");
const ROOM = need("ROOM");
const OUT_DIR = process.env.OUT_DIR || "test-output/browser";
const WAIT_MS = Number(process.env.WAIT_MS) || 60_000;
const tid = (id) => `[data-testid="${id}"]`;
mkdirSync(OUT_DIR, { recursive: true });

async function main(browser) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(`${BASE_URL}/admin/login`);
  await page.fill(tid("login-token"), ADMIN_TOKEN);
  await Promise.all([page.waitForURL(`${BASE_URL}/admin`), page.click(tid("login-submit"))]);
  await page.goto(`${BASE_URL}/admin/rooms/${ROOM}?lang=en`);
  await page.locator(`${tid("live-status")}[data-mode="ws"]`).waitFor({ timeout: WAIT_MS });
  const before = (await page.textContent(tid("live-status"))).trim();
  console.log("LIVE");
  const out = { before, texts: {}, files: [] };
  for (const lang of ["en", "ko"]) {
    if (lang !== "en") await page.goto(`${BASE_URL}/admin/rooms/${ROOM}?lang=${lang}`);
    await page.locator(`${tid("live-status")}[data-mode="outage"]`).waitFor({ timeout: WAIT_MS });
    out.texts[lang] = (await page.textContent(tid("live-status"))).trim();
    for (const [name, width] of [["desktop", 1280], ["mobile", 390]]) {
      await page.setViewportSize({ width, height: 800 });
      const file = join(OUT_DIR, `admin-view-room-outage-${lang}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true, timeout: WAIT_MS });
      out.files.push({ file, width });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }
  return out;
}

let browser;
const fail = async (err) => {
  console.error(`FAIL admin-outage: ${err?.stack ?? err}`);
  if (browser) await browser.close().catch(() => {});
  process.exit(1);
};
process.on("SIGTERM", () => fail(new Error("stopped by the test (SIGTERM)")));
try {
  browser = await openBrowser(WAIT_MS);
  const result = await main(browser);
  await browser.close();
  console.log("RESULT " + JSON.stringify(result));
  process.exit(0);
} catch (err) {
  await fail(err);
}
