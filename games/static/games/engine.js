/**
 * Easy Harp rules engine (EH1), the browser's copy of games.rules.
 *
 * A plain ES module, loaded as-is by the browser and by Node's test runner;
 * its only import is the reason catalogue generated from the Python engine.
 * It follows ../shared/RULES.md to the letter and is checked against the same
 * conformance vectors as the Python engine, so the two cannot drift apart:
 * the browser answers every move at once, the server still replays every
 * submitted log.
 *
 *   import { Game } from "./engine.js";
 *   const game = Game.fromCode("EH1-N-AAAAAAB");
 *   game.play("S");          // throws IllegalActionError / InvalidActionError
 *   game.table();            // the same dict as the Python Game.table()
 */

import { REASONS } from "./reasons.js";

/**
 * English template of every refusal by reason code, generated from
 * games/rules/errors.py (`make catalogue`); the pages translate by code.
 */
export { REASONS };

export const RULES_VERSION = "EH1";
export const RANKS = "A23456789TJQK";
export const SUITS = "SHDC";
/** Suit of each foundation F1..F8. */
export const FOUNDATION_SUITS = ["S", "S", "H", "H", "D", "D", "C", "C"];
export const MAX_DEAL = 999999;
export const UNDO_LIMIT = 100;
const COLUMN_COUNT = 9;
const CODE_PREFIX = "EH1-N-";

/** Fill a reason template's `{name}` fields. */
export function formatReason(template, params = {}) {
  return template.replace(/\{(\w+)\}/g, (whole, name) =>
    name in params ? String(params[name]) : whole,
  );
}

const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

// ---------------------------------------------------------------- cards

/** Rank 1..13 of a card id (ace = 1). */
export const rankOf = (id) => (id % 13) + 1;
/** Suit letter of a card id. */
export const suitOf = (id) => SUITS[Math.floor(id / 13) % 4];
/** True for hearts and diamonds. */
export const isRed = (id) => {
  const suit = suitOf(id);
  return suit === "H" || suit === "D";
};
/** Canonical text of a card id, e.g. "TH". */
export const cardText = (id) => RANKS[id % 13] + suitOf(id);

// ---------------------------------------------------------------- deals

const MASK64 = (1n << 64n) - 1n;

/** SplitMix64 seeded with `seed`; returns a function giving the next BigInt. */
export function splitMix64(seed) {
  let state = BigInt(seed) & MASK64;
  return () => {
    state = (state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  };
}

/** The 104 card ids of deal `number` in shuffled order (EH1 steps 1-3). */
export function shuffledDeck(number) {
  checkDealNumber(number);
  const deck = Array.from({ length: 104 }, (_, i) => i);
  const next = splitMix64(number);
  for (let i = 103; i >= 1; i--) {
    const j = Number(next() % BigInt(i + 1));
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  return deck;
}

/** Error for a deal code or number that cannot be read. */
export class DealCodeError extends Error {
  constructor(message) {
    super(message);
    this.name = "DealCodeError";
  }
}

function checkDealNumber(number) {
  if (!Number.isInteger(number) || number < 1 || number > MAX_DEAL) {
    throw new DealCodeError(`deal number must be between 1 and ${MAX_DEAL}, not ${number}`);
  }
}

/** The code of deal `number`: "EH1-N-" and 7 base-26 letters. */
export function dealCode(number) {
  checkDealNumber(number);
  let letters = "";
  let rest = number;
  for (let i = 0; i < 7; i++) {
    letters = String.fromCharCode(65 + (rest % 26)) + letters;
    rest = Math.floor(rest / 26);
  }
  return CODE_PREFIX + letters;
}

/** The deal number of a code (case and surrounding blanks ignored). */
export function parseDealCode(code) {
  const text = String(code).trim().toUpperCase();
  if (!text.startsWith(CODE_PREFIX)) {
    throw new DealCodeError(`a deal code starts with ${CODE_PREFIX}, not ${JSON.stringify(code)}`);
  }
  const letters = text.slice(CODE_PREFIX.length);
  if (letters.length !== 7) {
    throw new DealCodeError(
      `a deal code has 7 letters after ${CODE_PREFIX}, not ${letters.length}`,
    );
  }
  if (!/^[A-Z]{7}$/.test(letters)) {
    throw new DealCodeError(`a deal code uses only the letters A to Z: ${JSON.stringify(code)}`);
  }
  let number = 0;
  for (const letter of letters) number = number * 26 + (letter.charCodeAt(0) - 65);
  if (number < 1 || number > MAX_DEAL) {
    throw new DealCodeError(`deal code ${text} is deal ${number}, outside 1..${MAX_DEAL}`);
  }
  return number;
}

// ---------------------------------------------------------------- actions

/** Error for an action refused by the rules (or unreadable: see below). */
export class IllegalActionError extends Error {
  constructor({ code, token, index = null, params = {} }) {
    const words = "source" in params ? { ...params, source: placeInWords(params.source) } : params;
    const reason = formatReason(REASONS[code] ?? code, words);
    super(index === null ? `"${token}": ${reason}` : `action ${index} "${token}": ${reason}`);
    this.name = "IllegalActionError";
    this.code = code;
    this.token = token;
    this.index = index;
    this.params = params;
    this.reason = reason;
  }
}

/** Error for text that is not an action at all (code "unreadable_action"). */
export class InvalidActionError extends IllegalActionError {
  constructor({ token, index = null }) {
    super({ code: "unreadable_action", token, index });
    this.name = "InvalidActionError";
  }
}

const MOVE_PATTERN = /^([1-9]|W|F[1-8])([1-9]|W|F[1-8]?)$/;

/**
 * Read one token into `{kind: "stock"|"undo"|"move", from, to, text, written}`.
 * Places: {type: "column", index 0..8} | {type: "waste"} |
 * {type: "foundation", index 0..7 or null for "the first that accepts"}.
 */
export function parseAction(token) {
  // Refusals quote the token as written; the log keeps the canonical text.
  const written = String(token);
  const text = written.trim().toUpperCase();
  if (text === "S") return { kind: "stock", text, written };
  if (text === "U") return { kind: "undo", text, written };
  const match = MOVE_PATTERN.exec(text);
  if (!match) throw new InvalidActionError({ token: written });
  return { kind: "move", from: parsePlace(match[1]), to: parsePlace(match[2]), text, written };
}

function parsePlace(text) {
  if (text === "W") return { type: "waste" };
  if (text[0] === "F")
    return { type: "foundation", index: text.length > 1 ? Number(text[1]) - 1 : null };
  return { type: "column", index: Number(text) - 1 };
}

/** Split a log (text or array of tokens) into tokens; any run of blanks separates. */
export function splitLog(log) {
  if (Array.isArray(log)) return log.map((token) => String(token));
  return String(log)
    .split(/\s+/)
    .filter((token) => token !== "");
}

/** The canonical text of a list of tokens. */
export function formatLog(tokens) {
  return tokens.map((token) => String(token).trim().toUpperCase()).join(" ");
}

// ---------------------------------------------------------------- game

/** A place as the log writes it, the machine-readable form refusals carry: "3", "W", "F2". */
function placeToken(place) {
  if (place.type === "waste") return "W";
  if (place.type === "foundation") return `F${place.index + 1}`;
  return String(place.index + 1);
}

/** How the English reasons name a place written as in the log: "column 3", "the waste", "F2". */
export function placeInWords(token) {
  if (/^[1-9]$/.test(token)) return `column ${token}`;
  return token === "W" ? "the waste" : token;
}

/** True when `card` may go on a column whose top card is `top` (null = empty). */
export function fitsOnColumn(card, top) {
  if (top === null || top === undefined) return rankOf(card) === 13;
  return isRed(card) !== isRed(top) && rankOf(top) === rankOf(card) + 1;
}

/** True when `card` may go on foundation `index` (0..7) holding `pile`. */
export function fitsOnFoundation(card, index, pile) {
  if (suitOf(card) !== FOUNDATION_SUITS[index]) return false;
  const topRank = pile.length === 0 ? 0 : rankOf(pile[pile.length - 1]);
  return rankOf(card) === topRank + 1;
}

/** Length of the ordered run (alternating colours, descending) at the top of `up`. */
export function topRunLength(up) {
  if (up.length === 0) return 0;
  let length = 1;
  for (let i = up.length - 1; i > 0; i--) {
    if (!fitsOnColumn(up[i], up[i - 1])) break;
    length++;
  }
  return length;
}

/** Index in `up` of the king heading the top run, or -1 when the run has no king. */
export function kingRunStart(up) {
  const length = topRunLength(up);
  for (let i = up.length - length; i < up.length; i++) {
    if (rankOf(up[i]) === 13) return i;
  }
  return -1;
}

/** An Easy Harp game: the table, the score, the move count and the undo history. */
export class Game {
  /** A new game of deal `number` (1..999,999). */
  constructor(number) {
    const deck = shuffledDeck(number);
    this.number = number;
    this.code = dealCode(number);
    this.columns = Array.from({ length: COLUMN_COUNT }, () => ({ down: [], up: [] }));
    let k = 0;
    for (let row = 0; row < COLUMN_COUNT; row++) {
      for (let col = row; col < COLUMN_COUNT; col++) {
        this.columns[col].down.push(deck[k++]);
      }
    }
    for (const column of this.columns) column.up.push(column.down.pop());
    // The stock is kept top-last: the next card to turn up is stock[stock.length - 1].
    this.stock = deck.slice(k).reverse();
    this.waste = [];
    this.foundations = Array.from({ length: 8 }, () => []);
    this.scored = new Set();
    this.score = 0;
    this.moves = 0;
    this.log = [];
    this.history = [];
  }

  /** A new game from a deal code. */
  static fromCode(code) {
    return new Game(parseDealCode(code));
  }

  /** A new game of `deal` (code or number) with `log` played; throws at the first refusal. */
  static replay(deal, log) {
    const game = typeof deal === "number" ? new Game(deal) : Game.fromCode(deal);
    game.playLog(log);
    return game;
  }

  get won() {
    return this.foundations.every((pile) => pile.length === 13);
  }

  get undoLeft() {
    return this.history.length;
  }

  /** Play every token of `log`; a refusal carries its 1-based index. */
  playLog(log) {
    const tokens = splitLog(log);
    tokens.forEach((token, i) => {
      try {
        this.play(token);
      } catch (error) {
        if (error instanceof IllegalActionError) {
          error.index = i + 1;
          error.message = `action ${i + 1} "${error.token}": ${error.reason}`;
        }
        throw error;
      }
    });
    return this;
  }

  /** Why `token` would be refused (a reason code), or null when it is legal. */
  refusal(token) {
    try {
      const copy = this.copy();
      copy.play(token);
      return null;
    } catch (error) {
      if (error instanceof IllegalActionError) return error.code;
      throw error;
    }
  }

  /** Play one action; on refusal nothing changes and IllegalActionError is thrown. */
  play(token) {
    const action = parseAction(token);
    if (this.won) throw new IllegalActionError({ code: "game_over", token: action.written });
    if (action.kind === "undo") {
      this.undo(action.written);
      return;
    }
    const snapshot = this.snapshot();
    if (action.kind === "stock") this.tapStock(action.written);
    else this.move(action);
    this.moves += 1;
    this.log.push(action.text);
    this.history.push(snapshot);
    if (this.history.length > UNDO_LIMIT) this.history.shift();
  }

  undo(written = "U") {
    const snapshot = this.history.pop();
    if (!snapshot) throw new IllegalActionError({ code: "nothing_to_undo", token: written });
    this.restore(snapshot);
    // Undo restores the table and the score but neither adds nor takes back a move.
    this.log.push("U");
  }

  tapStock(written) {
    if (this.stock.length > 0) {
      this.waste.push(this.stock.pop());
    } else if (this.waste.length > 0) {
      // Same order again: the first card turned up in the last pass comes up first.
      this.stock = this.waste.reverse();
      this.waste = [];
    } else {
      throw new IllegalActionError({ code: "empty_stock_and_waste", token: written });
    }
  }

  move({ from, to, written }) {
    const refuse = (code, params = {}) => {
      throw new IllegalActionError({ code, token: written, params });
    };
    if (to.type === "waste") refuse("waste_is_not_a_destination");
    if (from.type === "foundation" && to.type === "foundation") refuse("foundation_to_foundation");
    if (from.type === "column" && to.type === "column" && from.index === to.index)
      refuse("same_column");

    const source = this.sourcePile(from);
    if (source.length === 0) refuse("empty_source", { source: placeToken(from) });
    const card = source[source.length - 1];

    if (to.type === "foundation") {
      let index = to.index;
      if (index === null) {
        index = this.foundationFor(card);
        if (index === -1) refuse("no_foundation_accepts", { card: cardText(card) });
      } else if (!fitsOnFoundation(card, index, this.foundations[index])) {
        refuse("foundation_refuses", {
          foundation: String(index + 1),
          card: cardText(card),
          suit: SUIT_NAMES[FOUNDATION_SUITS[index]],
        });
      }
      source.pop();
      this.foundations[index].push(card);
      if (!this.scored.has(card)) {
        // Fair play: a card earns its foundation points once per game.
        this.scored.add(card);
        this.score += 10;
      }
      this.turnUp(from);
      return;
    }

    const target = this.columns[to.index];
    const targetTop = target.up.length ? target.up[target.up.length - 1] : null;
    if (targetTop === null) {
      // A move from a column to an empty column is the king-headed run's block move.
      const start =
        from.type === "column"
          ? kingRunStart(source)
          : rankOf(card) === 13
            ? source.length - 1
            : -1;
      if (start === -1) refuse("king_only");
      target.up.push(...source.splice(start));
      if (from.type === "waste") this.score += 5;
      this.turnUp(from);
      return;
    }
    if (!fitsOnColumn(card, targetTop)) {
      if (from.type === "column") {
        if (this.runWouldFit(source, targetTop)) refuse("one_card_at_a_time");
        const start = kingRunStart(source);
        if (start !== -1 && start < source.length - 1)
          refuse("run_only_to_empty", { card: cardText(source[start]) });
      }
      refuse("column_refuses", { card: cardText(card), target: cardText(targetTop) });
    }
    source.pop();
    target.up.push(card);
    if (from.type === "waste") this.score += 5;
    this.turnUp(from);
  }

  /** True when a card below the top of the ordered run on `up` would fit on `top`. */
  runWouldFit(up, top) {
    const length = topRunLength(up);
    for (let i = up.length - length; i < up.length - 1; i++) {
      if (fitsOnColumn(up[i], top)) return true;
    }
    return false;
  }

  sourcePile(place) {
    if (place.type === "waste") return this.waste;
    if (place.type === "foundation") return this.foundations[place.index];
    return this.columns[place.index].up;
  }

  /** Index of the first foundation F1..F8 that accepts `card`, or -1. */
  foundationFor(card) {
    return this.foundations.findIndex((pile, index) => fitsOnFoundation(card, index, pile));
  }

  turnUp(place) {
    if (place.type !== "column") return;
    const column = this.columns[place.index];
    if (column.up.length === 0 && column.down.length > 0) {
      column.up.push(column.down.pop());
      this.score += 5;
    }
  }

  snapshot() {
    return {
      columns: this.columns.map((c) => ({ down: c.down.slice(), up: c.up.slice() })),
      stock: this.stock.slice(),
      waste: this.waste.slice(),
      foundations: this.foundations.map((pile) => pile.slice()),
      scored: new Set(this.scored),
      score: this.score,
    };
  }

  restore(snapshot) {
    this.columns = snapshot.columns;
    this.stock = snapshot.stock;
    this.waste = snapshot.waste;
    this.foundations = snapshot.foundations;
    this.scored = snapshot.scored;
    this.score = snapshot.score;
  }

  /** An independent copy, history included. */
  copy() {
    const copy = Object.create(Game.prototype);
    Object.assign(copy, this, this.snapshot());
    copy.log = this.log.slice();
    copy.history = this.history.slice();
    return copy;
  }

  /** Every legal action as canonical tokens (for hints and tests). */
  legalActions() {
    if (this.won) return [];
    const tokens = [];
    if (this.stock.length || this.waste.length) tokens.push("S");
    const sources = ["W", ...Array.from({ length: 9 }, (_, i) => String(i + 1))];
    for (let f = 1; f <= 8; f++) sources.push(`F${f}`);
    const targets = Array.from({ length: 9 }, (_, i) => String(i + 1));
    for (let f = 1; f <= 8; f++) targets.push(`F${f}`);
    for (const a of sources) {
      for (const b of targets) {
        if (a === b || (a[0] === "F" && b[0] === "F")) continue;
        if (this.refusal(a + b) === null) tokens.push(a + b);
      }
    }
    if (this.history.length) tokens.push("U");
    return tokens;
  }

  /** The table as the same JSON-ready dict as the Python engine's Game.table(). */
  table() {
    return {
      deal: this.code,
      columns: this.columns.map((c) => ({ down: c.down.length, up: c.up.map(cardText) })),
      stock: this.stock.length,
      waste: this.waste.length,
      waste_top: this.waste.length ? cardText(this.waste[this.waste.length - 1]) : null,
      foundations: this.foundations.map((pile, i) => ({
        suit: FOUNDATION_SUITS[i],
        count: pile.length,
        top: pile.length ? cardText(pile[pile.length - 1]) : null,
      })),
      score: this.score,
      moves: this.moves,
      won: this.won,
      undo_left: this.undoLeft,
    };
  }
}
