// The replay page's decoding against the Python engine: tests/js/replays.json
// holds, for a few vector games, the replay the API serves and Game.table()
// after every action, both written by the Python engine
// (tests/games/test_replay_steps.py keeps the file current).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { applyStep, describeStep, replayTables } from "../../games/static/games/frames.js";

const games = JSON.parse(readFileSync(new URL("replays.json", import.meta.url), "utf8"));

function deepFreeze(value) {
  if (value && typeof value === "object") {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

describe("replay steps", () => {
  for (const { deal, replay, tables } of games) {
    test(`${deal}: the steps rebuild every table of the engine`, () => {
      assert.equal(replay.steps.length + 1, tables.length);
      const decoded = replayTables(replay);
      assert.equal(decoded.length, tables.length);
      decoded.forEach((table, index) => assert.deepEqual(table, tables[index], `table ${index}`));
    });

    test(`${deal}: no table is changed by the ones after it`, () => {
      // Frozen: any write to a table already built throws (modules are strict).
      const decoded = replayTables(deepFreeze(structuredClone(replay)));
      decoded.forEach((table, index) => {
        deepFreeze(table);
        if (index > 0) applyStep(table, replay.steps[index - 1]);
      });
      decoded.forEach((table, index) => assert.deepEqual(table, tables[index], `table ${index}`));
    });

    test(`${deal}: a table shares what its action left alone`, () => {
      const decoded = replayTables(replay);
      replay.steps.forEach((step, index) => {
        const [before, after] = [decoded[index], decoded[index + 1]];
        const changed = new Set((step.columns ?? []).map(([column]) => column));
        after.columns.forEach((column, number) => {
          assert.equal(column === before.columns[number], !changed.has(number));
        });
      });
    });
  }

  test("a step that wins sets `won`, and nothing it does not name changes", () => {
    const table = games[0].tables[0];
    const after = applyStep(table, { token: "9F", won: true, score: 1340 });
    assert.deepEqual(after, { ...table, won: true, score: 1340 });
  });
});

describe("what each step of a replay did", () => {
  for (const { deal, replay, tables } of games) {
    test(`${deal}: every move names the card that left its place and where it went`, () => {
      replay.steps.forEach(({ token }, index) => {
        const [before, after] = [tables[index], tables[index + 1]];
        const step = describeStep(before, after, token);
        const where = `action ${index + 1} ${token}`;
        if (token === "S") {
          assert.equal(step.kind, before.stock > 0 ? "stock" : "recycle", where);
          if (step.kind === "stock") assert.equal(step.card, after.waste_top, where);
          return;
        }
        if (token === "U") {
          assert.equal(step.kind, "undo", where);
          return;
        }
        assert.equal(step.kind, "move", where);
        if (step.from === "W") assert.equal(step.card, before.waste_top, where);
        else if (/^[1-9]$/.test(step.from)) {
          const up = before.columns[Number(step.from) - 1].up;
          assert.equal(up[up.length - step.count], step.card, where);
        }
        if (step.to.startsWith("F")) {
          assert.match(step.to, /^F[1-8]$/, where);
          assert.equal(after.foundations[Number(step.to[1]) - 1].top, step.card, where);
        } else {
          assert.ok(after.columns[Number(step.to) - 1].up.includes(step.card), where);
        }
      });
    });
  }

  test("a run to an empty column is named by its king, with its length", () => {
    const column = (up) => ({ down: 0, up });
    const empty = Array.from({ length: 7 }, () => column([]));
    const before = {
      stock: 0,
      columns: [column(["KS", "QH", "JC"]), column([]), ...empty],
      foundations: [],
    };
    const after = { ...before, columns: [column([]), column(["KS", "QH", "JC"]), ...empty] };
    assert.deepEqual(describeStep(before, after, "12"), {
      kind: "move",
      card: "KS",
      count: 3,
      from: "1",
      to: "2",
    });
  });
});
