import assert from "node:assert/strict";
import { test } from "node:test";
import { isTerminal, parseTicket } from "./ticket";

const base = { room: "drop", ticket: "t1", position: 0, waiting: 3, paused: false };

// The rule that picks the display (draw, maintenance) is the server's:
// vocab.DisplayOf, tested in Go (TestDisplayOf). The page shows what the
// message says.
test("a random line's waiter is in the draw, a rejecting room's is closed for maintenance", () => {
  const draw = parseTicket({ ...base, state: "waiting", display: "draw", queueing_method: "random" });
  assert.ok(draw);
  assert.equal(draw.display, "draw");
  const fifo = parseTicket({ ...base, state: "waiting", display: "waiting" });
  assert.ok(fifo);
  assert.equal(fifo.queueing_method, "fifo");
  assert.equal(fifo.display, "waiting");
  const maint = parseTicket({ ...base, state: "closed", display: "maintenance", reason: "maintenance" });
  assert.ok(maint);
  assert.equal(maint.display, "maintenance");
  const ended = parseTicket({ ...base, ticket: "", state: "closed", display: "closed", reason: "ended" });
  assert.ok(ended);
  assert.equal(ended.display, "closed");
});

test("a message without a display (a server from before) shows its state's block", () => {
  assert.equal(parseTicket({ ...base, state: "full" })?.display, "full");
  assert.equal(parseTicket({ ...base, state: "waiting", display: "nonsense" })?.display, "waiting");
});

test("sold out and full are tickets; sold out keeps the connection", () => {
  const sold = parseTicket({ ...base, state: "sold_out", sold_out_message: "All gone" });
  assert.ok(sold);
  assert.equal(sold.sold_out_message, "All gone");
  assert.equal(sold.display, "sold_out");
  assert.equal(isTerminal("sold_out"), false);
  assert.equal(isTerminal("closed"), false);
  assert.equal(isTerminal("expired"), true);
  const full = parseTicket({ ...base, ticket: "", state: "full", retry_after_s: 15 });
  assert.ok(full);
  assert.equal(full.retry_after_s, 15);
  assert.equal(parseTicket({ ...base, state: "full", retry_after_s: -4 })?.retry_after_s, 0);
  assert.equal(parseTicket({ ...base, state: "nonsense" }), null);
});
