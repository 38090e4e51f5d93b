// A page on an origin that is not in the room's allowed_embedders cannot
// frame the line: not through the SDK (it names its own origin, the server
// refuses), and not by claiming to be the allowed shop (the browser checks
// frame-ancestors against the real ancestor). Both frames end on Chromium's
// error page, so no waitroom script runs in them and nothing can reach the
// foreign page: once both are refused, the messages it got are all it gets.

import { FOREIGN_URL, SHOP, WAITROOM, WAITROOM_URL, recordMessages, watchHosts } from "./embed-lib.mjs";
import { ROOM, WAIT_MS, check, log, run } from "./lib.mjs";

await run(async (browser, seen) => {
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  const messages = await recordMessages(page);
  const foreign = [];
  watchHosts(page, foreign);
  const consoleErrors = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  const responses = [];
  const enters = [];
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.origin === WAITROOM && u.pathname.startsWith("/embed/")) {
      // headers(), not allHeaders(): the CSP is among the headers Chromium
      // reports with the response, while the raw ones allHeaders() waits
      // for sometimes never come for a refused frame, and it then never settles.
      const csp = r.headers()["content-security-policy"] ?? null;
      responses.push({ parent: u.searchParams.get("parent"), status: r.status(), csp });
    }
  });
  page.on("request", (r) => {
    if (r.url().includes("/embed/enter")) enters.push(r.url());
  });
  // Refused frames end on chrome-error://; two of them is the end of the story.
  let refusedAll;
  const refused = new Promise((resolve) => (refusedAll = resolve));
  const errorFrames = new Set();
  page.on("framenavigated", (f) => {
    if (f !== page.mainFrame() && f.url().startsWith("chrome-error://")) {
      errorFrames.add(f);
      if (errorFrames.size === 2) refusedAll();
    }
  });
  Object.assign(seen, { messages, responses, consoleErrors });

  // 1. The example shop page, served from the foreign origin: the SDK asks for parent=<its origin>.
  const res = await page.goto(FOREIGN_URL, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET ${FOREIGN_URL} answered ${res && res.status()}`);
  // 2. A frame that claims to be the allowed shop.
  await page.evaluate((src) => {
    const f = document.createElement("iframe");
    f.src = src;
    document.body.appendChild(f);
  }, `${WAITROOM_URL}/embed/rooms/${ROOM}?parent=${encodeURIComponent(SHOP)}&sdk=1`);

  let timer;
  await Promise.race([
    refused,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`frames refused: ${errorFrames.size} of 2 within ${WAIT_MS} ms`)), WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  const frames = page.frames().filter((f) => f !== page.mainFrame()).map((f) => f.url());
  log(`frames: ${JSON.stringify(frames)}; responses: ${JSON.stringify(responses)}`);
  return { frames, responses, messages, enters, consoleErrors, foreign };
});
