import assert from "node:assert/strict";
import { test } from "node:test";
import { frozenNewcomer, reopen, REOPEN_FLOOR_MS } from "./reopen";
import { Ticket } from "./ticket";
import { ticket } from "./testing";

/** A hand-run timer and a scripted fetch: the test decides when time passes and what the server says. */
function harness(answers: Array<{ status: number; body?: unknown; retryAfter?: string }>) {
  const timers: Array<{ fn: () => void; ms: number }> = [];
  const asked: string[] = [];
  (globalThis as any).window = {
    setTimeout: (fn: () => void, ms: number) => timers.push({ fn, ms }),
    clearTimeout: () => {},
  };
  (globalThis as any).fetch = async (url: string) => {
    asked.push(url);
    const a = answers.shift() ?? { status: 599 };
    return {
      ok: a.status >= 200 && a.status < 300,
      status: a.status,
      headers: { get: (h: string) => (h === "Retry-After" ? (a.retryAfter ?? null) : null) },
      text: async () => JSON.stringify(a.body ?? {}),
    };
  };
  const fire = async () => {
    const t = timers.shift();
    assert.ok(t, "a timer is due");
    t.fn();
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    return t.ms;
  };
  return { timers, asked, fire };
}

const soldOut = (over: Partial<Ticket> = {}) => ticket({ ticket: "", state: "sold_out", position: 0, next_update_ms: 250, ...over });

test("only a newcomer turned away by a frozen room asks again", () => {
  assert.equal(frozenNewcomer(soldOut()), true);
  assert.equal(frozenNewcomer(ticket({ ticket: "", state: "closed", reason: "maintenance" })), true);
  assert.equal(frozenNewcomer(ticket({ ticket: "", state: "closed", reason: "ended" })), false, "an ended room does not reopen");
  assert.equal(frozenNewcomer(soldOut({ ticket: "t1" })), false, "a ticket is followed, not asked for");
  assert.equal(frozenNewcomer(ticket({ ticket: "", state: "full" })), false);
});

test("a sold out newcomer asks at the floor's pace until undone, then follows its place", async () => {
  const h = harness([
    { status: 200, body: soldOut({ sold_out_message: "gone" }) },
    { status: 200, body: ticket({ ticket: "t9", position: 4 }) },
  ]);
  const seen: string[] = [];
  reopen("/api/rooms/drop/enter", soldOut(), {
    still: (t) => seen.push(`still ${t.sold_out_message}`),
    placed: (t) => seen.push(`placed ${t.ticket} #${t.position}`),
    other: () => seen.push("other"),
  });
  assert.equal(await h.fire(), REOPEN_FLOOR_MS, "never faster than the floor, whatever the tiers say");
  assert.equal(await h.fire(), REOPEN_FLOOR_MS);
  assert.deepEqual(seen, ["still gone", "placed t9 #4"]);
  assert.equal(h.timers.length, 0, "nothing more once placed");
  assert.deepEqual(h.asked, ["/api/rooms/drop/enter", "/api/rooms/drop/enter"]);
});

test("a refusal goes to the server's page; a busy server is asked again later", async () => {
  const h = harness([{ status: 503, retryAfter: "9" }, { status: 403, body: { error: { code: "challenge_required" } } }]);
  const seen: string[] = [];
  reopen("/e", soldOut({ next_update_ms: 30_000 }), {
    still: () => seen.push("still"),
    placed: () => seen.push("placed"),
    other: () => seen.push("other"),
  });
  assert.equal(await h.fire(), 30_000, "the ticket's pace when slower than the floor");
  const retry = await h.fire();
  assert.ok(retry >= 9_000, `Retry-After respected: ${retry} ms`);
  assert.deepEqual(seen, ["other"]);
  assert.equal(h.timers.length, 0);
});

test("stop ends the asking", async () => {
  const h = harness([{ status: 200, body: soldOut() }]);
  const stop = reopen("/e", soldOut(), { still: () => {}, placed: () => {}, other: () => {} });
  stop();
  await h.fire();
  assert.equal(h.asked.length, 0);
});
