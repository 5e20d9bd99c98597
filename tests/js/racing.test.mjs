// A race page's pure decisions (racing.js): the server's clock read here, the
// race's phase at a moment, and what the polite live region says (never a move).
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { clockOffset, raceEnd, raceNews, racePhase } from "../../races/static/races/racing.js";

const START = Date.parse("2026-12-02T10:00:05Z");
const END = Date.parse("2026-12-02T10:05:05Z");

function race(status, players, extra = {}) {
  return {
    status,
    starts_at: status === "lobby" ? null : "2026-12-02T10:00:05Z",
    ends_at: status === "lobby" ? null : "2026-12-02T10:05:05Z",
    winner: null,
    end: null,
    players: players.map((name) => ({ player: name, left: false, moves: 0, score: 0 })),
    ...extra,
  };
}

describe("clockOffset", () => {
  test("is what to add to this clock to read the server's", () => {
    assert.equal(clockOffset("2026-12-02T10:00:00Z", Date.parse("2026-12-02T09:59:58Z")), 2000);
  });

  test("is nothing for a time it cannot read", () => {
    assert.equal(clockOffset("soon", 123), 0);
  });
});

describe("racePhase", () => {
  test("waits in the lobby until the start", () => {
    assert.deepEqual(racePhase(race("lobby", ["alice"]), START), { phase: "lobby" });
  });

  test("counts down whole seconds to the start, then runs to the time limit", () => {
    const started = race("countdown", ["alice"]);
    assert.deepEqual(racePhase(started, START - 4200), { phase: "countdown", seconds: 5 });
    assert.deepEqual(racePhase(started, START - 1), { phase: "countdown", seconds: 1 });
    assert.deepEqual(racePhase(started, START), { phase: "running", left: END - START });
  });

  test("is over at the time limit before the server says so, and once it says so", () => {
    assert.deepEqual(racePhase(race("running", ["alice"]), END), { phase: "over" });
    assert.deepEqual(racePhase(race("over", ["alice"]), START + 1000), { phase: "over" });
  });
});

describe("raceNews", () => {
  test("says who joins the lobby and who leaves", () => {
    const before = race("lobby", ["alice"]);
    const after = race("lobby", ["alice", "bob"]);
    assert.deepEqual(
      raceNews(before, after, START).map((item) => [item.key, item.params.player]),
      [["race_joined", "bob"]],
    );
    const running = race("running", ["alice", "bob"]);
    const left = race("running", ["alice", "bob"]);
    left.players[1].left = true;
    assert.deepEqual(
      raceNews(running, left, START + 1000).map((item) => item.key),
      ["race_left"],
    );
  });

  test("says a player put out by a moderator was removed, not that they left", () => {
    const running = race("running", ["alice", "bob"]);
    const removed = race("running", ["alice", "bob"]);
    removed.players[1] = { ...removed.players[1], left: true, removed: true };
    assert.deepEqual(
      raceNews(running, removed, START + 1000).map((item) => [item.key, item.params.player]),
      [["race_removed_news", "bob"]],
    );
  });

  test("never says a move, a score or the foundations", () => {
    const before = race("running", ["alice", "bob"]);
    const after = race("running", ["alice", "bob"]);
    after.players[0] = { ...after.players[0], moves: 40, score: 95, foundations: 6 };
    assert.deepEqual(raceNews(before, after, START + 1000), []);
  });

  test("says the countdown with its seconds, and the end with its winner", () => {
    const lobby = race("lobby", ["alice", "bob"]);
    const countdown = race("countdown", ["alice", "bob"]);
    assert.deepEqual(raceNews(lobby, countdown, START - 3000), [
      { key: "race_countdown", params: { seconds: 3 } },
    ]);
    const over = race("over", ["alice", "bob"], { winner: "bob", end: "won" });
    assert.deepEqual(raceNews(countdown, over, END), [
      { key: "race_won_by", params: { player: "bob" } },
    ]);
  });
});

describe("raceEnd", () => {
  test("tells a win, the best score at the time limit, and a race nobody won", () => {
    assert.equal(raceEnd({ winner: "bob", end: "won" }).key, "race_won_by");
    assert.equal(raceEnd({ winner: "bob", end: "time" }).key, "race_best_score");
    assert.equal(raceEnd({ winner: null, end: "time" }).key, "race_over");
  });
});
