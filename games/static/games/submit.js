/**
 * Submitting a game: one Idempotency-Key per log, sent again and again until
 * the server answers. The server stores a key's game once, so a retry after
 * a lost answer cannot store the game twice. No DOM and no network of its own:
 * the page passes in fetch, a timer and its pending submission.
 */

export const RETRY_FIRST_DELAY_MS = 1000;
export const RETRY_MAX_DELAY_MS = 30000;

/** A fresh Idempotency-Key: 32 hex digits from 16 random bytes. */
export function newIdempotencyKey(randomBytes = (n) => crypto.getRandomValues(new Uint8Array(n))) {
  // crypto.randomUUID needs a secure context; getRandomValues works everywhere.
  return [...randomBytes(16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The submission to send for `log`: `pending` itself when it already carries
 * this log (so a retry, a reload or a second click reuses its key), else a new
 * one with a new key, carrying the per-action `times` of a ranked attempt
 * (null: none), and `practice` when the game is not the ranked attempt's.
 */
export function pendingFor(
  pending,
  log,
  newKey = newIdempotencyKey,
  times = null,
  practice = false,
) {
  if (pending && pending.log === log) return pending;
  return {
    key: newKey(),
    log,
    ...(times ? { times } : {}),
    ...(practice ? { practice: true } : {}),
  };
}

/** How long to wait after failed attempt `attempt` (0 first): doubling from 1 s, at most 30 s. */
export function retryDelay(attempt) {
  return Math.min(RETRY_MAX_DELAY_MS, RETRY_FIRST_DELAY_MS * 2 ** attempt);
}

/** The codes of a 429 that no retry lifts before the next day: the player's ceilings of the day. */
export const DAY_CEILINGS = new Set(["too_many_games", "too_many_actions"]);

/**
 * What an HTTP status means for a submission: "retry" (the server is down,
 * failing or busy: the game may not be stored yet), "sign_in" (the player's
 * session is gone: keep the game for after signing in), "refused" (the server
 * answered no for good) or "stored".
 */
export function statusOutcome(status) {
  if (status >= 500 || status === 429) return "retry";
  if (status === 401 || status === 403) return "sign_in";
  if (status < 200 || status >= 300) return "refused";
  return "stored";
}

/** The fetch arguments that submit `pending` for `deal` to `url`. */
export function submissionRequest({ url, csrf, deal, pending }) {
  return [
    url,
    {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": csrf,
        "Idempotency-Key": pending.key,
      },
      body: JSON.stringify({
        deal,
        log: pending.log,
        ...(pending.times ? { times: pending.times } : {}),
        ...(pending.practice ? { practice: true } : {}),
      }),
    },
  ];
}

/**
 * Send the pending submission until the server answers it. A network failure,
 * a 5xx or a 429 is tried again after retryDelay(attempt), with the same key,
 * except a 429 for a ceiling of the day (DAY_CEILINGS), which is a refusal.
 * `current()` is read before every attempt, so a submission dropped meanwhile
 * (a restarted game) stops the retries.
 *
 * `onSend(attempt)` runs before each attempt, `onRetry(attempt, delayMs)`
 * after each failed one. `wait(ms)` resolves after `ms` (a setTimeout in the
 * page). Resolves to one of:
 *   { outcome: "stored", pending, body }
 *   { outcome: "refused", pending, body, status, statusText }
 *   { outcome: "sign_in", pending }     the submission is still pending
 *   { outcome: "dropped" }              nothing was pending any more
 */
export async function submitPending({
  current,
  url,
  csrf,
  deal,
  fetch,
  wait,
  onSend = () => {},
  onRetry = () => {},
}) {
  for (let attempt = 0; ; attempt++) {
    const pending = current();
    if (!pending) return { outcome: "dropped" };
    onSend(attempt);
    let response = null;
    try {
      response = await fetch(...submissionRequest({ url, csrf, deal, pending }));
    } catch {
      // The answer is lost, not refused: the game may or may not be stored.
    }
    let outcome = response === null ? "retry" : statusOutcome(response.status);
    // A 429 is read: a ceiling of the day is a refusal, not a wait.
    const ceiling = response?.status === 429 ? await response.json().catch(() => ({})) : null;
    if (DAY_CEILINGS.has(ceiling?.error?.code)) outcome = "refused";
    if (outcome === "retry") {
      const delayMs = retryDelay(attempt);
      onRetry(attempt, delayMs);
      await wait(delayMs);
      continue;
    }
    if (outcome === "sign_in") return { outcome, pending };
    const body = ceiling ?? (await response.json().catch(() => ({})));
    if (outcome === "refused")
      return { outcome, pending, body, status: response.status, statusText: response.statusText };
    return { outcome, pending, body };
  }
}
