// Screenshots of the waiting page in each language, on a 360 px phone (light
// and dark) and on a desktop, into OUT_DIR as waiting-<lang>[-desktop|-dark].png.
// The Go side keeps the room paused so the page stays on "waiting". Each
// language is one visitor: the views share its cookie, so its one ticket.

import { BASE_URL, ROOM, check, log, outPath, run, waitShown } from "./lib.mjs";

const LANGS = (process.env.LANGS || "en,ko").split(",");
const VIEWS = [
  { suffix: "", viewport: { width: 360, height: 800 }, deviceScaleFactor: 2, colorScheme: "light" },
  { suffix: "-dark", viewport: { width: 360, height: 800 }, deviceScaleFactor: 2, colorScheme: "dark" },
  { suffix: "-desktop", viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, colorScheme: "light" },
];

/** facts reads what the Go side checks, and anything that sticks out sideways. */
function facts() {
  const q = (id) => document.querySelector(`[data-testid="${id}"]`);
  const text = (id) => (q(id) ? q(id).textContent.trim() : null);
  const wide = [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .map((e) => e.tagName.toLowerCase() + (e.dataset.testid ? `[${e.dataset.testid}]` : ""));
  return {
    htmlLang: document.documentElement.lang,
    title: document.title,
    heading: document.querySelector('[data-testid="waiting"] h2')?.textContent.trim() ?? null,
    position: text("position"),
    ahead: text("ahead"),
    connection: text("connection"),
    paused: q("paused-notice") && !q("paused-notice").hidden ? text("paused-notice") : null,
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    wide,
  };
}

await run(async (browser, seen) => {
  const shots = [];
  seen.shots = shots;
  for (const lang of LANGS) {
    let state; // the visitor's cookie, so every view shows the same ticket
    for (const view of VIEWS) {
      const { suffix, ...options } = view;
      const context = await browser.newContext({ ...options, locale: lang, storageState: state });
      const page = await context.newPage();
      const res = await page.goto(`${BASE_URL}/rooms/${ROOM}?lang=${lang}`, { waitUntil: "domcontentloaded" });
      check(res && res.status() === 200, `GET /rooms/${ROOM}?lang=${lang} answered ${res && res.status()}`);
      await waitShown(page, '[data-testid="connection"][data-mode="ws"]', `the ${lang} page going live`);
      await page.evaluate(() => document.fonts.ready);
      const file = outPath(`waiting-${lang}${suffix}.png`);
      await page.screenshot({ path: file, fullPage: true, animations: "disabled" });
      const shot = {
        lang,
        view: suffix.replace("-", "") || "phone",
        file,
        ticket: await page.locator("[data-waitroom]").getAttribute("data-ticket"),
        ...(await page.evaluate(facts)),
      };
      log(`${file}: ${shot.heading} / ${shot.position} / ${shot.connection}`);
      shots.push(shot);
      state = await context.storageState();
      await context.close();
    }
  }
  return { shots };
});
