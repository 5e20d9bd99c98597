// The watch socket's pure decisions (watchfeed.js): which actions of a message the
// page plays, when a gap makes it ask for a snapshot, and which progress it shows.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { actionsOutcome, progressNewer, progressOf } from "../../games/static/games/watchfeed.js";

describe("actionsOutcome", () => {
  test("plays the actions that follow what the page has", () => {
    assert.deepEqual(actionsOutcome(3, { from: 4, actions: ["S", "41"] }), {
      play: ["S", "41"],
      gap: false,
    });
  });

  test("leaves out the actions the page has already", () => {
    assert.deepEqual(actionsOutcome(3, { from: 2, actions: ["S", "41", "U"] }), {
      play: ["U"],
      gap: false,
    });
    assert.deepEqual(actionsOutcome(5, { from: 2, actions: ["S"] }), { play: [], gap: false });
  });

  test("a message past the next action is a gap: the page asks for a snapshot", () => {
    assert.deepEqual(actionsOutcome(3, { from: 5, actions: ["S"] }), { play: [], gap: true });
  });

  test("a message without its numbers changes nothing", () => {
    assert.deepEqual(actionsOutcome(3, { actions: ["S"] }), { play: [], gap: false });
    assert.deepEqual(actionsOutcome(3, { from: 4 }), { play: [], gap: false });
  });
});

describe("progress", () => {
  const at = (actions) => ({ actions, score: actions * 5, moves: actions, foundations: 1 });

  test("reads the progress of a snapshot or a progress message", () => {
    assert.deepEqual(progressOf({ type: "progress", ...at(4), won: false, elapsed_ms: 9 }), {
      ...at(4),
      won: false,
    });
    assert.equal(progressOf({ type: "progress", actions: 4 }), null);
  });

  test("a later progress moves the page on, an older or equal one does not", () => {
    assert.equal(progressNewer(null, progressOf(at(0))), true);
    assert.equal(progressNewer(progressOf(at(3)), progressOf(at(4))), true);
    assert.equal(progressNewer(progressOf(at(4)), progressOf(at(3))), false);
    assert.equal(progressNewer(progressOf(at(4)), progressOf(at(4))), false);
    assert.equal(progressNewer(progressOf(at(4)), null), false);
  });
});
