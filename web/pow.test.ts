import assert from "node:assert/strict";
import { test } from "node:test";
import { challengeBeside, encodePayload, isChallenge, retryAfterMs, workerCount } from "./pow";

const challenge = { parameters: { nonce: "ab", expiresAt: 1 }, signature: "cd" };

test("the payload is base64 of {challenge, solution}, as the server parses it", () => {
  const p = encodePayload(challenge, { counter: 7, derivedKey: "ff" });
  assert.deepEqual(JSON.parse(Buffer.from(p, "base64").toString()), { challenge, solution: { counter: 7, derivedKey: "ff" } });
});

test("a refusal's challenge is read from beside the error, and nothing else is", () => {
  assert.deepEqual(challengeBeside(JSON.stringify({ error: { code: "challenge_required" }, challenge })), challenge);
  assert.equal(challengeBeside(JSON.stringify({ error: { code: "room_not_found" } })), null);
  assert.equal(challengeBeside("not json"), null);
  assert.equal(isChallenge({ parameters: {}, signature: "x" }), false);
});

test("workers: one per core, at least one, at most eight", () => {
  assert.deepEqual([undefined, 0, 1, 2, 6, 64].map(workerCount), [1, 1, 1, 2, 6, 8]);
});

test("a 503's Retry-After is waited, within 1 to 10 seconds", () => {
  assert.equal(retryAfterMs("1"), 1000);
  assert.equal(retryAfterMs("3"), 3000);
  assert.equal(retryAfterMs(null), 1000);
  assert.equal(retryAfterMs("soon"), 1000);
  assert.equal(retryAfterMs("0"), 1000);
  assert.equal(retryAfterMs("3600"), 10000);
});
