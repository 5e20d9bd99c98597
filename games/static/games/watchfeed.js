/**
 * The watch socket's messages, decided without the DOM (watch.js draws them).
 *
 * A snapshot says the view: `table` (the deal and the log, then `actions`
 * messages) or `progress` (cards on the foundations, score, moves: then
 * `progress` messages, never a table or an action, while the game is open).
 * Each `actions` message follows what the page has; one that leaves a gap
 * means something was lost, and the page asks for a fresh snapshot rather
 * than freeze.
 */

/** What the page does with an `actions` message when it has `have` actions:
 * `play` the tokens it lacks (in order), or, at a `gap`, ask for a snapshot. */
export function actionsOutcome(have, message) {
  const from = message.from;
  const actions = message.actions;
  if (!Number.isInteger(from) || from < 1 || !Array.isArray(actions)) {
    return { play: [], gap: false };
  }
  if (from > have + 1) return { play: [], gap: true };
  return { play: actions.slice(have + 1 - from), gap: false };
}

/** The progress a snapshot or a `progress` message shows, or null when it is not one. */
export function progressOf(message) {
  const fields = ["actions", "score", "moves", "foundations"];
  if (!fields.every((field) => Number.isInteger(message[field]))) return null;
  return {
    actions: message.actions,
    score: message.score,
    moves: message.moves,
    foundations: message.foundations,
    won: message.won === true,
  };
}

/** Whether a `progress` message moves the page on from `current` (an older one,
 * overtaken on its way, is left out). */
export function progressNewer(current, next) {
  return next !== null && (current === null || next.actions > current.actions);
}
