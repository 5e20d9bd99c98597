// The ranked attempt's pure decisions (attempt.js): whose saved game a page
// reads, the per-action times, which game goes on after a reload or on another
// device, when to save, and what the attempt API's answers mean.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import {
  AttemptClock,
  SAVE_EVERY_ACTIONS,
  SAVE_EVERY_MS,
  alignedTimes,
  attemptOutcome,
  gameKey,
  nextTime,
  resumeGame,
  saveDelay,
  saveRequest,
  serverMs,
  staleSaveGame,
} from "../../games/static/games/attempt.js";

describe("gameKey", () => {
  test("keys the saved game per account, and the anonymous visitor apart", () => {
    const alice = gameKey("alice", "EH1-N-AAAAAAE");
    const bob = gameKey("bob", "EH1-N-AAAAAAE");
    const nobody = gameKey(null, "EH1-N-AAAAAAE");
    assert.equal(new Set([alice, bob, nobody]).size, 3);
    assert.notEqual(alice, gameKey("alice", "EH1-N-AAAAAAB"));
  });

  test("a player named like the anonymous key is still someone else", () => {
    assert.notEqual(gameKey("anonymous", "EH1-N-AAAAAAE"), gameKey(null, "EH1-N-AAAAAAE"));
  });
});

describe("AttemptClock", () => {
  test("knows nothing before the server answers", () => {
    assert.equal(new AttemptClock().elapsed(5000), null);
  });

  test("places the start where the server's elapsed time says, on the page's clock", () => {
    const clock = new AttemptClock();
    clock.observe(1500, 10_000); // received at 10 s, 1.5 s after the start
    assert.equal(clock.elapsed(10_000), 1500);
    assert.equal(clock.elapsed(12_250.7), 3750);
  });

  test("keeps the earliest start: a slower answer never moves the clock back", () => {
    const clock = new AttemptClock();
    clock.observe(1500, 10_000);
    clock.observe(3000, 12_400); // this answer spent 100 ms more on the way
    assert.equal(clock.elapsed(20_000), 11_500);
    clock.observe(9000, 17_000); // a quicker one: the start was earlier
    assert.equal(clock.elapsed(20_000), 12_000);
  });

  test("ignores an answer without a number", () => {
    const clock = new AttemptClock();
    clock.observe(undefined, 100);
    clock.observe(Number.NaN, 100);
    assert.equal(clock.elapsed(200), null);
  });

  test("never reads a time before the start", () => {
    const clock = new AttemptClock();
    clock.observe(0, 5000);
    assert.equal(clock.elapsed(4000), 0);
  });
});

describe("nextTime", () => {
  test("is the elapsed time, never before the previous action's", () => {
    assert.equal(nextTime([], 1200), 1200);
    assert.equal(nextTime([100, 2000], 1500), 2000);
  });

  test("is the start (or the previous time) before the server has answered", () => {
    assert.equal(nextTime([], null), 0);
    assert.equal(nextTime([0, 0], null), 0);
    assert.equal(nextTime([700], null), 700);
  });
});

describe("serverMs", () => {
  test("measures between two of the server's times, whatever the page's clock says", () => {
    assert.equal(serverMs("2026-12-01T08:00:00.000000Z", "2026-12-01T08:01:02.500000Z"), 62_500);
  });

  test("is 0 when the attempt was never saved", () => {
    assert.equal(serverMs("2026-12-01T08:00:00Z", null), 0);
  });
});

describe("alignedTimes", () => {
  test("gives one non-decreasing time per action", () => {
    assert.deepEqual(alignedTimes([5, 3, 8], 3), [5, 5, 8]);
    assert.deepEqual(alignedTimes([5, 9, 12], 2), [5, 9]);
    assert.deepEqual(alignedTimes([5], 3), [5, 5, 5]);
    assert.deepEqual(alignedTimes(undefined, 2), [0, 0]);
    assert.deepEqual(alignedTimes([1.9, "x", -4, 7], 4), [1, 1, 1, 7]);
  });
});

describe("resumeGame", () => {
  const local = { log: ["S", "52", "34"], times: [0, 900, 2100] };

  test("goes on with this browser's game when the server saved a part of it", () => {
    const resumed = resumeGame(local, { log: ["S", "52"], savedMs: 1000 });
    assert.deepEqual(resumed, { log: ["S", "52", "34"], times: [0, 900, 2100], ahead: true });
  });

  test("goes on with the same game, nothing to save, when both agree", () => {
    const resumed = resumeGame(local, { log: ["S", "52", "34"], savedMs: 2500 });
    assert.deepEqual(resumed, { log: ["S", "52", "34"], times: [0, 900, 2100], ahead: false });
  });

  test("takes the server's longer game, its new actions timed at their save", () => {
    const server = { log: ["S", "52", "34", "S", "WF"], savedMs: 60_000 };
    const resumed = resumeGame(local, server);
    assert.deepEqual(resumed.log, server.log);
    assert.deepEqual(resumed.times, [0, 900, 2100, 60_000, 60_000]);
    assert.equal(resumed.ahead, false);
  });

  test("takes the server's game when the two differ, keeping the times they share", () => {
    const server = { log: ["S", "S", "S"], savedMs: 4000 };
    const resumed = resumeGame(local, server);
    assert.deepEqual(resumed, { log: ["S", "S", "S"], times: [0, 4000, 4000], ahead: false });
  });

  test("gives a cleared browser the server's game", () => {
    const resumed = resumeGame({ log: [], times: [] }, { log: ["S", "52"], savedMs: 3000 });
    assert.deepEqual(resumed, { log: ["S", "52"], times: [3000, 3000], ahead: false });
  });

  test("never times a restored action before an action this browser saw", () => {
    const resumed = resumeGame(
      { log: ["S"], times: [9000] },
      { log: ["S", "52"], savedMs: 5000 }, // saved by a device whose last save was earlier
    );
    assert.deepEqual(resumed.times, [9000, 9000]);
  });

  test("does not change the game it was given", () => {
    const mine = { log: ["S"], times: [10] };
    resumeGame(mine, { log: ["S", "S"], savedMs: 50 });
    assert.deepEqual(mine, { log: ["S"], times: [10] });
  });
});

describe("staleSaveGame", () => {
  const local = { log: ["S", "52", "34"], times: [0, 900, 2100] };

  test("takes up the longer game another device saved, its new actions timed now", () => {
    const error = { code: "stale_save", log: "S 52 34 S WF", version: 7, actions: 5 };
    const next = staleSaveGame(local, error, 60_000);
    assert.deepEqual(next, {
      log: ["S", "52", "34", "S", "WF"],
      times: [0, 900, 2100, 60_000, 60_000],
      ahead: false,
      version: 7,
      savedLength: 5,
      adopted: true,
    });
  });

  test("takes up a stored game that went another way: the device that saved goes on", () => {
    const next = staleSaveGame(local, { log: "S 52 S", version: 3 }, 5000);
    assert.deepEqual(next.log, ["S", "52", "S"]);
    assert.deepEqual(next.times, [0, 900, 5000]);
    assert.equal(next.adopted, true);
    assert.equal(next.savedLength, 3);
  });

  test("keeps this game when the stored one is a part of it, to save the rest", () => {
    const next = staleSaveGame(local, { log: "S 52", version: 4 }, 5000);
    assert.deepEqual(next, { ...local, ahead: true, version: 4, savedLength: 2, adopted: false });
  });

  test("keeps this game, with nothing left to save, when the stored one is the same", () => {
    const next = staleSaveGame(local, { log: "S 52 34", version: 4 }, 5000);
    assert.equal(next.adopted, false);
    assert.equal(next.ahead, false);
    assert.equal(next.savedLength, 3);
  });

  test("a refusal without a readable version leaves the next save without one", () => {
    assert.equal(staleSaveGame(local, { log: "S" }, 0).version, null);
    assert.equal(staleSaveGame(local, { log: "S", version: "2" }, 0).version, null);
    assert.equal(staleSaveGame(local, undefined, null).adopted, false);
  });

  test("does not change the game it was given", () => {
    staleSaveGame(local, { log: "S S S S", version: 1 }, 10);
    assert.deepEqual(local, { log: ["S", "52", "34"], times: [0, 900, 2100] });
  });
});

describe("saveDelay", () => {
  test("waits for nothing when nothing is unsaved", () => {
    assert.equal(saveDelay(0, 0), null);
  });

  test("saves at once after SAVE_EVERY_ACTIONS actions", () => {
    assert.equal(saveDelay(SAVE_EVERY_ACTIONS, 0), 0);
    assert.equal(saveDelay(SAVE_EVERY_ACTIONS + 5, 0), 0);
  });

  test("else SAVE_EVERY_MS after the first unsaved action", () => {
    assert.equal(saveDelay(1, 0), SAVE_EVERY_MS);
    assert.equal(saveDelay(3, 4000), SAVE_EVERY_MS - 4000);
    assert.equal(saveDelay(3, SAVE_EVERY_MS + 1), 0);
  });
});

describe("saveRequest", () => {
  test("PATCHes the log with the CSRF token, kept alive when the page goes away", () => {
    const [url, init] = saveRequest({ url: "/a/", csrf: "tok", log: "S 52", keepalive: true });
    assert.equal(url, "/a/");
    assert.equal(init.method, "PATCH");
    assert.equal(init.keepalive, true);
    assert.equal(init.credentials, "same-origin");
    assert.equal(init.headers["X-CSRFToken"], "tok");
    assert.deepEqual(JSON.parse(init.body), { log: "S 52" });
  });

  test("names the version the log extends once an answer said it", () => {
    const [, init] = saveRequest({ url: "/a/", csrf: "tok", log: "S 52", version: 0 });
    assert.deepEqual(JSON.parse(init.body), { log: "S 52", version: 0 });
    assert.equal(init.keepalive, false);
  });
});

describe("attemptOutcome", () => {
  const cases = [
    [201, { status: "open" }, "open"],
    [200, { status: "open" }, "open"],
    [200, { status: "closed" }, "closed"],
    [404, { error: { code: "no_attempt" } }, "none"],
    [404, { error: { code: "day_not_open" } }, "none"],
    [409, { error: { code: "attempt_closed" } }, "closed"],
    [409, { error: { code: "day_closed" } }, "day_closed"],
    [409, { error: { code: "stale_save", log: "S", version: 2 } }, "stale"],
    [400, { error: { code: "illegal_action" } }, "refused"],
    [403, { error: { code: "player_banned" } }, "banned"],
    [403, { error: { code: "not_authenticated" } }, "sign_in"],
    [401, {}, "sign_in"],
    [429, {}, "retry"],
    [502, {}, "retry"],
  ];
  for (const [status, body, outcome] of cases) {
    test(`${status} ${body.error?.code ?? body.status ?? ""} means ${outcome}`, () => {
      assert.equal(attemptOutcome(status, body), outcome);
    });
  }

  test("a body that is not JSON is still read by its status", () => {
    assert.equal(attemptOutcome(503, {}), "retry");
    assert.equal(attemptOutcome(200, {}), "open");
  });
});
