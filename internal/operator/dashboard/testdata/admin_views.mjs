// Every dashboard view at phone and desktop widths in English and Korean,
// driven by internal/operator/dashboard/views_browser_test.go: the sign-in page, the
// rooms list, a room with adaptive activation on, sold out, before its
// scheduled opening and after its draw, a drill, the new room form, a form
// refused with errors, the edit and delete pages and an error page. Each
// gets axe-core's verdict and a screenshot; each Korean view lists the
// English words it shows (text not taken from the Korean catalogue); every
// view lists catalogue keys shown raw and words broken inside. Same
// protocol as admin.mjs: one RESULT {json} line, a FAIL line on stderr and
// exit status 1 on failure.

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
const ROOMS = JSON.parse(need("ROOMS")); // {adaptive, soldOut, scheduled, drawn, sale}
const ALLOW = JSON.parse(need("ALLOW")); // phrases that are names: room ids, titles, the server id
const OUT_DIR = process.env.OUT_DIR || "test-output/browser";
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS) || 540_000;
const WAIT_MS = Number(process.env.WAIT_MS) || 30_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
// ONLY ("ko-desktop") narrows a run by hand; the test sees every one.
const ONLY = process.env.ONLY || "";
const LANGS = ["en", "ko"].filter((l) => !ONLY || ONLY.startsWith(l));
const VIEWPORTS = [
  { name: "mobile", viewport: { width: 390, height: 844 } },
  { name: "desktop", viewport: { width: 1280, height: 800 } },
].filter((v) => !ONLY || ONLY.endsWith(v.name));

const started = Date.now();
const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(2)}s]`, ...a);
mkdirSync(OUT_DIR, { recursive: true });
const tid = (id) => `[data-testid="${id}"]`;

/**
 * shownText is what the page shows or reads out, as a list of strings:
 * visible text nodes and the labels read to a screen reader, leaving out
 * what is not words of the page's language: code, text marked
 * translate="no" or in another language (lang), scripts and templates.
 */
function shownText(lang) {
  const skip = (el) => {
    if (!el || el.closest("script, style, template, code, [translate='no']")) return true;
    const marked = el.closest("[lang]");
    if (marked && marked.lang !== lang) return true;
    return typeof el.checkVisibility === "function" && !el.checkVisibility();
  };
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.data.trim() && !skip(n.parentElement)) out.push(n.data.trim());
  }
  for (const el of document.querySelectorAll("[aria-label], [placeholder], [title], [alt]")) {
    if (skip(el)) continue;
    for (const a of ["aria-label", "placeholder", "title", "alt"]) {
      const v = el.getAttribute(a);
      if (v) out.push(v);
    }
  }
  out.push(document.title);
  return out;
}

/**
 * brokenWords: words the layout split over two lines (as admin_layout.mjs);
 * code (a draw's 64-digit hash) wraps where it must.
 */
function brokenWords(sel) {
  const out = [];
  for (const el of document.querySelectorAll(sel)) {
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (n.parentElement?.closest("code")) continue;
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
const WORDS = ".admin-header, .admin-title-row, .admin-table th, .admin-table td, .stats dt, .stats dd, .facts dt, .facts dd, legend, label, .button";

// Words that are names in every language: products, protocols and units.
const NAMES = new Set(["Redis", "URL", "ID", "PromQL", "Prometheus", "scrypt", "ms", "SHA", "UTC", "HTTP", "API", "http", "https", "fff", "CSV", "JSON"]);

/** english lists the English words in strings, leaving out ALLOW's phrases, paths, URLs and names. */
function english(strings) {
  const out = [];
  for (let s of strings) {
    for (const phrase of ALLOW) s = s.split(phrase).join(" ");
    s = s.replace(/\([a-z_]+\)/g, " "); // a choice's API value beside its words: "(off)"
    s = s.replace(/\S*:\/\/\S*|(^|\s)\/\S*/g, " "); // URLs and paths
    s = s.replace(/#[0-9a-fA-F]{3,6}\b/g, " "); // colours
    for (const w of s.match(/[A-Za-z][A-Za-z'’]+/g) ?? []) {
      if (!NAMES.has(w)) out.push(w);
    }
  }
  return [...new Set(out)];
}

const KEY = /\b(?:admin|waiting|eta|conn|error|page)\.[a-z_]+(?:\.[a-z_]+)*\b/g;

async function audit(page, name, lang, vp) {
  await page.mouse.move(0, 0);
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) }));
  });
  const shown = await page.evaluate(shownText, lang);
  const keys = [...new Set(shown.flatMap((s) => s.match(KEY) ?? []))];
  const words = lang === "ko" ? english(shown) : [];
  const broken = await page.evaluate(brokenWords, WORDS);
  // Nothing wider than the screen: no sideways scrolling of the page.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  const file = join(OUT_DIR, `admin-view-${name}-${lang}-${vp.name}.png`);
  await page.screenshot({ path: file, fullPage: true, timeout: 2 * WAIT_MS }); // slow on a busy machine
  log(`${name}-${lang}-${vp.name}: ${violations.length} violations, English ${JSON.stringify(words)}, keys ${JSON.stringify(keys)}, broken ${JSON.stringify(broken)}, overflow ${overflow}px`);
  return { view: name, lang, viewport: vp.name, width: vp.viewport.width, file, violations, english: words, keys, broken, overflow };
}

async function live(page) {
  await page.locator(`${tid("live-status")}[data-mode="ws"]`).waitFor({ timeout: WAIT_MS });
}

async function main(browser) {
  const results = [];
  const pageErrors = [];
  const seen = {};
  const one = async (lang, vp) => {
    const ctx = await browser.newContext({ viewport: vp.viewport, locale: lang });
    const page = await ctx.newPage();
    page.on("pageerror", (e) => pageErrors.push(`${lang}-${vp.name}: ${e}`));
    const visit = async (name, path, ready) => {
      await page.goto(`${BASE_URL}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`);
      if (ready) await ready();
      results.push(await audit(page, name, lang, vp));
    };

    await visit("login", "/admin/login");
    await page.fill(tid("login-token"), ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${BASE_URL}/admin`), page.click(tid("login-submit"))]);

    await visit("rooms", "/admin", () => page.locator(tid("room-row")).first().waitFor());
    await visit("room-adaptive", `/admin/rooms/${ROOMS.adaptive}`, () => live(page));
    seen[`${lang}-${vp.name}`] = {
      reason: (await page.textContent(tid("stat-line-reason"))).trim(),
      signal: (await page.textContent(tid("stat-line-signal"))).replace(/\s+/g, " ").trim(),
    };
    await visit("room-sold-out", `/admin/rooms/${ROOMS.soldOut}`, () => live(page));
    await visit("room-scheduled", `/admin/rooms/${ROOMS.scheduled}`, () => live(page));
    await visit("room-drawn", `/admin/rooms/${ROOMS.drawn}`, () => live(page));
    // A past sale's whole history in the same charts, and its report.
    await visit("room-sale", `/admin/rooms/${ROOMS.sale}?range=sale`, async () => {
      await live(page);
      await page.locator(`${tid("chart-counts")} canvas`).waitFor({ timeout: WAIT_MS });
    });
    seen[`${lang}-${vp.name}-sale`] = {
      reason: String(await page.evaluate(() => JSON.parse(document.getElementById("admin-series").textContent).length)),
      signal: (await page.getAttribute("#charts-heading time", "title")) ?? "",
    };
    await visit("report", `/admin/rooms/${ROOMS.sale}/report`, () => page.locator(tid("report-figures")).waitFor());

    // Sold out asks first: "no" posts nothing, "yes" marks it; undoing it
    // does not ask.
    await page.goto(`${BASE_URL}/admin/rooms/${ROOMS.sale}?lang=${lang}`);
    await live(page);
    let posts = 0;
    const count = (r) => {
      if (r.method() === "POST" && r.url().endsWith("/controls")) posts++;
    };
    page.on("request", count);
    const dismissed = new Promise((resolve) =>
      page.once("dialog", async (d) => {
        const text = d.message();
        await d.dismiss();
        resolve(text);
      }),
    );
    await page.click(tid("control-sold-out"));
    const asked = await dismissed;
    const postsAfterNo = posts;
    page.once("dialog", (d) => d.accept());
    await page.click(tid("control-sold-out"));
    await page.locator(`${tid("control-sold-out")}[aria-pressed="true"]`).waitFor({ timeout: WAIT_MS });
    let askedAgain = false;
    page.once("dialog", (d) => {
      askedAgain = true;
      d.accept();
    });
    await page.click(tid("control-sold-out"));
    await page.locator(`${tid("control-sold-out")}[aria-pressed="false"]`).waitFor({ timeout: WAIT_MS });
    page.off("request", count);
    seen[`${lang}-${vp.name}-confirm`] = { reason: asked, signal: `${postsAfterNo} ${posts} ${askedAgain}` };

    // The drill: degraded mode forced on from the room page and seen
    // there, then back to automatic.
    await page.goto(`${BASE_URL}/admin/rooms/${ROOMS.adaptive}?lang=${lang}`);
    await live(page);
    await page.click(tid("control-degrade-on"));
    await page.locator(`${tid("control-degrade-on")}[aria-pressed="true"]`).waitFor({ timeout: WAIT_MS });
    await page.locator(`${tid("stat-state")}`).filter({ hasText: await page.evaluate(() => JSON.parse(document.getElementById("admin-strings").textContent)["admin.state.held"]) }).waitFor({ timeout: WAIT_MS });
    results.push(await audit(page, "room-drill", lang, vp));
    await page.goto(`${BASE_URL}/admin/rooms/${ROOMS.adaptive}?lang=${lang}`);
    await live(page);
    await page.click(tid("control-degrade-auto"));
    await page.locator(`${tid("control-degrade-auto")}[aria-pressed="true"]`).waitFor({ timeout: WAIT_MS });

    await visit("form-new", "/admin/create");
    // A form the checks refuse: the messages under the fields, as typed
    // (the script asks while typing) and as the server answers the post.
    await page.fill(tid("field-room"), `refused-${lang}-${vp.name}`);
    await page.fill(tid("field-capacity"), "0");
    await page.fill(tid("field-batch_size"), "ten");
    await page.fill(tid("field-target_url"), "ftp://x");
    await page.locator(tid("tier-interval")).first().fill("5");
    await page.locator(`${tid("error-capacity")}:not([hidden])`).waitFor({ timeout: WAIT_MS });
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/admin/create")),
      page.click(tid("save-room")),
    ]);
    await page.waitForLoadState("load");
    await page.locator(tid("form-error")).waitFor({ timeout: WAIT_MS });
    // The refused page opens at its first message, its input focused.
    seen[`${lang}-${vp.name}-refused`] = await page.evaluate(() => {
      const el = document.activeElement;
      const r = el?.getBoundingClientRect();
      return { reason: el?.getAttribute("name") ?? "", signal: r && r.top >= 0 && r.bottom <= window.innerHeight ? "in view" : "out of view" };
    });
    results.push(await audit(page, "form-refused", lang, vp));

    await visit("form-edit", `/admin/rooms/${ROOMS.adaptive}/edit`);
    await visit("delete", `/admin/rooms/${ROOMS.adaptive}/delete`);
    await visit("error", "/admin/rooms/no-such-room");
    await ctx.close();
  };
  // One run at a time: side by side they only compete for a busy machine.
  for (const lang of LANGS) for (const vp of VIEWPORTS) await one(lang, vp);
  return { results, pageErrors, seen };
}

let browser;
const fail = async (err) => {
  console.error(`FAIL admin-views: ${err?.stack ?? err}`);
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
