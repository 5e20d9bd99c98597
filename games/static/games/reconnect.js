/**
 * When a page's socket connects again after a server process stopped: the
 * restart close code and the random wait that spreads the sockets of a
 * stopped process over a few seconds. Shared by every page with a socket (the
 * attempt, a race, watching, the boards); no DOM, no network.
 */

/**
 * The close code of a server process that is stopping (a restart, a rolling
 * deploy): its sockets connect again, to another process, each after a random
 * wait between these two so that they do not all come back at once.
 */
export const CLOSE_RESTART = 1012;
export const RESTART_WAIT_MIN_MS = 500;
export const RESTART_WAIT_MAX_MS = 5000;

/**
 * The wait before connecting again after a socket closed with `code`: a random
 * one (`random()` in [0, 1)) after a restart, else the backoff's `delay`.
 */
export function reconnectWait(code, delay, random = Math.random) {
  if (code !== CLOSE_RESTART) return delay;
  return Math.round(RESTART_WAIT_MIN_MS + random() * (RESTART_WAIT_MAX_MS - RESTART_WAIT_MIN_MS));
}
