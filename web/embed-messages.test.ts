import assert from "node:assert/strict";
import { test } from "node:test";
import { cookiesStick, embedEnv, KEY_HEADER, keyedGet, withKey } from "./embed-env";
import { absolute, admittedMessage, messageType, parseAdmission, parseInit, parseUpdate, updateMessage } from "./embed-messages";
import { ticket } from "./testing";
import { Channel, ChannelHandlers, Env } from "./transport";

test("only waitroom messages have a type", () => {
  assert.equal(messageType({ type: "waitroom:init" }), "waitroom:init");
  for (const m of [null, "waitroom:init", 5, {}, { type: 1 }, { type: "other:init" }]) assert.equal(messageType(m), null);
});

test("init carries a user token and a key, both optional", () => {
  assert.deepEqual(parseInit({ type: "waitroom:init", user_token: "ut", key: "a.k" }), { user_token: "ut", key: "a.k" });
  assert.deepEqual(parseInit({ type: "waitroom:init", user_token: 5, key: "" }), { user_token: null, key: null });
  assert.equal(parseInit({ type: "waitroom:update" }), null);
});

test("URLs are made absolute against the waitroom, and unsafe ones dropped", () => {
  const t = absolute(ticket({ redirect_url: "/shop?wr_token=x", accept_url: "javascript:alert(1)" }), "http://localhost:8080/embed/rooms/demo");
  assert.equal(t.redirect_url, "http://localhost:8080/shop?wr_token=x");
  assert.equal(t.accept_url, null);
});

test("an update is the ticket JSON with a type, and reads back", () => {
  const t = ticket({ position: 7 });
  const m = JSON.parse(JSON.stringify(updateMessage(t)));
  assert.equal(m.type, "waitroom:update");
  assert.equal(m.position, 7);
  assert.deepEqual(parseUpdate(m), t);
});

test("admission needs the whole admission", () => {
  assert.equal(admittedMessage(ticket()), null);
  const t = ticket({ state: "admitted", token: "jwt", orderable_at: "2026-11-29T12:00:01.000Z", redirect_url: "http://x/shop" });
  const m = admittedMessage(t);
  assert.deepEqual(m, { type: "waitroom:admitted", token: "jwt", orderable_at: "2026-11-29T12:00:01.000Z", redirect_url: "http://x/shop" });
  assert.deepEqual(parseAdmission(m), { token: "jwt", orderable_at: "2026-11-29T12:00:01.000Z", redirect_url: "http://x/shop" });
  assert.equal(admittedMessage({ ...t, token: null }), null);
  assert.equal(parseAdmission({ type: "waitroom:admitted", token: "jwt" }), null);
});

function fakeBase(opened: string[]): Env {
  const open = (kind: string) => (url: string, _h: ChannelHandlers): Channel => {
    opened.push(`${kind} ${url}`);
    return { close() {} };
  };
  return {
    openWS: open("ws"),
    openSSE: open("sse"),
    get: async () => ({ status: 500, text: "" }),
    setTimeout: () => 0,
    clearTimeout: () => {},
    random: () => 0.5,
  };
}

test("the key goes into push URLs only when cookies do not stick", () => {
  const h = { open() {}, message() {}, closed() {} };
  const opened: string[] = [];
  const noFetch = async () => new Response("");
  embedEnv(fakeBase(opened), noFetch, "a.k/1", true).openWS!("ws://w/t/ws", h);
  embedEnv(fakeBase(opened), noFetch, "a.k/1", true).openSSE!("/t/events?x=1", h);
  embedEnv(fakeBase(opened), noFetch, "a.k/1", false).openWS!("ws://w/t/ws", h);
  embedEnv(fakeBase(opened), noFetch, null, true).openWS!("ws://w/t/ws", h);
  assert.deepEqual(opened, ["ws ws://w/t/ws?key=a.k%2F1", "sse /t/events?x=1&key=a.k%2F1", "ws ws://w/t/ws", "ws ws://w/t/ws"]);
  assert.equal(withKey("/a", "k"), "/a?key=k");
  const noWS = embedEnv({ ...fakeBase(opened), openWS: undefined }, noFetch, "k", true);
  assert.equal(noWS.openWS, undefined);
});

test("polls carry the key in a header, same origin only", async () => {
  const seen: { url: string; init: RequestInit }[] = [];
  const fetchFn = async (url: string, init: RequestInit) => {
    seen.push({ url, init });
    return new Response('{"ok":1}', { status: 200 });
  };
  assert.deepEqual(await keyedGet(fetchFn, "a.k")("/t"), { status: 200, text: '{"ok":1}' });
  await keyedGet(fetchFn, null)("/t");
  assert.equal((seen[0].init.headers as Record<string, string>)[KEY_HEADER], "a.k");
  assert.equal((seen[1].init.headers as Record<string, string>)[KEY_HEADER], undefined);
  assert.equal(seen[0].init.credentials, "same-origin");
});

test("the cookie probe tells a jar that keeps cookies from one that refuses them", () => {
  const jar = (keeps: boolean) => {
    let stored = "";
    return {
      get cookie() {
        return stored;
      },
      set cookie(v: string) {
        if (keeps) stored = /Max-Age=0/.test(v) ? "" : v.split(";")[0];
      },
    } as unknown as Document;
  };
  assert.equal(cookiesStick(jar(true), "/api/rooms/r/embed/"), true);
  assert.equal(cookiesStick(jar(false), "/api/rooms/r/embed/"), false);
  const throwing = {
    get cookie(): string {
      throw new Error("SecurityError");
    },
    set cookie(_v: string) {
      throw new Error("SecurityError");
    },
  } as unknown as Document;
  assert.equal(cookiesStick(throwing, "/"), false);
});
