// Only the allowed embedder says who the visitor is. The shop's page frames
// the line itself (as the SDK does) next to a frame from a foreign origin;
// once the line says ready, the foreign frame sends an init with its own
// user token first, then the shop sends the visitor's. The line must enter
// as the shop's user: the same place the user already holds from a
// top-level tab, which the Go side made through the API.

import { ROOM, check, log, need, run } from "./lib.mjs";
import { FOREIGN_URL, SHOP_URL, WAITROOM, WAITROOM_URL, embedView, lastTicket, recordMessages, waitEmbedLive, watchHosts } from "./embed-lib.mjs";

const USER_TOKEN = need("USER_TOKEN");
const FOREIGN_USER_TOKEN = need("FOREIGN_USER_TOKEN");

await run(async (browser, seen) => {
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  const messages = await recordMessages(page);
  const foreign = [];
  watchHosts(page, foreign);
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  Object.assign(seen, { messages });

  const res = await page.goto(`${SHOP_URL}/blank`, { waitUntil: "domcontentloaded" });
  check(res && res.status() === 200, `GET ${SHOP_URL}/blank answered ${res && res.status()}`);
  await page.evaluate(
    ({ line, other }) => {
      for (const src of [line, other]) {
        const f = document.createElement("iframe");
        f.src = src;
        document.body.appendChild(f);
      }
    },
    { line: `${WAITROOM_URL}/embed/rooms/${ROOM}?parent=${encodeURIComponent(new URL(SHOP_URL).origin)}&sdk=1`, other: `${FOREIGN_URL}/blank` },
  );
  await messages.waitFor((m) => m.top && m.from === WAITROOM && m.data?.type === "waitroom:ready", "the line saying ready");
  const other = page.frames().find((f) => f.url() === `${FOREIGN_URL}/blank`);
  check(other, "the foreign frame did not load");
  await other.waitForLoadState("domcontentloaded");
  // The foreign frame reaches the line's window through the shared parent and
  // aims at any origin: the message is delivered, and must be ignored.
  const sent = await other.evaluate(
    (tok) => {
      window.parent.frames[0].postMessage({ type: "waitroom:init", user_token: tok, key: null }, "*");
      return true;
    },
    FOREIGN_USER_TOKEN,
  );
  check(sent, "the foreign frame could not post");
  await page.evaluate(
    ({ tok, origin }) => window.frames[0].postMessage({ type: "waitroom:init", user_token: tok, key: null }, origin),
    { tok: USER_TOKEN, origin: WAITROOM },
  );
  // The first update says whose place the line took; then let it settle on its channel.
  await messages.waitFor((m) => m.top && m.from === WAITROOM && m.data?.type === "waitroom:update", "the line's first update");
  const t = lastTicket(messages);
  log(`the line entered as ticket ${t.ticket}`);
  await waitEmbedLive(page, "the line after the shop's init");
  const view = await embedView(page);
  return {
    ticket: t ? t.ticket : null,
    position: view.position,
    received: messages.filter((m) => !m.top).map((m) => ({ at: m.at, from: m.from, type: m.data?.type ?? null })),
    foreign,
    pageErrors,
  };
});
