// The attempt socket's pure decisions (stream.js): the address, which actions
// to send after the server's state, what a state and a close mean, and the
// wait before connecting again.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import {
  RECONNECT_FIRST_MS,
  RECONNECT_MAX_MS,
  actionMessages,
  closeOutcome,
  nextDelay,
  stateOutcome,
  streamUrl,
} from "../../games/static/games/stream.js";

describe("streamUrl", () => {
  test("uses ws on http and wss on https, on the page's own host", () => {
    assert.equal(
      streamUrl({ protocol: "http:", host: "localhost:8000" }, "2026-12-02"),
      "ws://localhost:8000/ws/daily/2026-12-02/attempt/",
    );
    assert.equal(
      streamUrl({ protocol: "https:", host: "example.com" }, "2026-12-02"),
      "wss://example.com/ws/daily/2026-12-02/attempt/",
    );
  });
});

describe("actionMessages", () => {
  test("numbers each action past `from` by its place in the log", () => {
    assert.deepEqual(actionMessages(["S", "41", "U"], 1).map(JSON.parse), [
      { type: "action", n: 2, action: "41" },
      { type: "action", n: 3, action: "U" },
    ]);
  });

  test("sends nothing when the server holds the whole game", () => {
    assert.deepEqual(actionMessages(["S"], 1), []);
  });
});

describe("stateOutcome", () => {
  test("a server holding a part of the game is behind: the page sends the rest", () => {
    assert.deepEqual(stateOutcome(["S", "41", "S"], { log: "S 41" }), {
      outcome: "behind",
      stored: ["S", "41"],
    });
    assert.equal(stateOutcome(["S"], { log: "" }).outcome, "behind");
  });

  test("a server holding actions the page lacks is taken up", () => {
    assert.equal(stateOutcome(["S"], { log: "S 41" }).outcome, "adopt");
    assert.equal(stateOutcome(["S", "S"], { log: "S 41" }).outcome, "adopt");
  });
});

describe("closeOutcome", () => {
  test("says what each of the server's close codes means", () => {
    assert.equal(closeOutcome(4409, "attempt_closed"), "closed");
    assert.equal(closeOutcome(4409, "day_closed"), "day_closed");
    assert.equal(closeOutcome(4403, "player_banned"), "banned");
    assert.equal(closeOutcome(4401, null), "sign_in");
    assert.equal(closeOutcome(4404, "no_attempt"), "none");
  });

  test("connects again after the network, the server, a flood or a failed write", () => {
    for (const code of [1006, 1011, 4429, 4503]) assert.equal(closeOutcome(code, null), "retry");
  });
});

describe("nextDelay", () => {
  test("doubles from the first wait up to the cap", () => {
    assert.equal(nextDelay(0), RECONNECT_FIRST_MS);
    assert.equal(nextDelay(RECONNECT_FIRST_MS), 2 * RECONNECT_FIRST_MS);
    assert.equal(nextDelay(RECONNECT_MAX_MS), RECONNECT_MAX_MS);
  });
});

test("a restart is a close to connect again after", () => {
  assert.equal(closeOutcome(1012, null), "retry");
});
