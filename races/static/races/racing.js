/**
 * A race's page, its pure decisions: the server's clock read on this device,
 * the race's phase at a moment (lobby, countdown, running, over), and which
 * changes of the race are worth saying to a screen reader (a player joining
 * or leaving, the start, the end; never a move). No DOM and no network:
 * race.js passes in what the socket said.
 */

/** What to add to this device's clock (ms since the epoch) to read the server's,
 * from a message's `server_now` and when it arrived here. */
export function clockOffset(serverNow, receivedAt) {
  const server = Date.parse(serverNow);
  return Number.isNaN(server) ? 0 : server - receivedAt;
}

/**
 * The race's phase at `now` (the server's clock, ms since the epoch):
 * `{phase: "lobby"}`, `{phase: "countdown", seconds}` (whole seconds to the
 * start, rounded up), `{phase: "running", left}` (ms to the time limit) or
 * `{phase: "over"}` (stored, or the time limit passed: the server's end follows).
 */
export function racePhase(race, now) {
  if (race.status === "over") return { phase: "over" };
  if (!race.starts_at) return { phase: "lobby" };
  const starts = Date.parse(race.starts_at);
  const ends = Date.parse(race.ends_at);
  if (now < starts) return { phase: "countdown", seconds: Math.ceil((starts - now) / 1000) };
  if (now < ends) return { phase: "running", left: ends - now };
  return { phase: "over" };
}

/**
 * The notable changes from race state `before` to `after` (heard at `now`, the
 * server's clock), as `{key, params}` for the page's polite live region:
 * players joining the lobby or leaving, the countdown, the end with its
 * winner. Scores, moves and foundations change with every action and are
 * never said.
 */
export function raceNews(before, after, now) {
  const news = [];
  if (!before || !after) return news;
  const known = new Map(before.players.map((player) => [player.player, player]));
  for (const player of after.players) {
    const was = known.get(player.player);
    if (!was && after.status === "lobby") news.push({ key: "race_joined", params: player });
    if (was && !was.left && player.left) {
      news.push({ key: player.removed ? "race_removed_news" : "race_left", params: player });
    }
  }
  const phase = racePhase(after, now);
  if (before.status === "lobby" && phase.phase === "countdown") {
    news.push({ key: "race_countdown", params: { seconds: phase.seconds } });
  }
  if (before.status !== "over" && after.status === "over") news.push(raceEnd(after));
  return news;
}

/** How the race ended, as `{key, params}`: won by a player, by the best score, or neither. */
export function raceEnd(race) {
  if (race.winner && race.end === "won") {
    return { key: "race_won_by", params: { player: race.winner } };
  }
  if (race.winner) return { key: "race_best_score", params: { player: race.winner } };
  return { key: "race_over", params: {} };
}
