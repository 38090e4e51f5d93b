import assert from "node:assert/strict";
import { test } from "node:test";
import { nextDelay } from "./accept";

test("the accept page looks every second, backing off to 8 s while nothing changes", () => {
  assert.equal(nextDelay(0), 1000);
  assert.equal(nextDelay(1), 2000);
  assert.equal(nextDelay(2), 4000);
  assert.equal(nextDelay(3), 8000);
  assert.equal(nextDelay(50), 8000, "capped");
});
