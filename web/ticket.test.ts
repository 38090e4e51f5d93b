import assert from "node:assert/strict";
import { test } from "node:test";
import { isTerminal, parseTicket, parseTicketText, safeURL } from "./ticket";

test("parses the API's ticket JSON", () => {
  const t = parseTicketText(
    JSON.stringify({
      room: "drop",
      ticket: "t1",
      state: "admitted",
      position: 0,
      waiting: 12,
      eta_s: 0,
      next_update_ms: 2000,
      token: "tok",
      orderable_at: "2030-01-02T03:04:05.678Z",
      redirect_url: "https://shop.example/?wr_token=tok",
      paused: false,
    }),
  );
  assert.ok(t);
  assert.equal(t.state, "admitted");
  assert.equal(t.token, "tok");
  assert.equal(t.eta_s, 0);
  assert.equal(t.accept_url, null);
});

test("rejects what is not a ticket and tolerates missing fields", () => {
  assert.equal(parseTicketText("not json"), null);
  assert.equal(parseTicketText("null"), null);
  assert.equal(parseTicket({ ticket: "t1", state: "dancing" }), null);
  assert.equal(parseTicket({ state: "waiting" }), null);
  const t = parseTicket({ ticket: "t1", state: "waiting", position: "7", eta_s: -1 });
  assert.ok(t);
  assert.equal(t.position, 0);
  assert.equal(t.eta_s, null, "negative means no estimate yet");
  assert.equal(t.paused, false);
});

test("the estimate's range comes only with the estimate, both ends or none", () => {
  const r = parseTicket({ ticket: "t1", state: "waiting", eta_s: 68, eta_low_s: 41, eta_high_s: 140 });
  assert.deepEqual([r?.eta_low_s, r?.eta_s, r?.eta_high_s], [41, 68, 140]);
  const half = parseTicket({ ticket: "t1", state: "waiting", eta_s: 68, eta_low_s: 41, eta_high_s: "x" });
  assert.deepEqual([half?.eta_low_s, half?.eta_high_s], [null, null]);
  const paused = parseTicket({ ticket: "t1", state: "waiting", eta_s: null, eta_low_s: 41, eta_high_s: 140 });
  assert.deepEqual([paused?.eta_low_s, paused?.eta_s, paused?.eta_high_s], [null, null, null]);
});

test("only http(s) URLs are followed", () => {
  const base = "https://wait.example/rooms/drop";
  assert.equal(safeURL("/shop?wr_token=x", base), "https://wait.example/shop?wr_token=x");
  assert.equal(safeURL("https://shop.example/", base), "https://shop.example/");
  assert.equal(safeURL("javascript:alert(1)", base), null);
  assert.equal(safeURL("data:text/html,hi", base), null);
  assert.equal(safeURL(null, base), null);
});

test("the pre-queue's ticket: scheduled, with its opening, and not terminal", () => {
  const t = parseTicket({ ticket: "t1", state: "scheduled", position: 0, opens_at: "2030-01-02T10:00:00.000Z" });
  assert.ok(t);
  assert.equal(t.state, "scheduled");
  assert.equal(t.opens_at, "2030-01-02T10:00:00.000Z");
  assert.equal(isTerminal("scheduled"), false);
  assert.equal(parseTicket({ ticket: "t1", state: "waiting" })?.opens_at, null);
});
