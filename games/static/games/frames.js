/**
 * The tables of a replay, rebuilt from its compact steps (no DOM, no engine).
 *
 * `GET /api/games/{id}/replay/` sends the deal's table once (`start`, the shape
 * of Game.table()), then for each action its `token` and only what it changed:
 * the table's single values (`stock`, `waste`, `waste_top`, `score`, `moves`,
 * `won`, `undo_left`), `columns` as `[column, down, kept, ...cards]` (the column
 * now has `down` face-down cards, keeps its first `kept` face-up cards and has
 * `cards` on them) and `foundations` as `[slot, count, top]`.
 *
 * A table shares with the one before it every column and foundation the action
 * left alone, so all the tables of a 20,000-action game fit in a few MB. Tables
 * are never changed once built: later ones share their parts.
 */

/** The table after `step`, from the table before it (which is left as it is). */
export function applyStep(table, step) {
  const next = { ...table };
  for (const [key, value] of Object.entries(step)) {
    if (key === "token") continue;
    if (key === "columns") {
      next.columns = [...table.columns];
      for (const [index, down, kept, ...cards] of value) {
        next.columns[index] = { down, up: table.columns[index].up.slice(0, kept).concat(cards) };
      }
    } else if (key === "foundations") {
      next.foundations = [...table.foundations];
      for (const [slot, count, top] of value) {
        next.foundations[slot] = { ...table.foundations[slot], count, top };
      }
    } else {
      next[key] = value;
    }
  }
  return next;
}

/** Every table of `replay` (`{start, steps}`): index 0 is the deal, index i follows action i. */
export function replayTables(replay) {
  const tables = [replay.start];
  for (const step of replay.steps) tables.push(applyStep(tables[tables.length - 1], step));
  return tables;
}

/** The places an action token names, as the log writes them: "52" → ["5", "2"], "WF1" → ["W", "F1"]. */
function tokenPlaces(token) {
  return token.toUpperCase().match(/[1-9W]|F[1-8]?/g) ?? [];
}

/**
 * What action `token` did, read off the tables before and after it:
 *   { kind: "stock", card }        a card turned up from the stock
 *   { kind: "recycle" }            the waste turned over into a new stock
 *   { kind: "undo" }
 *   { kind: "move", card, count, from, to }
 * `card` is the card that moved (the head of a run of `count` cards), `from`
 * and `to` the places as the log writes them ("5", "W", "F3"), the target
 * foundation resolved when the token said only "F".
 */
export function describeStep(before, after, token) {
  const text = token.toUpperCase();
  if (text === "U") return { kind: "undo" };
  if (text === "S") {
    return before.stock > 0 ? { kind: "stock", card: after.waste_top } : { kind: "recycle" };
  }
  const [from, target] = tokenPlaces(text);
  let to = target;
  let card = null;
  let count = 1;
  if (/^[1-9]$/.test(target)) {
    const index = Number(target) - 1;
    const kept = before.columns[index].up.length;
    count = after.columns[index].up.length - kept;
    card = after.columns[index].up[kept] ?? null;
  } else {
    const slot = after.foundations.findIndex(
      (foundation, i) => foundation.count > before.foundations[i].count,
    );
    if (slot >= 0) {
      to = `F${slot + 1}`;
      card = after.foundations[slot].top;
    }
  }
  return { kind: "move", card, count, from, to };
}
