// The dashboard's list, room page and form at phone and desktop widths in
// both languages, driven by internal/operator/dashboard/layout_browser_test.go: words
// whole (none broken inside to fit a column), chart legends showing the
// latest values and axes their units, the full room's state, axe-core's
// verdict and a screenshot of each. Same protocol as admin.mjs: one RESULT
// {json} line, a FAIL line on stderr and exit status 1 on failure.

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
const ROOM = need("ROOM"); // the full room, with a history for the charts
const OUT_DIR = process.env.OUT_DIR || "test-output/browser";
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS) || 90_000;
const WAIT_MS = Number(process.env.WAIT_MS) || 30_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const LANGS = ["en", "ko"];
const VIEWPORTS = [
  { name: "mobile", viewport: { width: 390, height: 844 } },
  { name: "desktop", viewport: { width: 1280, height: 800 } },
];

const started = Date.now();
const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(2)}s]`, ...a);
mkdirSync(OUT_DIR, { recursive: true });
const tid = (id) => `[data-testid="${id}"]`;

/**
 * brokenWords lists the words inside the selected elements that the layout
 * split over two lines. A word is a run without spaces, hyphens or slashes
 * (where a break is a break between words); split means its boxes sit on
 * more than one line.
 */
function brokenWords(sel) {
  const out = [];
  for (const el of document.querySelectorAll(sel)) {
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const re = /[^\s\-/]+/g;
      for (let m = re.exec(n.data); m; m = re.exec(n.data)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const lines = new Set(
          Array.from(r.getClientRects())
            .filter((b) => b.width > 0)
            .map((b) => Math.round(b.bottom)),
        );
        if (lines.size > 1) out.push(m[0]);
      }
    }
  }
  return out;
}

const WORDS = ".admin-header, .admin-title-row, .admin-table th, .admin-table td, .stats dt, .stats dd, .charts figcaption, .u-legend, .u-axis, legend, label";

async function audit(page, name, lang, vp) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) }));
  });
  const broken = await page.evaluate(brokenWords, WORDS);
  const file = join(OUT_DIR, `admin-${name}-${lang}-${vp.name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  log(`${name}-${lang}-${vp.name}: ${violations.length} violations, broken words ${JSON.stringify(broken)}`);
  return { page: name, lang, viewport: vp.name, width: vp.viewport.width, file, violations, broken };
}

async function main(browser) {
  const results = [];
  const pageErrors = [];
  for (const lang of LANGS) {
    for (const vp of VIEWPORTS) {
      const ctx = await browser.newContext({ viewport: vp.viewport, locale: lang });
      const page = await ctx.newPage();
      page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}: ${e}`));
      await page.goto(`${BASE_URL}/admin/login?lang=${lang}`);
      await page.fill(tid("login-token"), ADMIN_TOKEN);
      await Promise.all([page.waitForURL(`${BASE_URL}/admin`), page.click(tid("login-submit"))]);

      // The list: the row of the full room, pushed live.
      await page.goto(`${BASE_URL}/admin?lang=${lang}`);
      await page.locator(`${tid("room-row")}[data-room="${ROOM}"]`).waitFor();
      const list = await audit(page, "rooms", lang, vp);
      const row = `${tid("room-row")}[data-room="${ROOM}"]`;
      list.fullState = (await page.textContent(`${row} [data-field="state"]`)).trim();
      // The title cell, after the live list has rewritten the rows (the
      // script replaces them on every push).
      await page.evaluate((sel) => (window.__firstRow = document.querySelector(sel)), row);
      await page.waitForFunction((sel) => document.querySelector(sel) !== window.__firstRow, row, { timeout: WAIT_MS });
      list.title = (await page.textContent(`${row} td:first-of-type`)).trim();
      results.push(list);

      // The room: wait for the live connection and charts with history.
      await page.goto(`${BASE_URL}/admin/rooms/${ROOM}?lang=${lang}`);
      await page.locator(`${tid("live-status")}[data-mode="ws"]`).waitFor({ timeout: WAIT_MS });
      await page.waitForFunction(
        () => Array.from(document.querySelectorAll("[data-chart]")).every((c) => Number(c.dataset.points) >= 2),
        null,
        { timeout: WAIT_MS },
      );
      await page.mouse.move(0, 0); // no cursor over a chart: the legends show the latest values
      const room = await audit(page, "room", lang, vp);
      Object.assign(
        room,
        await page.evaluate(() => ({
          legend: Array.from(document.querySelectorAll("[data-chart]")).map((c) => ({
            chart: c.dataset.chart,
            labels: Array.from(c.querySelectorAll(".u-legend .u-series .u-label")).map((e) => e.textContent.trim()),
            values: Array.from(c.querySelectorAll(".u-legend .u-series .u-value")).map((e) => e.textContent.trim()),
            axis: [c.dataset.unit ?? ""], // uPlot draws the axis label on the canvas
          })),
          liveHeading: document.querySelector("#live-heading")?.textContent.trim(),
          liveStatus: document.querySelector('[data-testid="live-status"]')?.textContent.trim(),
          state: document.querySelector('[data-testid="stat-state"]')?.textContent.trim(),
        })),
      );
      results.push(room);

      // The form, with its inputs per language.
      await page.goto(`${BASE_URL}/admin/rooms/${ROOM}/edit?lang=${lang}`);
      results.push(await audit(page, "form", lang, vp));
      await ctx.close();
    }
  }
  return { results, pageErrors };
}

let browser;
const fail = async (err) => {
  console.error(`FAIL admin-layout: ${err?.stack ?? err}`);
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
