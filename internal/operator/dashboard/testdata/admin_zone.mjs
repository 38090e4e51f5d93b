// The dashboard's times where the operator is: every <time> the pages print
// (a room's opening and its draw, the charts' range, the sale report) read
// in the browser's zone (TIMEZONE, not UTC) with the UTC text on hover, the
// room form's date field (UTC) echoed in that zone, the
// whole sale's charts with their latest time in that zone, and the report's
// exports in UTC. In English and Korean at 390 and 1280 px, each view
// checked with axe-core and saved to OUT_DIR as admin-zone-<view>-<lang>-
// <viewport>.png. Driven by internal/operator/dashboard/zone_browser_test.go: one
// RESULT {json} line, a FAIL line on stderr and exit status 1 on failure.

import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { openBrowser } from "../../../../web/e2e/browser.mjs";

const need = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`environment variable ${k} is not set`);
  return v;
};
const BASE_URL = need("BASE_URL").replace(/\/$/, "");
const ADMIN_TOKEN = need("ADMIN_TOKEN");
const ROOMS = JSON.parse(need("ROOMS")); // {drawn, sale}
const TIMEZONE = need("TIMEZONE");
const OUT_DIR = process.env.OUT_DIR || "test-output/browser";
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS) || 240_000;
const WAIT_MS = Number(process.env.WAIT_MS) || 30_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const VIEWPORTS = [
  { name: "mobile", viewport: { width: 390, height: 844 } },
  { name: "desktop", viewport: { width: 1280, height: 800 } },
];
const started = Date.now();
const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(2)}s]`, ...a);
mkdirSync(OUT_DIR, { recursive: true });
const tid = (id) => `[data-testid="${id}"]`;

async function audit(page, view, lang, vp) {
  await page.mouse.move(0, 0);
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) }));
  });
  const file = join(OUT_DIR, `admin-zone-${view}-${lang}-${vp.name}.png`);
  await page.screenshot({ path: file, fullPage: true, timeout: 2 * WAIT_MS });
  log(`${view}-${lang}-${vp.name}: ${violations.length} violations`);
  return { view, lang, viewport: vp.name, width: vp.viewport.width, file, violations };
}

/** times lists every <time> in the page's main part as shown: its datetime, text and title. */
const times = (page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll("main time")).map((el) => ({
      at: el.closest("[data-testid]")?.dataset.testid ?? el.parentElement?.id ?? "",
      datetime: el.getAttribute("datetime"),
      text: el.textContent.trim(),
      title: el.getAttribute("title") ?? "",
    })),
  );

async function live(page) {
  await page.locator(`${tid("live-status")}[data-mode="ws"]`).waitFor({ timeout: WAIT_MS });
}

async function main(browser) {
  const results = [];
  const pageErrors = [];
  const seen = [];
  for (const lang of ["en", "ko"]) {
    for (const vp of VIEWPORTS) {
      const ctx = await browser.newContext({ viewport: vp.viewport, locale: lang, timezoneId: TIMEZONE });
      const page = await ctx.newPage();
      page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}: ${e}`));
      const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
      await page.goto(`${BASE_URL}/admin/login?lang=${lang}`);
      await page.fill(tid("login-token"), ADMIN_TOKEN);
      await Promise.all([page.waitForURL(`${BASE_URL}/admin`), page.click(tid("login-submit"))]);

      // The opening and its draw.
      await page.goto(`${BASE_URL}/admin/rooms/${ROOMS.drawn}?lang=${lang}`);
      await live(page);
      const opening = await times(page);
      // The live charts' first minute: ticks under a minute apart.
      await page.locator(`${tid("chart-counts")}[data-ticks]`).waitFor({ timeout: WAIT_MS });
      const liveTicks = await page.getAttribute(tid("chart-counts"), "data-ticks");
      results.push(await audit(page, "room-drawn", lang, vp));

      // The room form: a date field in UTC, echoed in the operator's zone.
      await page.goto(`${BASE_URL}/admin/rooms/${ROOMS.drawn}/edit?lang=${lang}`);
      await page.locator(`${tid("local-opens_at")}:not([hidden])`).waitFor({ timeout: WAIT_MS });
      const field = await page.evaluate(() => ({
        value: document.querySelector('[data-testid="field-opens_at"]').value,
        echo: document.querySelector('[data-testid="local-opens_at"]').textContent.trim(),
      }));
      results.push(await audit(page, "form-edit", lang, vp));

      // The whole sale in the charts, chosen from the range links.
      await page.goto(`${BASE_URL}/admin/rooms/${ROOMS.sale}?lang=${lang}`);
      await live(page);
      await Promise.all([page.waitForURL(/range=sale/), page.click(tid("range-sale"))]);
      await page.locator(`${tid("chart-counts")} canvas`).waitFor({ timeout: WAIT_MS });
      const sale = await page.evaluate(() => {
        const pts = JSON.parse(document.getElementById("admin-series").textContent);
        const legend = document.querySelector('[data-testid="chart-counts"] .u-legend .u-series:first-child .u-value');
        return {
          points: pts.length,
          lastT: pts.length ? pts[pts.length - 1].t : 0,
          legend: legend ? legend.textContent.trim() : "",
          current: document.querySelector('[data-testid="range-nav"] [aria-current="page"]')?.dataset.testid ?? "",
        };
      });
      const range = await times(page);
      const saleTicks = await page.getAttribute(tid("chart-counts"), "data-ticks");
      results.push(await audit(page, "room-sale", lang, vp));

      // The report, and its exports.
      await page.goto(`${BASE_URL}/admin/rooms/${ROOMS.sale}/report?lang=${lang}`);
      await page.locator(tid("report-figures")).waitFor({ timeout: WAIT_MS });
      const report = await times(page);
      results.push(await audit(page, "report", lang, vp));
      const csv = await (await page.request.get(`${BASE_URL}/admin/rooms/${ROOMS.sale}/report?format=csv`)).text();
      const json = await (await page.request.get(`${BASE_URL}/admin/rooms/${ROOMS.sale}/report?format=json`)).json();
      const firstMinute = csv.split("\n")[1]?.split(",")[0] ?? "";
      seen.push({
        lang,
        viewport: vp.name,
        zone,
        times: [...opening, ...range, ...report],
        sale,
        field,
        ticks: { live: liveTicks.split("|"), sale: saleTicks.split("|") },
        csvMinute: firstMinute,
        jsonFrom: json.summary?.from ?? json.from ?? "",
        jsonMinute: json.minutes?.[0]?.minute ?? "",
      });
      await ctx.close();
    }
  }
  return { results, pageErrors, seen };
}

let browser;
const fail = async (err) => {
  console.error(`FAIL admin-zone: ${err?.stack ?? err}`);
  if (browser) await browser.close().catch(() => {});
  process.exit(1);
};
const timer = setTimeout(() => fail(new Error(`scenario took longer than ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
process.on("SIGTERM", () => fail(new Error("stopped by the test (SIGTERM)")));
try {
  browser = await openBrowser(WAIT_MS);
  const result = await main(browser);
  clearTimeout(timer);
  await browser.close();
  console.log("RESULT " + JSON.stringify(result));
  process.exit(0);
} catch (err) {
  clearTimeout(timer);
  await fail(err);
}
