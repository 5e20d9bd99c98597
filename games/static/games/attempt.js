/**
 * The ranked attempt of the day, its pure decisions: whose saved game a page
 * reads, the per-action times (milliseconds since the attempt started, by the
 * server's clock), which game goes on when the server's saved game and this
 * browser's differ, and when to save. No DOM and no network: the page passes
 * in its clock readings and the server's answers.
 */
import { splitLog } from "./engine.js";

/** Save the attempt's game after this many new actions... */
export const SAVE_EVERY_ACTIONS = 20;
/** ...or this long after the first action not yet saved, whichever comes first. */
export const SAVE_EVERY_MS = 10_000;

/**
 * The localStorage key of the saved game of `deal` for `user` (null: the
 * anonymous visitor of this browser). Keyed per account, so that a game never
 * passes from one player to the next who signs in on the same browser.
 */
export function gameKey(user, deal) {
  return `easyharp.game.${user === null ? "anonymous" : `player:${user}`}.${deal}`;
}

/**
 * Where the attempt's start lies on the page's own clock. The page reads a
 * monotonic clock (`performance.now()`), which never jumps when the
 * computer's time is set, and the server says how long ago the attempt
 * started (`elapsed_ms`). The server's answer took a moment to arrive, so
 * `now - elapsed_ms` is at or after the true start: times measured from it
 * are never ahead of the server's, which refuses times later than its own
 * measure. Of several answers the earliest start is the closest.
 */
export class AttemptClock {
  constructor() {
    this.start = null;
  }

  /** An answer of the attempt API received at `now`, saying `elapsedMs` since the start. */
  observe(elapsedMs, now) {
    if (typeof elapsedMs !== "number" || !Number.isFinite(elapsedMs)) return;
    const start = now - elapsedMs;
    this.start = this.start === null ? start : Math.min(this.start, start);
  }

  /** Whole milliseconds since the start at `now`; null before any answer. */
  elapsed(now) {
    return this.start === null ? null : Math.max(0, Math.floor(now - this.start));
  }
}

/**
 * The time of the next action: `elapsed` (null before the server has
 * answered the start: the action is at the start) but never before the
 * previous action's, so the times never decrease.
 */
export function nextTime(times, elapsed) {
  return Math.max(times.length ? times[times.length - 1] : 0, elapsed ?? 0);
}

/** Milliseconds from `startedAt` to `savedAt` (ISO texts of the server), 0 when unknown. */
export function serverMs(startedAt, savedAt) {
  const ms = Date.parse(savedAt) - Date.parse(startedAt);
  return Number.isFinite(ms) ? Math.max(0, Math.floor(ms)) : 0;
}

/**
 * The game to go on with, from this browser's `local` game (`{log, times}`,
 * tokens and their times) and the server's saved `server` game (`{log,
 * savedMs}`: tokens, and when they were saved since the start). The longer
 * game wins when one extends the other; when they differ, the server's
 * (saved by the device played last). Actions this browser did not see get
 * the time of the save that brought them: the latest they can have been
 * played. Returns `{log, times, ahead}`, `ahead` true when this browser
 * holds actions the server has not saved yet.
 */
export function resumeGame(local, server) {
  const common = commonLength(local.log, server.log);
  const localTimes = alignedTimes(local.times, local.log.length);
  if (common === server.log.length) {
    return { log: local.log.slice(), times: localTimes, ahead: local.log.length > common };
  }
  const times = localTimes.slice(0, common);
  for (let i = common; i < server.log.length; i++) times.push(nextTime(times, server.savedMs));
  return { log: server.log.slice(), times, ahead: false };
}

/**
 * The game to go on with after a save was refused as stale (a 409
 * `stale_save`: another device saved since this one last heard from the
 * server). `local` is this browser's game (`{log, times}`), `error` the
 * refusal's `error` (the stored `log`, as text, and its `version`), and
 * `elapsedMs` the attempt's time at the refusal: the latest the stored game's
 * new actions can have been played. The stored game goes on unless it is a
 * part of this one (this browser played on from it, and saves the rest under
 * the stored version). Returns `{log, times, ahead, version, savedLength,
 * adopted}`: `savedLength` the actions the server holds, `adopted` true when
 * the stored game replaced this browser's, which the page then says.
 */
export function staleSaveGame(local, error, elapsedMs) {
  const server = { log: splitLog(error?.log ?? ""), savedMs: elapsedMs ?? 0 };
  const version = Number.isInteger(error?.version) ? error.version : null;
  return {
    ...resumeGame(local, server),
    version,
    savedLength: server.log.length,
    adopted: commonLength(local.log, server.log) < server.log.length,
  };
}

function commonLength(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * `times` cut or stretched to `length` entries, never decreasing (a missing
 * time is the one before it): stored times from an older page, or none, still
 * give one valid time per action.
 */
export function alignedTimes(times, length) {
  const aligned = [];
  for (let i = 0; i < length; i++) {
    const value = Array.isArray(times) ? times[i] : undefined;
    const time = typeof value === "number" && Number.isFinite(value) ? value : 0;
    aligned.push(nextTime(aligned, Math.max(0, Math.floor(time))));
  }
  return aligned;
}

/**
 * How long to wait before saving, given `unsaved` actions of which the first
 * was played `sinceFirstMs` ago: 0 to save now, null when nothing waits.
 */
export function saveDelay(unsaved, sinceFirstMs) {
  if (unsaved <= 0) return null;
  if (unsaved >= SAVE_EVERY_ACTIONS) return 0;
  return Math.max(0, SAVE_EVERY_MS - sinceFirstMs);
}

/**
 * The fetch arguments that save `log` (text) to the attempt at `url`, as an
 * extension of the attempt's `version` (null when no answer said it yet: the
 * server then takes only a log that extends the one it holds).
 */
export function saveRequest({ url, csrf, log, version = null, keepalive = false }) {
  return [
    url,
    {
      method: "PATCH",
      credentials: "same-origin",
      keepalive,
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": csrf,
      },
      body: JSON.stringify(version === null ? { log } : { log, version }),
    },
  ];
}

/**
 * What an answer of the attempt API means for the page: "open" or "closed"
 * (with the attempt), "none" (not started, or no day to start: a 404),
 * "refused" (a 400: the saved log was refused), "stale" (another device
 * saved a game this one has not seen: go on from it, `staleSaveGame`),
 * "day_closed" (the day is over), "banned", "sign_in" (the session is gone),
 * or "retry" (the network or the server failed, or the limit was reached:
 * try again later).
 */
export function attemptOutcome(status, body = {}) {
  const code = body?.error?.code;
  if (status === 200 || status === 201) return body?.status === "closed" ? "closed" : "open";
  if (status === 404) return "none";
  if (status === 409 && code === "attempt_closed") return "closed";
  if (status === 409 && code === "day_closed") return "day_closed";
  if (status === 409 && code === "stale_save") return "stale";
  if (status === 400) return "refused";
  if (status === 403 && code === "player_banned") return "banned";
  if (status === 401 || status === 403) return "sign_in";
  return "retry";
}
