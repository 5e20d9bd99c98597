// Which action a tap, a double tap, a drop or a key means (gestures.js), on
// positions built with the browser's engine: each answered action is then
// played by the engine to show it does what the gesture meant.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { Game, RANKS, SUITS, cardText } from "../../games/static/games/engine.js";
import {
  DOUBLE_TAP_MS,
  doubleTapGesture,
  dropGesture,
  isDrag,
  keyGesture,
  placeToken,
  tapGesture,
  tapSorter,
} from "../../games/static/games/gestures.js";

/**
 * A game at a chosen position. `columns` lists up to 9 columns as
 * "face-down count | face-up cards bottom to top" ("2 | KS QH"; "" is empty);
 * `waste` and each of `foundations` list cards bottom to top. Every card is a
 * real one of the two decks, and the stock holds the rest.
 */
function position({ columns = [], waste = "", foundations = [] } = {}) {
  const free = new Set(Array.from({ length: 104 }, (_, id) => id));
  const take = (text) => {
    const first = RANKS.indexOf(text[0]) + 13 * SUITS.indexOf(text[1]);
    const id = free.has(first) ? first : first + 52;
    assert.ok(free.delete(id), `more than two ${text}`);
    return id;
  };
  const cards = (text) => text.split(" ").filter(Boolean).map(take);
  const game = new Game(1);
  const specs = Array.from({ length: 9 }, (_, i) => columns[i] ?? "");
  const parsed = specs.map((spec) => {
    const [down, up = ""] = spec.includes("|") ? spec.split("|") : ["0", spec];
    return { down: Number(down), up: cards(up) };
  });
  game.waste = cards(waste);
  game.foundations = Array.from({ length: 8 }, (_, i) => cards(foundations[i] ?? ""));
  const rest = [...free];
  game.columns = parsed.map(({ down, up }) => ({ down: rest.splice(0, down), up }));
  game.stock = rest;
  return game;
}

/** The face-up cards of each column, as text. */
const tops = (game) => game.columns.map((column) => column.up.map(cardText).join(" "));

/** Play a gesture's action on `game` and return the game. */
function play(game, gesture) {
  assert.ok(gesture?.action, `expected an action, got ${JSON.stringify(gesture)}`);
  assert.equal(game.refusal(gesture.action), null, `the engine refuses ${gesture.action}`);
  game.play(gesture.action);
  return game;
}

describe("places and drags", () => {
  test("a place's log name is the column's number, W, or the foundation's F number", () => {
    assert.equal(placeToken("c0"), "1");
    assert.equal(placeToken("c8"), "9");
    assert.equal(placeToken("w"), "W");
    assert.equal(placeToken("f0"), "F1");
    assert.equal(placeToken("f7"), "F8");
    assert.equal(placeToken("s"), null);
  });

  test("a press becomes a drag once it has moved 6 pixels in any direction", () => {
    assert.equal(isDrag(0, 0), false);
    assert.equal(isDrag(3, 4), false); // 5 px
    assert.equal(isDrag(-5.9, 0), false);
    assert.equal(isDrag(6, 0), true);
    assert.equal(isDrag(0, -6), true);
    assert.equal(isDrag(3.6, 4.8), true); // 6 px
  });
});

describe("a tap", () => {
  test("on the stock turns a card", () => {
    const game = new Game(1);
    assert.deepEqual(tapGesture(game, "s", 0), { action: "S" });
    play(game, tapGesture(game, "s", 0));
    assert.equal(game.table().waste, 1);
  });

  test("on a column's top card sends it to the first foundation that takes it", () => {
    const game = position({ columns: ["1 | 9C", "2 | 7D AH"], foundations: ["", "", "", ""] });
    assert.deepEqual(tapGesture(game, "c1", 1), { action: "2F" });
    play(game, tapGesture(game, "c1", 1));
    assert.equal(game.table().foundations[2].top, "AH"); // F3, the first hearts foundation
    assert.equal(game.score, 10);
  });

  test("on a card under the top card means nothing", () => {
    const game = position({ columns: ["", "2 | 7D AH"] });
    assert.equal(tapGesture(game, "c1", 0), null);
  });

  test("on the waste sends its top card to a foundation", () => {
    const game = position({ waste: "4S 2D", foundations: ["", "", "", "", "AD"] });
    assert.deepEqual(tapGesture(game, "w", 0), { action: "WF" });
    play(game, tapGesture(game, "w", 0));
    assert.equal(game.table().foundations[4].top, "2D");
  });

  test("on a foundation means nothing", () => {
    const game = position({ foundations: ["AS"] });
    assert.equal(tapGesture(game, "f0", 0), null);
  });

  test("on a top card no foundation takes still names the action, for the engine to refuse", () => {
    const game = new Game(1); // column 1 shows 6D
    assert.deepEqual(tapGesture(game, "c0", 0), { action: "1F" });
    assert.equal(game.refusal("1F"), "no_foundation_accepts");
  });
});

describe("a double tap", () => {
  test("sends a card to the longest column that takes it", () => {
    // 8H fits on 9S (column 2, 3 cards) and on 9C (column 4, 5 cards).
    const game = position({ columns: ["1 | 8H", "2 | 9S", "", "4 | 9C", "6 | 5D"] });
    assert.deepEqual(doubleTapGesture(game, "c0", 0), { action: "14" });
    play(game, doubleTapGesture(game, "c0", 0));
    assert.equal(tops(game)[3], "9C 8H");
  });

  test("between columns of the same length, picks the leftmost", () => {
    const game = position({ columns: ["3 | 9C", "1 | 5D", "3 | 9S", "", "8H"] });
    assert.deepEqual(doubleTapGesture(game, "c4", 0), { action: "51" });
  });

  test("never sends a card back to its own column", () => {
    // The 7H on top of column 1 has nowhere but column 3.
    const game = position({ columns: ["5 | 8S 7H", "1 | 9D", "8C"] });
    assert.deepEqual(doubleTapGesture(game, "c0", 1), { action: "13" });
  });

  test("sends a king to the first empty column, other than its own", () => {
    const game = position({ columns: ["3 | 4S", "", "KD", "", "JS"] });
    assert.deepEqual(doubleTapGesture(game, "c2", 0), { action: "32" });
    play(game, doubleTapGesture(game, "c2", 0));
    assert.deepEqual(tops(game).slice(0, 3), ["4S", "KD", ""]);
  });

  test("prefers a column that takes the card over an empty one", () => {
    // The queen fits on the king of column 1.
    const game = position({ columns: ["2 | KS", "", "1 | QH"] });
    assert.deepEqual(doubleTapGesture(game, "c2", 0), { action: "31" });
  });

  test("on the king heading a run sends the whole run to an empty column", () => {
    // JC on top would fit on QD in column 3, but the player tapped the king.
    const game = position({ columns: ["2 | 5H KS QH JC", "", "3 | QD"] });
    assert.deepEqual(doubleTapGesture(game, "c0", 1), { action: "12" });
    play(game, doubleTapGesture(game, "c0", 1));
    assert.deepEqual(tops(game).slice(0, 3), ["5H", "KS QH JC", "QD"]);
  });

  test("on the top card of a king's run moves that card alone", () => {
    const game = position({ columns: ["2 | 5H KS QH JC", "", "3 | QD"] });
    assert.deepEqual(doubleTapGesture(game, "c0", 3), { action: "13" });
    play(game, doubleTapGesture(game, "c0", 3));
    assert.deepEqual(tops(game).slice(0, 3), ["5H KS QH", "", "QD JC"]);
  });

  test("on a card inside a run that no king heads means nothing", () => {
    const game = position({ columns: ["2 | 5H QS JH TC", "", "3 | KD"] });
    assert.equal(doubleTapGesture(game, "c0", 1), null);
    assert.equal(doubleTapGesture(game, "c0", 2), null);
    assert.equal(doubleTapGesture(game, "c0", 0), null);
  });

  test("says there is no place when nothing takes the card", () => {
    // No column takes the 4H, and an empty column takes only a king.
    const game = position({ columns: ["1 | 4H", "", "7S"] });
    assert.deepEqual(doubleTapGesture(game, "c0", 0), { message: "no_place" });
  });

  test("says there is no place for a king's run when no column is empty", () => {
    const game = position({
      columns: ["2 | KS QH", "1 | 9D", "3 | 4C", "JS", "TD", "5H", "8H", "2C", "3S"],
    });
    assert.deepEqual(doubleTapGesture(game, "c0", 0), { message: "no_place" });
  });

  test("sends the waste's top card to a column, and a king from the waste to an empty column", () => {
    const game = position({ columns: ["4 | 6C", "2 | 6D"], waste: "KH 5H" });
    assert.deepEqual(doubleTapGesture(game, "w", 0), { action: "W1" });
    play(game, doubleTapGesture(game, "w", 0));
    assert.deepEqual(doubleTapGesture(game, "w", 0), { action: "W3" });
    play(game, doubleTapGesture(game, "w", 0));
    assert.deepEqual(tops(game).slice(0, 3), ["6C 5H", "6D", "KH"]);
    assert.equal(doubleTapGesture(game, "w", 0), null); // the waste is empty now
  });

  test("takes a foundation's top card back to a column", () => {
    const game = position({ columns: ["1 | 6S"], foundations: ["", "", "AH 2H 3H 4H 5H"] });
    assert.deepEqual(doubleTapGesture(game, "f2", 0), { action: "F31" });
    play(game, doubleTapGesture(game, "f2", 0));
    assert.deepEqual(tops(game)[0], "6S 5H");
    assert.equal(doubleTapGesture(game, "f0", 0), null); // an empty foundation
  });

  test("on the stock means nothing", () => {
    assert.equal(doubleTapGesture(new Game(1), "s", 0), null);
  });
});

describe("a drop", () => {
  test("on the card's own place means nothing", () => {
    const game = new Game(1);
    assert.equal(dropGesture(game, "c4", 0, "c4"), null);
    assert.equal(dropGesture(game, "w", 0, "s"), null); // the stock takes nothing
  });

  test("of a top card on a column moves it there", () => {
    const game = new Game(1); // 8H on column 5, 9S on column 2
    assert.deepEqual(dropGesture(game, "c4", 0, "c1"), { action: "52" });
    play(game, dropGesture(game, "c4", 0, "c1"));
    assert.equal(tops(game)[1], "9S 8H");
  });

  test("anywhere on the foundations asks for the first foundation that takes the card", () => {
    const game = position({ columns: ["1 | AC"], waste: "AD" });
    assert.deepEqual(dropGesture(game, "c0", 0, "f3"), { action: "1F" });
    play(game, dropGesture(game, "c0", 0, "f3"));
    assert.equal(game.table().foundations[6].top, "AC");
    assert.deepEqual(dropGesture(game, "w", 0, "f0"), { action: "WF" });
  });

  test("of the waste's card on a column moves it there", () => {
    const game = position({ columns: ["", "", "2 | 9C"], waste: "8D" });
    assert.deepEqual(dropGesture(game, "w", 0, "c2"), { action: "W3" });
    play(game, dropGesture(game, "w", 0, "c2"));
    assert.equal(game.score, 5);
  });

  test("of a foundation's card on a column moves it there", () => {
    const game = position({ columns: ["1 | 3H"], foundations: ["AS 2S"] });
    assert.deepEqual(dropGesture(game, "f0", 0, "c0"), { action: "F11" });
  });

  test("of a card the column refuses still names the action, for the engine to refuse", () => {
    const game = new Game(1); // 6D onto 9S
    assert.deepEqual(dropGesture(game, "c0", 0, "c1"), { action: "12" });
    assert.equal(game.refusal("12"), "column_refuses");
  });

  test("of a run on a column is refused with the one-card reminder", () => {
    const game = position({ columns: ["2 | 9S 8H 7C", "1 | 9D"] });
    assert.deepEqual(dropGesture(game, "c0", 1, "c1"), {
      refused: "one_card_at_a_time",
      params: {},
      remind: true,
    });
  });

  test("of a king-headed run on a column says it goes only to an empty column", () => {
    const game = position({ columns: ["2 | KS QH JC", "1 | 9D"] });
    assert.deepEqual(dropGesture(game, "c0", 0, "c1"), {
      refused: "run_only_to_empty",
      params: { card: "KS" },
      remind: true,
    });
  });

  test("of a king-headed run on an empty column moves the whole run", () => {
    const game = position({ columns: ["2 | 4D KS QH JC", "", "1 | 9D"] });
    assert.deepEqual(dropGesture(game, "c0", 1, "c1"), { action: "12" });
    play(game, dropGesture(game, "c0", 1, "c1"));
    assert.deepEqual(tops(game).slice(0, 2), ["4D", "KS QH JC"]);
  });

  test("of a run no king heads on an empty column is refused with the reminder", () => {
    const game = position({ columns: ["2 | QS JH TC", ""] });
    assert.deepEqual(dropGesture(game, "c0", 1, "c1"), {
      refused: "one_card_at_a_time",
      params: {},
      remind: true,
    });
  });

  test("of a single card that is no king on an empty column says only a king goes there", () => {
    const game = position({ columns: ["2 | 5D QS", ""] });
    assert.deepEqual(dropGesture(game, "c0", 1, "c1"), {
      refused: "king_only",
      params: {},
      remind: false,
    });
  });

  test("of a king alone on an empty column moves it", () => {
    const game = position({ columns: ["2 | 5D KC", ""] });
    assert.deepEqual(dropGesture(game, "c0", 1, "c1"), { action: "12" });
    play(game, dropGesture(game, "c0", 1, "c1"));
    assert.deepEqual(tops(game).slice(0, 2), ["5D", "KC"]);
  });
});

describe("keys", () => {
  /** Press `keys` in turn from no source; return the actions played and the last answer. */
  function press(keys, options = {}) {
    let source = null;
    const actions = [];
    let answer = null;
    for (const key of keys) {
      answer = keyGesture(source, key, options);
      source = answer.source;
      if (answer.does === "play") actions.push(answer.action);
    }
    return { actions, answer, source };
  }

  test("a source then a target play a move, in either case", () => {
    assert.deepEqual(press(["3", "7"]).actions, ["37"]);
    assert.deepEqual(press(["w", "f"]).actions, ["WF"]);
    assert.deepEqual(press(["W", "2", "9", "F"]).actions, ["W2", "9F"]);
    assert.equal(press(["3", "7"]).source, null);
  });

  test("a source waits for its target and says so", () => {
    assert.deepEqual(keyGesture(null, "4"), { does: "pick", source: "4" });
    assert.deepEqual(keyGesture(null, "w"), { does: "pick", source: "W" });
    // Keys that are no target leave the source picked up.
    assert.deepEqual(press(["4", "x", "0", "S", "U", "H", " "]), {
      actions: [],
      answer: { does: "nothing", source: "4" },
      source: "4",
    });
  });

  test("F and a foundation's number pick up its top card, which goes to a column", () => {
    assert.deepEqual(keyGesture(null, "f"), { does: "pick", source: "F" });
    assert.deepEqual(keyGesture("F", "3"), { does: "pick", source: "F3" });
    assert.deepEqual(press(["f", "2", "7"]).actions, ["F27"]);
    assert.deepEqual(press(["F", "8", "1"]).actions, ["F81"]);
    // No foundation 9 or 0, and a foundation's card goes to no foundation.
    assert.deepEqual(press(["F", "9", "0", "x"]).source, "F");
    assert.deepEqual(press(["F", "4", "F"]).source, "F4");
    assert.deepEqual(press(["F", "4", "F", "5"]).actions, ["F45"]);
    assert.deepEqual(press(["F", "Escape", "3", "7"]).actions, ["37"]);
  });

  test("Escape drops the source", () => {
    assert.deepEqual(keyGesture("4", "Escape"), { does: "cancel", source: null });
    assert.deepEqual(keyGesture(null, "Escape"), { does: "cancel", source: null });
    assert.deepEqual(press(["4", "Escape", "7"]).actions, []);
  });

  test("S and space turn the stock, U undoes, H asks for a hint", () => {
    assert.deepEqual(keyGesture(null, "s"), {
      does: "play",
      action: "S",
      source: null,
      preventDefault: true,
    });
    assert.deepEqual(keyGesture(null, " "), {
      does: "play",
      action: "S",
      source: null,
      preventDefault: true,
    });
    assert.deepEqual(keyGesture(null, "u"), {
      does: "play",
      action: "U",
      source: null,
      preventDefault: false,
    });
    assert.deepEqual(keyGesture(null, "h"), { does: "hint", source: null });
  });

  test("Ctrl+Z undoes, even with a source picked up, which stays", () => {
    assert.deepEqual(keyGesture(null, "z", { ctrl: true }), {
      does: "play",
      action: "U",
      source: null,
      preventDefault: true,
    });
    assert.deepEqual(keyGesture("3", "Z", { ctrl: true }), {
      does: "play",
      action: "U",
      source: "3",
      preventDefault: true,
    });
    assert.deepEqual(keyGesture(null, "s", { ctrl: true }), { does: "nothing", source: null });
  });

  test("Alt and Meta chords are left to the browser", () => {
    assert.deepEqual(keyGesture(null, "s", { alt: true }), { does: "nothing", source: null });
    assert.deepEqual(keyGesture("3", "7", { meta: true }), { does: "nothing", source: "3" });
    assert.deepEqual(keyGesture(null, "z", { ctrl: true, meta: true }), {
      does: "nothing",
      source: null,
    });
  });

  test("letters and digits that are no place mean nothing", () => {
    for (const key of ["0", "x", "Enter", "ArrowLeft", "Tab"]) {
      assert.deepEqual(keyGesture(null, key), { does: "nothing", source: null }, key);
    }
  });

  test("keys play a game the engine accepts", () => {
    const game = new Game(1); // 8H on column 5, 9S on column 2
    for (const action of press(["5", "2", "s", "u", "s"]).actions) game.play(action);
    assert.deepEqual(game.log, ["52", "S", "U", "S"]);
    assert.equal(tops(game)[1], "9S 8H");
  });
});

describe("taps in time", () => {
  /** A clock and timers that move only when told. */
  function fakeTime() {
    let time = 0;
    let next = 1;
    const timers = new Map();
    return {
      now: () => time,
      setTimer: (callback, ms) => {
        timers.set(next, { at: time + ms, callback });
        return next++;
      },
      clearTimer: (id) => timers.delete(id),
      pending: () => timers.size,
      /** Time passes while the page is busy: no timer runs. */
      stall(ms) {
        time += ms;
      },
      advance(ms) {
        time += ms;
        for (const [id, timer] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
          if (timer.at > time) continue;
          timers.delete(id);
          timer.callback();
        }
      },
    };
  }

  function sorter(options = {}) {
    const clock = fakeTime();
    const heard = [];
    const tap = tapSorter({
      onTap: (place, index) => heard.push(["tap", place, index]),
      onDoubleTap: (place, index) => heard.push(["double", place, index]),
      ...clock,
      ...options,
    });
    return { tap, clock, heard };
  }

  test("with double click off a tap counts at once and two taps are two taps", () => {
    let doubleClick = false;
    const { tap, clock, heard } = sorter({ doubleTap: () => doubleClick });
    tap("c2", 1);
    assert.deepEqual(heard, [["tap", "c2", 1]]);
    tap("c2", 1);
    assert.deepEqual(heard, [
      ["tap", "c2", 1],
      ["tap", "c2", 1],
    ]);
    assert.equal(clock.pending(), 0);
    // Switched back on, a tap waits for a second one again.
    doubleClick = true;
    tap("c4", 0);
    assert.equal(heard.length, 2);
    clock.advance(300);
    assert.deepEqual(heard.at(-1), ["tap", "c4", 0]);
  });

  test("a single tap counts once no second tap has come for 300 ms", () => {
    const { tap, clock, heard } = sorter();
    assert.equal(DOUBLE_TAP_MS, 300);
    tap("c2", 1);
    clock.advance(299);
    assert.deepEqual(heard, []);
    clock.advance(1);
    assert.deepEqual(heard, [["tap", "c2", 1]]);
  });

  test("a second tap on the same card within 300 ms is a double tap, and no single tap", () => {
    const { tap, clock, heard } = sorter();
    tap("w", 0);
    clock.advance(299);
    tap("w", 0);
    assert.deepEqual(heard, [["double", "w", 0]]);
    clock.advance(1000);
    assert.deepEqual(heard, [["double", "w", 0]]);
    assert.equal(clock.pending(), 0);
  });

  test("two taps 300 ms apart are two single taps", () => {
    const { tap, clock, heard } = sorter();
    tap("c0", 0);
    clock.advance(300);
    tap("c0", 0);
    clock.advance(300);
    assert.deepEqual(heard, [
      ["tap", "c0", 0],
      ["tap", "c0", 0],
    ]);
  });

  test("a tap 300 ms after the first is no double tap, even when the first one's timer runs late", () => {
    const { tap, clock, heard } = sorter();
    tap("c0", 0);
    clock.stall(300);
    tap("c0", 0);
    clock.advance(300);
    // The late first tap is dropped like any tap followed by another.
    assert.deepEqual(heard, [["tap", "c0", 0]]);
  });

  test("a third quick tap starts over after a double tap", () => {
    const { tap, clock, heard } = sorter();
    tap("c0", 0);
    tap("c0", 0);
    tap("c0", 0);
    clock.advance(300);
    assert.deepEqual(heard, [
      ["double", "c0", 0],
      ["tap", "c0", 0],
    ]);
  });

  test("a quick tap on another card drops the first tap", () => {
    const { tap, clock, heard } = sorter();
    tap("c0", 0);
    clock.advance(100);
    tap("c1", 0);
    clock.advance(100);
    tap("c1", 1); // another card of the same column
    clock.advance(300);
    assert.deepEqual(heard, [["tap", "c1", 1]]);
  });

  test("a tap on the stock counts at once and leaves a waiting tap alone", () => {
    const { tap, clock, heard } = sorter();
    tap("c3", 0);
    tap("s", 0);
    tap("s", 0);
    assert.deepEqual(heard, [
      ["tap", "s", 0],
      ["tap", "s", 0],
    ]);
    clock.advance(300);
    assert.deepEqual(heard.at(-1), ["tap", "c3", 0]);
  });

  test("taps wired to the gestures play the game", () => {
    const clock = fakeTime();
    const game = position({ columns: ["AS", "2 | 9S", "1 | 8H"] });
    const perform = (gesture) => game.play(gesture.action);
    const tap = tapSorter({
      onTap: (place, index) => perform(tapGesture(game, place, index)),
      onDoubleTap: (place, index) => perform(doubleTapGesture(game, place, index)),
      ...clock,
    });
    tap("c0", 0);
    clock.advance(DOUBLE_TAP_MS);
    tap("c2", 0);
    tap("c2", 0);
    assert.deepEqual(game.log, ["1F", "32"]);
    assert.deepEqual(tops(game).slice(0, 2), ["", "9S 8H"]);
  });
});
