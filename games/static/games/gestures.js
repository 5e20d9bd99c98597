/**
 * Which action a gesture means: a tap, a double tap, a drop or a key, read
 * against the engine's game. No DOM here: the play page finds the place a
 * pointer touched and plays what these functions answer.
 *
 * Places are the data-place names of the drawn table: "s" the stock, "w" the
 * waste, "f0".."f7" the foundations, "c0".."c8" the columns; `index` is a
 * card's position among its column's face-up cards.
 *
 * A gesture answers one of:
 *   null                                  it means nothing: nothing happens
 *   { action: "3F" }                      play this log action
 *   { refused: code, params, remind }     refuse with an engine reason code
 *                                         (and, with `remind`, the one-card reminder)
 *   { message: "no_place" }               refuse with this page string: a double
 *                                         tap found no place for the card
 */
import { cardText, fitsOnColumn, kingRunStart, rankOf } from "./engine.js";

/** Two taps on the same card this close together are a double tap. */
export const DOUBLE_TAP_MS = 300;
/** A press becomes a drag once the pointer has moved this far. */
export const DRAG_THRESHOLD_PX = 6;

/** Log name of a place: "c3" → "4", "w" → "W", "f2" → "F3" (null for the stock). */
export function placeToken(place) {
  if (place === "w") return "W";
  if (place[0] === "c") return String(Number(place.slice(1)) + 1);
  if (place[0] === "f") return `F${Number(place.slice(1)) + 1}`;
  return null;
}

function columnOf(game, place) {
  return game.columns[Number(place.slice(1))];
}

/** True once a press has moved (`dx`, `dy`) pixels: far enough to be a drag. */
export function isDrag(dx, dy) {
  return Math.hypot(dx, dy) >= DRAG_THRESHOLD_PX;
}

/** A tap: the stock turns a card; a top card goes to the first foundation that takes it. */
export function tapGesture(game, place, index) {
  if (place === "s") return { action: "S" };
  if (place[0] === "f") return null;
  if (place[0] === "c" && index !== columnOf(game, place).up.length - 1) return null;
  return { action: `${placeToken(place)}F` };
}

/**
 * A double tap: a place on the board. The longest column that takes the card
 * first (the leftmost of equals), then an empty column for a king (or the
 * run a king heads).
 */
export function doubleTapGesture(game, place, index) {
  if (place === "s") return null;
  let card;
  let isKingRun = false;
  let top = -1;
  if (place[0] === "c") {
    const column = columnOf(game, place);
    top = column.up.length - 1;
    isKingRun = index === kingRunStart(column.up);
    if (index !== top && !isKingRun) return null;
    card = column.up[top];
  } else if (place === "w") {
    card = game.waste[game.waste.length - 1];
  } else {
    const pile = game.foundations[Number(place.slice(1))];
    card = pile[pile.length - 1];
  }
  if (card === undefined) return null;
  const source = placeToken(place);
  const sourceColumn = place[0] === "c" ? Number(place.slice(1)) : -1;
  // A run below its top card can only go to an empty column.
  const singleCard = !(isKingRun && index !== top);
  if (singleCard) {
    const candidates = game.columns
      .map((column, i) => ({ i, size: column.down.length + column.up.length, column }))
      .filter(
        ({ i, column }) =>
          i !== sourceColumn &&
          column.up.length > 0 &&
          fitsOnColumn(card, column.up[column.up.length - 1]),
      )
      .sort((a, b) => b.size - a.size || a.i - b.i);
    if (candidates.length) return { action: source + String(candidates[0].i + 1) };
  }
  const empty = game.columns.findIndex(
    (column, i) => i !== sourceColumn && column.up.length === 0 && column.down.length === 0,
  );
  const movesAKing = place[0] === "c" ? isKingRun : rankOf(card) === 13;
  if (empty !== -1 && movesAKing) return { action: source + String(empty + 1) };
  return { message: "no_place" };
}

/**
 * A drop of the card at (`place`, `index`) on `target`. A run that may not
 * move is refused here, before the engine, because the engine's "37" always
 * means the top card: the player meant the run, and is reminded of the rule.
 */
export function dropGesture(game, place, index, target) {
  if (target === place) return null;
  const source = placeToken(place);
  if (source === null) return null;
  // Anywhere on the foundations finds the first one that takes the card.
  if (target[0] === "f") return { action: `${source}F` };
  if (target[0] !== "c") return null;
  if (place[0] === "c") {
    const column = columnOf(game, place);
    const runLength = column.up.length - index;
    const targetEmpty = columnOf(game, target).up.length === 0;
    const kingStart = kingRunStart(column.up);
    if (targetEmpty) {
      if (index !== kingStart) {
        if (runLength > 1) return { refused: "one_card_at_a_time", params: {}, remind: true };
        return { refused: "king_only", params: {}, remind: false };
      }
    } else if (runLength > 1) {
      if (index === kingStart) {
        return {
          refused: "run_only_to_empty",
          params: { card: cardText(column.up[kingStart]) },
          remind: true,
        };
      }
      return { refused: "one_card_at_a_time", params: {}, remind: true };
    }
  }
  return { action: source + placeToken(target) };
}

const MOVE_SOURCE = /^[1-9W]$/;
const MOVE_TARGET = /^[1-9F]$/;
const FOUNDATION = /^[1-8]$/;

/**
 * A key press, given the source the keys have picked up so far (null, "1".."9",
 * "W", "F" waiting for a foundation's number, or "F1".."F8"). F and a
 * foundation's number pick up that foundation's top card, which only a column
 * takes. Answers the new source and what to do:
 *   { does: "play", action, source, preventDefault }   play `action`
 *   { does: "pick", source }      a move's source is picked up: wait for its target
 *   { does: "cancel", source: null }                    Escape drops the source
 *   { does: "hint", source: null }                      ask for a hint
 *   { does: "nothing", source }
 * `key` is KeyboardEvent.key; Alt and Meta chords are left to the browser.
 */
export function keyGesture(source, key, { ctrl = false, alt = false, meta = false } = {}) {
  const nothing = { does: "nothing", source };
  if (alt || meta) return nothing;
  const name = key.toUpperCase();
  if (ctrl)
    return name === "Z" ? { does: "play", action: "U", source, preventDefault: true } : nothing;
  if (name === "ESCAPE") return { does: "cancel", source: null };
  if (source === null) {
    if (name === "H") return { does: "hint", source };
    if (name === "S" || name === " ")
      return { does: "play", action: "S", source, preventDefault: true };
    if (name === "U") return { does: "play", action: "U", source, preventDefault: false };
    if (MOVE_SOURCE.test(name) || name === "F") return { does: "pick", source: name };
    return nothing;
  }
  if (source === "F") return FOUNDATION.test(name) ? { does: "pick", source: `F${name}` } : nothing;
  if (source[0] === "F" && name === "F") return nothing;
  if (MOVE_TARGET.test(name))
    return { does: "play", action: source + name, source: null, preventDefault: false };
  return nothing;
}

/**
 * Taps that tell a double tap from a single one: a tap waits `delayMs` for a
 * second tap on the same card and then counts as a single tap; a tap on
 * another card drops the waiting one. The stock has no double tap, so a tap
 * on it answers at once, and so does every tap while `doubleTap()` says no
 * (the "Double click" setting off). Clock and timers are injected
 * (performance.now, setTimeout and clearTimeout in the page).
 *
 * Returns `tap(place, index)`, which calls `onTap` or `onDoubleTap` with the
 * place and index in time.
 */
export function tapSorter({
  onTap,
  onDoubleTap,
  now,
  setTimer,
  clearTimer,
  delayMs = DOUBLE_TAP_MS,
  doubleTap = () => true,
}) {
  let last = { place: null, index: null, time: 0, timer: null };
  return function tap(place, index) {
    if (place === "s" || !doubleTap()) {
      onTap(place, index);
      return;
    }
    const time = now();
    if (last.timer && last.place === place && last.index === index && time - last.time < delayMs) {
      clearTimer(last.timer);
      last = { place: null, index: null, time: 0, timer: null };
      onDoubleTap(place, index);
      return;
    }
    if (last.timer) clearTimer(last.timer);
    const timer = setTimer(() => {
      last.timer = null;
      onTap(place, index);
    }, delayMs);
    last = { place, index, time, timer };
  };
}
