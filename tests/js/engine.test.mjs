// The browser's rules engine against the shared conformance vectors
// (tests/vectors/, copied from ../shared/vectors/): the same deals card for
// card, the same score, moves and win for every log, the same refused index.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  Game,
  REASONS,
  DealCodeError,
  IllegalActionError,
  InvalidActionError,
  cardText,
  dealCode,
  formatLog,
  parseDealCode,
  shuffledDeck,
  splitLog,
} from "../../games/static/games/engine.js";

const vectors = new URL("../vectors/", import.meta.url);
const deals = JSON.parse(readFileSync(new URL("deals.json", vectors), "utf8")).deals;
const games = readFileSync(new URL("games.jsonl", vectors), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

describe("deals", () => {
  for (const deal of deals) {
    test(`deal ${deal.number} is dealt card for card`, () => {
      assert.equal(dealCode(deal.number), deal.code);
      assert.equal(parseDealCode(deal.code), deal.number);
      assert.deepEqual(shuffledDeck(deal.number).map(cardText), deal.shuffled);

      const game = new Game(deal.number);
      const columns = game.columns.map((column) => [
        ...column.down.map((id) => cardText(id).toLowerCase()),
        ...column.up.map(cardText),
      ]);
      assert.deepEqual(columns, deal.columns);
      const stockNextFirst = game.stock.slice().reverse().map(cardText);
      assert.deepEqual(stockNextFirst, deal.stock_next_first);
    });
  }

  test("deal 1 turns up its stock in order and recycles it in the same order", () => {
    const game = new Game(1);
    const first = [];
    for (let i = 0; i < 59; i++) {
      game.play("S");
      first.push(game.table().waste_top);
    }
    assert.equal(game.table().stock, 0);
    game.play("S"); // recycle
    assert.deepEqual(game.table(), { ...game.table(), stock: 59, waste: 0, waste_top: null });
    const second = [];
    for (let i = 0; i < 59; i++) {
      game.play("S");
      second.push(game.table().waste_top);
    }
    assert.deepEqual(second, first);
    assert.equal(game.moves, 119);
    assert.equal(game.score, 0);
  });

  test("codes read ignoring case and blanks, and bad codes say what is wrong", () => {
    assert.equal(parseDealCode("  eh1-n-aaaaaaf "), 5);
    assert.equal(dealCode(999999), "EH1-N-AACEXHN");
    const bad = {
      "EH2-N-AAAAAAB": /starts with/,
      "EH1-N-AAAAAB": /7 letters/,
      "EH1-N-AAAAA1B": /letters A to Z/,
      "EH1-N-AAAAAAA": /outside/,
      "EH1-N-ZZZZZZZ": /outside/,
    };
    for (const [code, message] of Object.entries(bad)) {
      assert.throws(
        () => parseDealCode(code),
        (error) => error instanceof DealCodeError && message.test(error.message),
      );
    }
    assert.throws(() => dealCode(0), DealCodeError);
    assert.throws(() => dealCode(1000000), DealCodeError);
  });
});

describe("logs", () => {
  games.forEach((vector, line) => {
    const label = `line ${line + 1}: ${vector.deal} ${"refused_at" in vector ? `refused at ${vector.refused_at}` : `score ${vector.score}`}`;
    test(label, () => {
      const tokens = splitLog(vector.log);
      if ("refused_at" in vector) {
        let refusal = null;
        try {
          Game.replay(vector.deal, vector.log);
        } catch (error) {
          refusal = error;
        }
        assert.ok(refusal instanceof IllegalActionError, `expected a refusal, got ${refusal}`);
        assert.equal(refusal.index, vector.refused_at);
        assert.equal(refusal.token, tokens[vector.refused_at - 1]);
        assert.ok(refusal.code in REASONS, `unknown reason code ${refusal.code}`);
        // Everything before the refused action is legal, and the refused action changes nothing.
        const game = Game.fromCode(vector.deal);
        game.playLog(tokens.slice(0, vector.refused_at - 1));
        const before = JSON.stringify(game.table());
        assert.throws(() => game.play(tokens[vector.refused_at - 1]), IllegalActionError);
        assert.equal(JSON.stringify(game.table()), before);
      } else {
        const game = Game.replay(vector.deal, vector.log);
        const table = game.table();
        assert.equal(table.score, vector.score);
        assert.equal(table.moves, vector.moves);
        assert.equal(table.won, vector.won);
        assert.equal(game.log.length, tokens.length);
        // The canonical log replays to the same table.
        assert.deepEqual(Game.replay(vector.deal, formatLog(game.log)).table(), table);
      }
    });
  });

  test("the vectors include a clean win worth 1,340 on deal 4", () => {
    const win = games.find((vector) => vector.won && vector.deal === dealCode(4));
    const game = Game.replay(win.deal, win.log);
    assert.equal(game.score, 1340);
    assert.equal(
      game.table().foundations.every((f) => f.count === 13),
      true,
    );
    assert.throws(
      () => game.play("U"),
      (error) => error.code === "game_over",
    );
    assert.throws(
      () => game.play("S"),
      (error) => error.code === "game_over",
    );
  });
});

describe("moves", () => {
  test("the table of a fresh deal is the documented dict", () => {
    const table = new Game(1).table();
    assert.deepEqual(Object.keys(table), [
      "deal",
      "columns",
      "stock",
      "waste",
      "waste_top",
      "foundations",
      "score",
      "moves",
      "won",
      "undo_left",
    ]);
    assert.equal(table.deal, "EH1-N-AAAAAAB");
    assert.deepEqual(
      table.columns.map((c) => c.up[0]),
      "6D 9S 4H 5C 8H 7H 6H 3D JC".split(" "),
    );
    assert.deepEqual(
      table.columns.map((c) => c.down),
      [0, 1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.equal(table.stock, 59);
    assert.deepEqual(
      table.foundations.map((f) => f.suit),
      ["S", "S", "H", "H", "D", "D", "C", "C"],
    );
    assert.deepEqual(table.foundations[0], { suit: "S", count: 0, top: null });
    assert.equal(table.undo_left, 0);
  });

  test("undo restores the table and score, keeps the move count, and stops at 100", () => {
    const game = new Game(1);
    const tables = [];
    for (let i = 0; i < 120; i++) {
      tables.push(game.table());
      game.play("S");
    }
    assert.equal(game.table().undo_left, 100);
    for (let i = 0; i < 100; i++) game.play("U");
    assert.deepEqual(game.table(), { ...tables[20], moves: 120, undo_left: 0 });
    assert.throws(
      () => game.play("u"),
      (error) => error.code === "nothing_to_undo",
    );
  });

  test("unreadable text is an InvalidActionError with the unreadable_action code", () => {
    const game = new Game(1);
    for (const token of ["X", "0F", "F9", "FF", "F3", "S1", "12 3", ""]) {
      assert.throws(
        () => game.play(token),
        (error) => error instanceof InvalidActionError && error.code === "unreadable_action",
        token,
      );
    }
    assert.throws(
      () => game.playLog("S S X"),
      (error) => error.index === 3 && error.token === "X",
    );
  });

  test("refusals carry the codes the pages translate", () => {
    const game = new Game(1); // tops: 6D 9S 4H 5C 8H 7H 6H 3D JC
    const code = (token) => game.refusal(token);
    assert.equal(code("11"), "same_column");
    assert.equal(code("1W"), "waste_is_not_a_destination");
    assert.equal(code("WF"), "empty_source");
    assert.equal(code("F12"), "empty_source");
    assert.equal(code("F1F2"), "foundation_to_foundation");
    assert.equal(code("1F"), "no_foundation_accepts");
    assert.equal(code("1F1"), "foundation_refuses");
    assert.equal(code("12"), "column_refuses");
    assert.equal(code("U"), "nothing_to_undo");
    assert.equal(code("S"), null);
    assert.equal(code("52"), null); // 8H onto 9S
    game.play("34"); // 4H onto 5C: column 4 ends 5C 4H
    // 4H does not fit on 6D but the 5C under it would: the one-card reminder.
    assert.equal(code("41"), "one_card_at_a_time");
    assert.equal(code("47"), "one_card_at_a_time");
    game.play("U");
    assert.equal(code("41"), null); // 5C alone onto 6D
  });

  test("refusals read like the Python engine's, with the same fields", () => {
    const game = new Game(1);
    const refusal = (token) => {
      try {
        game.play(token);
      } catch (error) {
        return error;
      }
      return null;
    };
    assert.equal(refusal("1F").message, '"1F": no foundation accepts 6D');
    assert.deepEqual(refusal("1F3").params, { foundation: "3", card: "6D", suit: "hearts" });
    assert.equal(
      refusal("12").reason,
      "6D does not go on 9S: a card goes on the next higher rank of the other colour",
    );
    assert.equal(refusal("WF").reason, "there is no card to move: the waste is empty");
    assert.equal(refusal("F23").reason, "there is no card to move: F2 is empty");
    // The fields are machine-readable, as the log writes places; only the reason spells them out.
    assert.deepEqual(refusal("WF").params, { source: "W" });
    assert.deepEqual(refusal("F23").params, { source: "F2" });
    assert.throws(
      () => game.playLog("S 1F"),
      (error) => error.message === 'action 2 "1F": no foundation accepts 6D',
    );
  });
});
