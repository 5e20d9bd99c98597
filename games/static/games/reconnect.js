/**
 * When a page's socket connects again after a server process stopped: the
 * restart close code and the random wait that spreads the sockets of a
 * stopped process over a few seconds, and of a crashed one over its backoff.
 * Shared by every page with a socket (the attempt, a race, watching, the
 * boards); no DOM, no network.
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
 * The wait before connecting again after a socket closed with `code` (`random()`
 * in [0, 1)): after a restart, a random one in the restart's window; after any
 * other loss (a process that crashed, the network), the backoff's `delay` less
 * up to half of it at random, so that the sockets of a crashed process do not
 * come back in the same instant either, nor fail and retry together.
 */
export function reconnectWait(code, delay, random = Math.random) {
  if (code !== CLOSE_RESTART) return Math.round(delay - (random() * delay) / 2);
  return Math.round(RESTART_WAIT_MIN_MS + random() * (RESTART_WAIT_MAX_MS - RESTART_WAIT_MIN_MS));
}
