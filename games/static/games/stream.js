/**
 * The ranked attempt's socket (ws/daily/<date>/attempt/), its pure decisions:
 * which actions to send, what the server's `state` means for the page's game,
 * what a close means, and how long to wait before connecting again. No DOM
 * and no network: play.js owns the socket and passes in what it hears.
 *
 * Each action is numbered by its place in the log, so sending it again is
 * harmless: the server acknowledges an action it holds. After every
 * (re)connect the page sends every action past the server's count: the queue
 * of a page that played on while the network was away.
 */
import { splitLog } from "./engine.js";

/** First wait before connecting again, doubled after each failure up to the cap. */
export const RECONNECT_FIRST_MS = 1000;
export const RECONNECT_MAX_MS = 30_000;

/** The socket's address for the attempt of `date`, on the page's own host. */
export function streamUrl(location, date) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${location.host}/ws/daily/${date}/attempt/`;
}

/** The messages that send actions `from + 1` to the end of `log` (tokens). */
export function actionMessages(log, from) {
  const messages = [];
  for (let n = from + 1; n <= log.length; n++) {
    messages.push(JSON.stringify({ type: "action", n, action: log[n - 1] }));
  }
  return messages;
}

/**
 * What the server's `state` (its stored `log` as text) means for the page's
 * game `log` (tokens): "behind" when the server holds a part of it (the
 * page sends the rest), "adopt" when the server holds actions the page does
 * not (another device played on: the page goes on from the server's game).
 */
export function stateOutcome(log, state) {
  const stored = splitLog(state?.log ?? "");
  let i = 0;
  while (i < stored.length && i < log.length && stored[i] === log[i]) i++;
  return { outcome: i === stored.length ? "behind" : "adopt", stored };
}

/**
 * What a closed socket means: "closed" (the attempt was submitted),
 * "day_closed", "banned", "sign_in", or "retry" (the network, the server, a
 * refusal to resync from: connect again later). `error` is the code of the
 * last error message before the close, if any.
 */
export function closeOutcome(code, error) {
  if (code === 4409) return error === "day_closed" ? "day_closed" : "closed";
  if (code === 4403) return "banned";
  if (code === 4401) return "sign_in";
  if (code === 4404) return "none";
  return "retry";
}

/** The wait before the next connection after one that failed after `delay`. */
export function nextDelay(delay) {
  return Math.min(RECONNECT_MAX_MS, Math.max(RECONNECT_FIRST_MS, delay * 2));
}
