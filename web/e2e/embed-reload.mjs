// A reload of the shop page keeps the embedded place, in a Chromium whose
// visitor blocks third-party cookies (COOKIES=thirdparty: the partitioned
// cookie still sticks) or refuses every cookie of the waitroom's site
// (COOKIES=blocked: the key the SDK kept in the shop's localStorage carries
// the place, in a header and in the push URLs). The Go side keeps the room
// paused so the place holds still.

import { check, log, need, run } from "./lib.mjs";
import {
  SHOP_URL,
  WAITROOM,
  cookieProfile,
  embedView,
  lastTicket,
  launchWithProfile,
  recordMessages,
  waitEmbedLive,
  watchHosts,
} from "./embed-lib.mjs";

const COOKIES = need("COOKIES");
check(["thirdparty", "blocked"].includes(COOKIES), `COOKIES=${COOKIES}: want thirdparty or blocked`);

await run(async (_browser, seen) => {
  const chrome = await launchWithProfile(cookieProfile(COOKIES));
  try {
    const page = await chrome.context.newPage();
    const messages = await recordMessages(page);
    const foreign = [];
    watchHosts(page, foreign);
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    // What each load sent the waitroom: the enter's cookie and key header, the push URL.
    const loads = [];
    page.on("request", async (r) => {
      const u = new URL(r.url());
      if (u.origin !== WAITROOM || !u.pathname.endsWith("/embed/enter")) return;
      const load = { cookie: null, keyHeader: null, ws: [] };
      loads.push(load); // at once, so this load's WebSocket finds it
      const h = await r.allHeaders();
      load.cookie = /(^|;\s*)wr_ekey=/.test(h.cookie ?? "");
      load.keyHeader = !!h["x-waitroom-key"];
    });
    page.on("websocket", (ws) => {
      const u = new URL(ws.url());
      if (loads.length) loads[loads.length - 1].ws.push({ key: u.searchParams.has("key") });
    });
    Object.assign(seen, { loads, messages });

    const look = async (what) => {
      await waitEmbedLive(page, what);
      const v = await embedView(page);
      const t = lastTicket(messages);
      check(t, `${what}: no waitroom:update reached the shop`);
      const stored = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("waitroom:key:")).length);
      return { ticket: t.ticket, position: v.position, mode: v.mode, storedKeys: stored };
    };

    let res = await page.goto(SHOP_URL, { waitUntil: "domcontentloaded" });
    check(res && res.status() === 200, `GET ${SHOP_URL} answered ${res && res.status()}`);
    const before = await look("the first load");
    log(`before the reload: ${JSON.stringify(before)}`);
    messages.length = 0;
    res = await page.reload({ waitUntil: "domcontentloaded" });
    check(res && res.status() === 200, `the reload answered ${res && res.status()}`);
    const after = await look("after the reload");
    log(`after the reload: ${JSON.stringify(after)}; loads ${JSON.stringify(loads)}`);
    return { before, after, loads, foreign, pageErrors };
  } finally {
    await chrome.close();
  }
});
