// A hint's refusal (hints.js): every code the hint API refuses with is said by
// one of the page's strings (translated), never by the API's English message.
import { test } from "node:test";
import assert from "node:assert/strict";

import { hintRefusal } from "../../games/static/games/hints.js";

const refused = (status, code, extra = {}) =>
  hintRefusal(status, { error: { code, message: "English", ...extra } });

test("a hint given is no refusal", () => {
  assert.equal(hintRefusal(200, { result: "move", action: "S" }), null);
});

test("a race playing the deal is said by the page's own string", () => {
  assert.deepEqual(refused(403, "race_running"), { key: "hint_race_running", params: {} });
});

test("a deal of a day prepared ahead (refused without its date) gets the general sentence", () => {
  assert.deepEqual(refused(403, "replay_locked"), { key: "hint_not_given", params: {} });
});

test("each known refusal has its string", () => {
  assert.equal(refused(403, "replay_locked", { date: "2026-12-07" }).key, "hint_locked");
  assert.equal(refused(400, "log_too_long").key, "hint_log_too_long");
  assert.equal(refused(503, "busy").key, "hint_busy");
  assert.equal(refused(429, "throttled").key, "hint_throttled");
  assert.equal(refused(500, "error").key, "hint_failed");
  assert.equal(hintRefusal(502, {}).key, "hint_failed");
});

test("an illegal action is said with the engine's reason", () => {
  const refusal = refused(400, "illegal_action", { reason_code: "no_such_card", params: { a: 1 } });
  assert.deepEqual(refusal, { reason: "no_such_card", params: { a: 1 } });
});

test("a code the page does not know gets a general sentence, not the message", () => {
  for (const code of ["invalid_deal", "invalid", "request_too_large", undefined]) {
    assert.deepEqual(refused(400, code), { key: "hint_not_given", params: {} });
  }
});
