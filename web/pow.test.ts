import assert from "node:assert/strict";
import { test } from "node:test";
import { challengeBeside, encodePayload, factor, isChallenge, longer, retryAfterMs, workerCount } from "./pow";
import { below, hexBytes, passwordFor } from "./pow-target";

const challenge = {
  parameters: {
    algorithm: "SCRYPT-TARGET", n: 1024, r: 8, p: 1, key_length: 32, nonce: "ab", salt: "cd",
    difficulty: 100, target: "028f5c28f5c2", base: 100, held: 0, expires_at: 1,
  },
  signature: "cd",
};

test("the payload is base64 of {challenge, solution}, as the server parses it", () => {
  const p = encodePayload(challenge, { counter: 7 });
  assert.deepEqual(JSON.parse(Buffer.from(p, "base64").toString()), { challenge, solution: { counter: 7 } });
});

test("a try's password is nonce ‖ uint32be(counter), and it solves below the target on 48 bits", () => {
  assert.deepEqual([...passwordFor(hexBytes("0aff"), 0x01020304)], [0x0a, 0xff, 1, 2, 3, 4]);
  assert.deepEqual([...passwordFor(hexBytes("00"), 0xffffffff)], [0, 255, 255, 255, 255]);
  const t = parseInt("010000000000", 16); // difficulty 256
  assert.equal(below(new Uint8Array([0, 0xff, 0xff, 0xff, 0xff, 0xff, 9]), t), true);
  assert.equal(below(new Uint8Array([1, 0, 0, 0, 0, 0, 0]), t), false);
});

test("a challenge above the room's base price takes longer, by its factor", () => {
  assert.equal(longer(challenge), false);
  const dear = { ...challenge, parameters: { ...challenge.parameters, difficulty: 1300, held: 99 } };
  assert.equal(longer(dear), true);
  assert.equal(factor(dear), 13);
  assert.equal(factor(challenge), 1);
});

test("a refusal's challenge is read from beside the error, and nothing else is", () => {
  assert.deepEqual(challengeBeside(JSON.stringify({ error: { code: "challenge_required" }, challenge })), challenge);
  assert.equal(challengeBeside(JSON.stringify({ error: { code: "room_not_found" } })), null);
  assert.equal(challengeBeside("not json"), null);
  assert.equal(isChallenge({ parameters: {}, signature: "x" }), false);
  assert.equal(isChallenge(challenge), true);
});

test("workers: one per core, at least one, at most eight", () => {
  assert.deepEqual([undefined, 0, 1, 2, 6, 64].map(workerCount), [1, 1, 1, 2, 6, 8]);
});

test("a 429's or 503's Retry-After is waited, within 1 to 10 seconds", () => {
  assert.equal(retryAfterMs("1"), 1000);
  assert.equal(retryAfterMs("3"), 3000);
  assert.equal(retryAfterMs(null), 1000);
  assert.equal(retryAfterMs("soon"), 1000);
  assert.equal(retryAfterMs("0"), 1000);
  assert.equal(retryAfterMs("3600"), 10000);
});
