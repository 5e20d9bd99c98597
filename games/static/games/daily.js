/**
 * The pure side of the daily loop's pages (no DOM, tested under Node): the
 * countdown's text, a result against par, a percentile, and the bars of a
 * histogram.
 */

/**
 * A game's duration in milliseconds as a clock shows it (`4:07`, `1:02:09`);
 * empty for none. Seconds are cut, never rounded, as the pages' `clock`
 * template filter cuts them: 2:05.9 is 2:05 on every page
 * (tests/js/clocks.json holds the cases both are checked on).
 */
export function clock(milliseconds) {
  if (milliseconds === null || milliseconds === undefined) return "";
  const total = Math.floor(milliseconds / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours
    ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}`
    : `${minutes}:${seconds}`;
}

/** Milliseconds as a countdown shows them: `H:MM:SS` (never below zero). */
export function countdownText(milliseconds) {
  const total = Math.max(0, Math.floor(milliseconds / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = String(Math.floor((total % 3600) / 60)).padStart(2, "0");
  const seconds = String(total % 60).padStart(2, "0");
  return `${hours}:${minutes}:${seconds}`;
}

/** Moves against par as a signed number (`+4`, `-2`, `±0`); empty without a par. */
export function againstPar(moves, par) {
  if (par === null || par === undefined) return "";
  const over = moves - par;
  if (over === 0) return "±0";
  return over > 0 ? `+${over}` : `${over}`;
}

/**
 * The share of a board's players ranked below `rank`, in percent (100: the
 * only one), a half rounded up: in whole numbers, as the server computes it.
 */
export function percentile(rank, total) {
  if (total <= 1) return 100;
  return Math.floor((200 * (total - rank) + total - 1) / (2 * (total - 1)));
}

/**
 * A place among a board's players in words, from the page's strings
 * (`standing_*`, games/web.py `standing_strings`): at the ends the words say
 * the place ("Best of 12", "Last of 12", alone on the board), else the share
 * of players ranked below ("Better than 64%").
 */
export function standing(rank, total, strings) {
  let key = "standing_better";
  if (total <= 1) key = "standing_alone";
  else if (rank <= 1) key = "standing_best";
  else if (rank >= total) key = "standing_last";
  const number = key === "standing_better" ? percentile(rank, total) : total;
  return (strings[key] ?? key).replace("{n}", String(number));
}

/**
 * The bars of a record's histogram (`moves_vs_par` of the stats API):
 * `{label, count, width}`, width in percent of the largest bucket.
 */
export function moveBars(buckets, parOrBetter) {
  const largest = Math.max(0, ...buckets.map((bucket) => bucket.games));
  return buckets.map((bucket) => {
    let label;
    if (bucket.min === null) label = parOrBetter;
    else if (bucket.max === null) label = `≥ +${bucket.min}`;
    else label = `+${bucket.min}–${bucket.max}`;
    const width = largest ? Math.round((100 * bucket.games) / largest) : 0;
    return { label, count: bucket.games, width };
  });
}

// The share grid's squares as the pages draw them (an emoji font may be missing),
// as `leaderboards.cards.SQUARE_KINDS` names them.
export const GRID_SQUARES = { "🟩": "full", "🟨": "part", "⬛": "empty" };

/**
 * One row of a share's grid as its text writes it (its squares, then what it counts
 * in words): the kinds of its squares and its words (tests/js/grids.json holds the
 * cases the server's text is checked on too).
 */
export function gridRow(line) {
  const chars = Array.from(line);
  const kinds = [];
  while (chars.length && GRID_SQUARES[chars[0]]) kinds.push(GRID_SQUARES[chars.shift()]);
  return { kinds, label: chars.join("").trim() };
}
