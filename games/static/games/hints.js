/**
 * A hint's answer, its pure decision: which of the page's strings says why the
 * server gave no hint. Every refusal the hint API gives has a code, and each
 * is said in the page's language, never in the API's English. No DOM and no
 * network: play.js passes in the response's status and body.
 */

/** The refusals a page can meet, by the API's error code, and the string that says each. */
const HINT_REFUSALS = {
  busy: "hint_busy",
  // The day's deal: hints only within the ranked attempt, or after it.
  replay_locked: "hint_locked",
  // A race plays this deal: its hints wait for the race's end.
  race_running: "hint_race_running",
  log_too_long: "hint_log_too_long",
};

/**
 * Why a hint was refused, from the answer's HTTP `status` and JSON `body`:
 * `null` when it was not (a 2xx answer), `{reason, params}` for an action the
 * engine refused (said with the engine's reason catalogue), or `{key, params}`,
 * a string of the page. A code the page does not know (a deal or log it did
 * not send) gets a general sentence rather than the API's English.
 */
export function hintRefusal(status, body) {
  if (status >= 200 && status < 300) return null;
  const error = body?.error ?? {};
  if (status === 429) return { key: "hint_throttled", params: {} };
  // A day prepared ahead is refused without its date: nothing to say of it.
  if (error.code === "replay_locked" && !error.date) return { key: "hint_not_given", params: {} };
  if (Object.hasOwn(HINT_REFUSALS, error.code))
    return { key: HINT_REFUSALS[error.code], params: {} };
  if (status >= 500) return { key: "hint_failed", params: {} };
  if (error.code === "illegal_action" && error.reason_code) {
    return { reason: error.reason_code, params: error.params ?? {} };
  }
  return { key: "hint_not_given", params: {} };
}
