import assert from "node:assert/strict";
import { test } from "node:test";
import { backoffCeiling, backoffDelay } from "./backoff";

test("ceiling doubles from the base and stops at the cap", () => {
  const opts = { baseMs: 1000, capMs: 30_000 };
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7, 100].map((a) => backoffCeiling(a, opts)),
    [0, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
  );
});

test("full jitter spreads delays over the whole window", () => {
  assert.equal(backoffDelay(3, undefined, () => 0), 0);
  assert.equal(backoffDelay(3, undefined, () => 0.5), 2000);
  assert.equal(backoffDelay(3, undefined, () => 0.999999), 3999);
  assert.equal(backoffDelay(50, undefined, () => 0.5), 15_000);
});
