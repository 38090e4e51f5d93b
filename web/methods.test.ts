import assert from "node:assert/strict";
import { test } from "node:test";
import { blockFor } from "./page";
import { isTerminal, parseTicket } from "./ticket";

const base = { room: "drop", ticket: "t1", position: 0, waiting: 3, paused: false };

test("a random line's waiter is in the draw, a rejecting room's is closed for maintenance", () => {
  const draw = parseTicket({ ...base, state: "waiting", queueing_method: "random" });
  assert.ok(draw);
  assert.equal(blockFor(draw), "draw");
  const fifo = parseTicket({ ...base, state: "waiting" });
  assert.ok(fifo);
  assert.equal(fifo.queueing_method, "fifo");
  assert.equal(blockFor(fifo), "waiting");
  const maint = parseTicket({ ...base, state: "closed", reason: "maintenance" });
  assert.ok(maint);
  assert.equal(blockFor(maint), "maintenance");
  const ended = parseTicket({ ...base, ticket: "", state: "closed", reason: "ended" });
  assert.ok(ended);
  assert.equal(blockFor(ended), "closed");
});

test("sold out and full are tickets; sold out keeps the connection", () => {
  const sold = parseTicket({ ...base, state: "sold_out", sold_out_message: "All gone" });
  assert.ok(sold);
  assert.equal(sold.sold_out_message, "All gone");
  assert.equal(blockFor(sold), "sold_out");
  assert.equal(isTerminal("sold_out"), false);
  assert.equal(isTerminal("closed"), false);
  assert.equal(isTerminal("expired"), true);
  const full = parseTicket({ ...base, ticket: "", state: "full", retry_after_s: 15 });
  assert.ok(full);
  assert.equal(full.retry_after_s, 15);
  assert.equal(parseTicket({ ...base, state: "full", retry_after_s: -4 })?.retry_after_s, 0);
  assert.equal(parseTicket({ ...base, state: "nonsense" }), null);
});
