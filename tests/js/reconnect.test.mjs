// When a page's socket connects again after a server process stopped (reconnect.js).
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { CLOSE_RESTART, reconnectWait } from "../../games/static/games/reconnect.js";

describe("reconnectWait", () => {
  test("after a restart, waits a random time between half a second and five", () => {
    assert.equal(CLOSE_RESTART, 1012);
    assert.equal(
      reconnectWait(1012, 16_000, () => 0),
      500,
    );
    assert.equal(
      reconnectWait(1012, 16_000, () => 0.5),
      2750,
    );
    assert.ok(reconnectWait(1012, 1000, () => 0.9999999) <= 5000);
  });

  test("spreads the sockets of a stopped process over the window", () => {
    const waits = [0, 0.25, 0.5, 0.75].map((r) => reconnectWait(1012, 1000, () => r));
    assert.deepEqual(waits, [500, 1625, 2750, 3875]);
  });

  test("after any other close, waits the backoff's delay less up to half of it", () => {
    for (const code of [1000, 1001, 1006, 1011, 4503]) {
      assert.equal(
        reconnectWait(code, 8000, () => 0),
        8000,
      );
      assert.equal(
        reconnectWait(code, 8000, () => 0.5),
        6000,
      );
      assert.ok(reconnectWait(code, 8000, () => 0.9999999) >= 4000);
    }
  });

  test("spreads the sockets of a crashed process over half their backoff", () => {
    const waits = [0, 0.25, 0.5, 0.75].map((r) => reconnectWait(1006, 1000, () => r));
    assert.deepEqual(waits, [1000, 875, 750, 625]);
  });
});
