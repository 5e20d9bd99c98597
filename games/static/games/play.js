/**
 * The play page, its DOM side: pointer and key events become the log actions
 * gestures.js names, played by the JavaScript engine; the game is kept in
 * localStorage per account (and for the anonymous visitor of the browser) so
 * it survives a reload (and a sign-in), and a won game is submitted at once
 * through submit.js (an Idempotency-Key, retried until the server answers).
 * The hint button asks the solver (POST /api/hint/) for the next action of a
 * win and points at it.
 *
 * A signed-in player's game of today's deal is their one ranked attempt
 * (attempt.js decides the times and which saved game goes on): the start
 * step's button, and nothing else, starts it on the server (the table is
 * shown only then; a visitor is asked to sign in), each action is sent over
 * the attempt's socket as it is played (stream.js: queued while the network
 * is away, sent again on reconnect) and timed by the server, so it continues
 * after a reload or on another device, and a hint asks first. While the socket is
 * down, the game is saved through the attempt API instead.
 */
import {
  Game,
  IllegalActionError,
  cardText,
  dealCode,
  formatLog,
  kingRunStart,
  MAX_DEAL,
  parseAction,
  splitLog,
} from "./engine.js";
import {
  AttemptClock,
  SAVE_EVERY_MS,
  alignedTimes,
  attemptOutcome,
  gameKey,
  nextTime,
  resumeGame,
  saveDelay,
  saveRequest,
  serverMs,
  staleSaveGame,
} from "./attempt.js";
import {
  RECONNECT_FIRST_MS,
  actionMessages,
  closeOutcome,
  nextDelay,
  stateOutcome,
  streamUrl,
} from "./stream.js";
import { reconnectWait } from "./reconnect.js";
import { showAfterGame } from "./aftergame.js";
import { describeStep } from "./frames.js";
import { hintRefusal } from "./hints.js";
import { pendingFor, submitPending } from "./submit.js";
import { tableInput } from "./tableinput.js";
import {
  actionText,
  announce,
  ask,
  cardLabel,
  clock,
  config,
  reasonText,
  renderTable,
  say,
  t,
} from "./ui.js";

const RULES_SWITCH_KEY = "easyharp.interactive-rules";

const tableElement = document.getElementById("table");
const storageKey = gameKey(config.user ?? null, config.deal);

/**
 * What is kept per account and deal: the log, its per-action times and
 * whether it is the ranked attempt's game, and any submission not yet
 * acknowledged.
 */
let saved = loadSaved(storageKey) ?? newSaved();
let game = restoreGame(saved.log);

function newSaved() {
  return { deal: config.deal, log: [], times: [], ranked: false, pending: null, submitted: null };
}

function loadSaved(key) {
  try {
    const value = JSON.parse(localStorage.getItem(key) ?? "null");
    if (value && Array.isArray(value.log)) return { ...newSaved(), ...value };
  } catch {
    // A corrupted entry is dropped: a new game is better than a broken page.
  }
  return null;
}

function restoreGame(log) {
  try {
    return Game.replay(config.deal, log);
  } catch {
    saved.log = [];
    saved.times = [];
    return Game.fromCode(config.deal);
  }
}

function persist() {
  saved.log = game.log.slice();
  try {
    localStorage.setItem(storageKey, JSON.stringify(saved));
  } catch {
    // Private mode or a full quota: the game still plays, it just won't survive a reload.
  }
}

// ---------------------------------------------------------------- drawing

function refresh() {
  const table = game.table();
  renderTable(tableElement, table);
  document.getElementById("score").textContent = String(table.score);
  document.getElementById("moves").textContent = String(table.moves);
  document.getElementById("undo-left").textContent = String(table.undo_left);
  document.getElementById("undo").disabled = table.undo_left === 0 || table.won;
  document.getElementById("submit-game").disabled =
    table.moves === 0 || saved.pending !== null || submitWaiting || isSubmitted();
  document.getElementById("hint").disabled =
    table.won || hintInFlight || attempt.mode === "loading";
  // The ranked game goes on to its end: a new start would play it again knowing its cards.
  restartButton.disabled = inAttempt() || !playable();
  restartButton.title = inAttempt() ? t("restart_ranked") : "";
  tableElement.dataset.moves = String(table.moves);
  // A hint answers one position: once the game moves on it no longer applies.
  if (hintShown && hintShown.log !== formatLog(game.log)) clearHint();
  else markHint();
}

// ---------------------------------------------------------------- actions

/** Play `token`; on refusal show why (translated) and return the reason code. */
function act(token, { quiet = false } = {}) {
  // Nothing is played on a table not shown: today's deal before its ranked start.
  if (!playable()) return "not_started";
  const wasWon = game.won;
  const wasNew = game.log.length === 0;
  const before = game.table();
  try {
    game.play(token);
  } catch (error) {
    if (!(error instanceof IllegalActionError)) throw error;
    if (!quiet) say(reasonText(error.code, error.params), "refused");
    return error.code;
  }
  say("");
  const done = actionText(describeStep(before, game.table(), token));
  // The table shows "Won!" (ui.js); screen readers hear it with the last move.
  announce(game.won && !wasWon ? `${done}. ${t("won")}` : done);
  hideReminder();
  recordAction(wasNew);
  persist();
  refresh();
  if (game.won && !wasWon) submitGame();
  return null;
}

const interactiveRules = document.getElementById("interactive-rules");
interactiveRules.checked = localStorage.getItem(RULES_SWITCH_KEY) !== "off";
interactiveRules.addEventListener("change", () => {
  localStorage.setItem(RULES_SWITCH_KEY, interactiveRules.checked ? "on" : "off");
  if (!interactiveRules.checked) hideReminder();
});

/** Show the one-card reminder, unless switched off; true when it shows. */
function showReminder() {
  if (!interactiveRules.checked) return false;
  document.getElementById("reminder-text").textContent = t("reminder");
  document.getElementById("reminder").hidden = false;
  return true;
}

function hideReminder() {
  document.getElementById("reminder").hidden = true;
}
document.getElementById("reminder-close").addEventListener("click", hideReminder);

/** Carry out what a gesture means (see gestures.js): play it, or say why not. */
function perform(gesture) {
  if (gesture === null) return;
  if (gesture.action) {
    act(gesture.action);
  } else if (gesture.refused) {
    // The reminder, when it shows, is the refusal (and an alert): the status
    // line does not say it a second time.
    if (gesture.remind && showReminder()) say("");
    else say(reasonText(gesture.refused, gesture.params), "refused");
  } else {
    say(t(gesture.message), "refused");
  }
}

// ---------------------------------------------------------------- pointer and keys

tableInput({
  table: tableElement,
  game: () => game,
  perform,
  play: (token) => act(token),
  say,
  hint: () => askHint(),
  ignore: () => confirmDialog.open,
});

document.getElementById("keyboard-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("action-input");
  for (const token of splitLog(input.value)) {
    if (act(token) !== null) break;
  }
  input.value = "";
});

document.getElementById("undo").addEventListener("click", () => act("U"));

// ---------------------------------------------------------------- deals

document.getElementById("random-deal").addEventListener("click", () => {
  const number = 1 + Math.floor(Math.random() * MAX_DEAL);
  location.assign(`${location.pathname}?deal=${dealCode(number)}`);
});

const restartButton = document.getElementById("restart");

/** A new game of the deal, after asking when the current one has moves. */
async function newGame(confirmLabel) {
  if (game.moves > 0 && !(await ask(t("confirm_restart"), confirmLabel))) return false;
  game = Game.fromCode(config.deal);
  saved = newSaved();
  persist();
  document.getElementById("result").hidden = true;
  say("");
  attempt.duration = null;
  refresh();
  showAttempt();
  showClock();
  return true;
}

restartButton.addEventListener("click", () => {
  if (!inAttempt() && playable()) newGame(restartButton.textContent);
});

// ---------------------------------------------------------------- confirmations

const confirmDialog = document.getElementById("confirm-dialog");

// ---------------------------------------------------------------- the ranked attempt

/*
 * The attempt's modes: "practice" (an anonymous visitor, another deal, or
 * the account may not play ranked), "loading" (asking the server for the
 * attempt), "none" (not started: the start step's button starts it, and
 * the table waits hidden), "starting" (the start is on its way), "open"
 * (this game is the ranked attempt: saved on the server, timed), "done" (submitted, or the day is
 * over: any further game is practice).
 */
const rankable = Boolean(config.user) && config.deal === config.daily_deal;
const attempt = {
  mode: rankable ? "loading" : "practice",
  note: "",
  assisted: false,
  clock: new AttemptClock(),
  duration: null, // the ranked game's duration once submitted
  savedLength: 0, // actions of this game the server has saved
  version: null, // the server's version of the saved game, which the next save extends
  sentLength: 0, // actions of the last save sent (in flight or answered)
  firstUnsavedAt: null,
  timer: null,
  ticker: null,
  ready: Promise.resolve(), // settles when the load or a start on its way is answered
  begunWhileLoading: false, // a new game's first action came before the server's answer
};

/** The attempt's socket (see "the attempt's socket" below). */
const stream = {
  socket: null,
  live: false, // the server's state came: actions go over the socket
  sentUpTo: 0,
  delay: RECONNECT_FIRST_MS,
  timer: null,
  error: null, // the code of the last error the server sent before closing
};

function inAttempt() {
  return attempt.mode === "open" || attempt.mode === "starting";
}

// Today's deal is played ranked first: a visitor is asked to sign in instead.
const dailyForVisitor = !config.user && config.deal === config.daily_deal;

/** Whether the start step stands in for the table: today's ranked game not started yet. */
function awaitingStart() {
  // An attempt started when the page was drawn is this table's, whatever follows,
  // and so is one started on this browser since (a page kept for offline use).
  if (!rankable || config.attempt_started || (saved.ranked && game.log.length > 0)) return false;
  return attempt.mode === "loading" || attempt.mode === "none" || attempt.mode === "starting";
}

/** Whether the table is shown and played. */
function playable() {
  return !dailyForVisitor && !awaitingStart();
}

/** The attempt API: `init` sent to the attempt's URL; never throws. */
async function attemptCall(init) {
  try {
    const response = await fetch(config.attempt_url, {
      credentials: "same-origin",
      ...init,
      headers: { Accept: "application/json", "X-CSRFToken": config.csrf, ...init.headers },
    });
    const now = performance.now();
    const body = await response.json().catch(() => ({}));
    return { outcome: attemptOutcome(response.status, body), status: response.status, body, now };
  } catch {
    return { outcome: "retry", status: 0, body: {}, now: performance.now() };
  }
}

function setMode(mode, note = "") {
  attempt.mode = mode;
  attempt.note = note;
  clearInterval(attempt.ticker);
  attempt.ticker = mode === "open" ? setInterval(showClock, 1000) : null;
  if (mode !== "open") clearTimeout(attempt.timer);
  if (mode === "open") streamConnect();
  else streamClose();
  showAttempt();
  showClock();
  refresh();
}

/** Take up the server's attempt (an answer of GET or POST). */
function applyAttempt(answer, { started = false } = {}) {
  const body = answer.body;
  attempt.clock.observe(body.elapsed_ms, answer.now);
  attempt.assisted = Boolean(body.assisted);
  showSaveFailed(null);
  if (body.status === "closed") {
    endAttempt("attempt_done");
    return;
  }
  const server = {
    log: splitLog(body.log ?? ""),
    savedMs: serverMs(body.started_at, body.saved_at),
  };
  const resumed = resumeGame({ log: game.log, times: saved.times }, server);
  goOnWith(resumed, { savedLength: server.log.length, version: body.version });
  saved.ranked = true;
  persist();
  setMode("open", started && server.log.length === 0 ? "attempt_started" : "attempt_resumed");
  scheduleSave();
}

/**
 * Go on with `next` (`{log, times}`, as attempt.js chose it) of which the
 * server holds `savedLength` actions at `version`; returns false when its log
 * does not replay here (it always should: the server checked it) and this
 * game goes on.
 */
function goOnWith(next, { savedLength, version }) {
  if (formatLog(next.log) !== formatLog(game.log)) {
    try {
      game = Game.replay(config.deal, next.log);
    } catch {
      return false;
    }
    saved.pending = null;
    saved.submitted = null;
    document.getElementById("result").hidden = true;
  }
  saved.times = alignedTimes(next.times, game.log.length);
  attempt.version = Number.isInteger(version) ? version : null;
  attempt.savedLength = attempt.sentLength = savedLength;
  attempt.firstUnsavedAt = null;
  return true;
}

/** This game is not the attempt's (`note` says why): practice, untimed; `mode` is what follows. */
function playAsPractice(mode, note) {
  saved.ranked = false;
  saved.times = [];
  persist();
  setMode(mode, note);
}

/** The attempt is over (`note` says why): this game and any other are practice now. */
function endAttempt(note) {
  playAsPractice("done", note);
}

/** Handle an answer that ends ranked play here; true when it did. */
function attemptEnded(answer) {
  if (answer.outcome === "day_closed") endAttempt("attempt_day_closed");
  else if (answer.outcome === "banned") setMode("practice", "player_banned");
  else if (answer.outcome === "sign_in") setMode("practice");
  else return false;
  return true;
}

/**
 * On load: the player's attempt of today, as the server has it. The page says
 * whether the server had one when it drew the page: without one there is
 * nothing to read (the API's 404 would be logged by the browser as an error),
 * and one started since on another device is what this page's start answers.
 * A page the service worker kept says so too; offline, it says why it waits.
 */
async function attemptLoad() {
  const answer = config.attempt_started
    ? await attemptCall({ method: "GET" })
    : { outcome: "none", status: navigator.onLine === false ? 0 : 404 };
  if (answer.outcome === "open" || answer.outcome === "closed") applyAttempt(answer);
  else if (attemptEnded(answer)) return;
  // Not known (the network failed, or a page kept for offline use drawn before
  // the start): the ranked game begun on this browser goes on (its clock runs
  // on the server), and so does a game begun while the page asked (the server
  // answers with the attempt it has). Not started: the start step waits for
  // its button.
  else if (saved.ranked && game.log.length > 0) startAttempt();
  else if (attempt.begunWhileLoading && game.log.length > 0) startAttempt({ fresh: true });
  else setMode("none", answer.status === 0 ? "attempt_start_offline" : "");
}

/**
 * Start the attempt (the server's clock starts), trying again until the
 * server answers. A `fresh` game (its first actions just played) whose start
 * cannot reach the server at all becomes practice: its moves were made
 * before the server's clock started, so they cannot be timed.
 */
function startAttempt({ fresh = false } = {}) {
  if (attempt.mode === "starting") return attempt.ready;
  saved.ranked = true;
  setMode("starting");
  attempt.ready = (async () => {
    for (;;) {
      const answer = await attemptCall({ method: "POST" });
      if (attempt.mode !== "starting") return;
      if (answer.outcome === "open" || answer.outcome === "closed") {
        applyAttempt(answer, { started: answer.status === 201 });
        return;
      }
      if (attemptEnded(answer)) return;
      if (fresh && answer.status === 0 && game.log.length > 0) {
        // The attempt is still to start: "none" offers it for a new game.
        playAsPractice("none", "attempt_offline");
        return;
      }
      showSaveFailed(answer);
      await new Promise((resolve) => setTimeout(resolve, SAVE_EVERY_MS));
      if (attempt.mode !== "starting") return;
    }
  })();
  return attempt.ready;
}

/** After an action is played: its time in the attempt, and the attempt's start or save. */
function recordAction(wasNew) {
  if (attempt.mode === "loading") {
    // Whether this game is the attempt's is not known yet: timed as if it
    // were (at the start), and started if the server has no attempt.
    if (wasNew) attempt.begunWhileLoading = true;
    saved.times.push(nextTime(saved.times, null));
  } else if (inAttempt()) {
    saved.times.push(nextTime(saved.times, attempt.clock.elapsed(performance.now())));
    scheduleSave();
  }
}

/** Save now or later: every SAVE_EVERY_ACTIONS actions, or SAVE_EVERY_MS after the first unsaved. */
function scheduleSave() {
  clearTimeout(attempt.timer);
  attempt.timer = null;
  if (attempt.mode !== "open" || saved.pending) return;
  if (stream.live) {
    streamSend();
    return;
  }
  const unsaved = game.log.length - attempt.savedLength;
  const now = performance.now();
  if (unsaved > 0 && attempt.firstUnsavedAt === null) attempt.firstUnsavedAt = now;
  const delay = saveDelay(unsaved, now - (attempt.firstUnsavedAt ?? now));
  if (delay === 0) saveAttempt();
  else if (delay !== null) attempt.timer = setTimeout(saveAttempt, delay);
}

/**
 * Save the game so far to the attempt (PATCH). `keepalive` when the page is
 * going away: the request outlives it. A submission on its way carries the
 * log itself, so nothing is saved meanwhile.
 */
async function saveAttempt({ keepalive = false } = {}) {
  clearTimeout(attempt.timer);
  attempt.timer = null;
  const log = game.log.slice();
  if (attempt.mode !== "open" || saved.pending || log.length <= attempt.sentLength) return;
  if (attempt.sentLength > attempt.savedLength && !keepalive) return; // one save at a time
  attempt.sentLength = log.length;
  const [, init] = saveRequest({
    url: config.attempt_url,
    csrf: config.csrf,
    log: formatLog(log),
    version: attempt.version,
    keepalive,
  });
  const sentFrom = game;
  const answer = await attemptCall(init);
  // A game taken up from another device meanwhile makes this answer old news.
  if (attempt.mode !== "open" || game !== sentFrom) return;
  if (answer.outcome === "open") {
    attempt.clock.observe(answer.body.elapsed_ms, answer.now);
    attempt.assisted = Boolean(answer.body.assisted);
    // Answers may cross: the version only grows (none said: saves must extend the log).
    const version = answer.body.version;
    attempt.version = Number.isInteger(version) ? Math.max(attempt.version ?? 0, version) : null;
    attempt.savedLength = Math.max(attempt.savedLength, log.length);
    attempt.firstUnsavedAt = null;
    showSaveFailed(null);
    showAttempt();
    scheduleSave();
    return;
  }
  attempt.sentLength = attempt.savedLength;
  if (answer.outcome === "closed") {
    // Submitted from another device (a submission of this page ends the attempt itself).
    if (!saved.pending) endAttempt("attempt_done");
    return;
  }
  if (attemptEnded(answer)) return;
  if (answer.outcome === "stale" && takeUpStaleSave(answer)) return;
  showSaveFailed(answer);
  // A refused log waits for the next action; a failure is tried again.
  if (answer.outcome !== "refused") attempt.timer = setTimeout(saveAttempt, SAVE_EVERY_MS);
}

/**
 * Another device saved a game this page had not seen (a 409 `stale_save`):
 * go on from the server's game and say why, or, when it is a part of this
 * one, save the rest under its version. Returns false when nothing changed.
 */
function takeUpStaleSave(answer) {
  const next = staleSaveGame(
    { log: game.log, times: saved.times },
    answer.body.error,
    attempt.clock.elapsed(answer.now),
  );
  if (!goOnWith(next, { savedLength: next.savedLength, version: next.version })) return false;
  persist();
  showSaveFailed(null);
  // The socket holds the table it had: it starts again from the stored game.
  streamClose();
  if (next.adopted) setMode("open", "attempt_stale");
  else saveAttempt();
  return true;
}

// ---------------------------------------------------------------- the attempt's socket

/*
 * While the attempt is open, each action goes to the server over its socket
 * as it is played, numbered by its place in the log (stream.js). `sentUpTo`
 * is the last action sent on this socket; `attempt.savedLength` the last the
 * server acknowledged (stored). A socket that closes is opened again after a
 * growing delay, and the actions played meanwhile are sent from the server's
 * count on.
 */

function streamConnect() {
  if (stream.socket || attempt.mode !== "open" || typeof WebSocket === "undefined") return;
  clearTimeout(stream.timer);
  stream.timer = null;
  let socket;
  try {
    socket = new WebSocket(streamUrl(location, config.date));
  } catch {
    return;
  }
  stream.socket = socket;
  stream.error = null;
  socket.addEventListener("message", (event) => streamMessage(socket, event));
  socket.addEventListener("close", (event) => streamClosed(socket, event));
  showStream();
}

function streamClose() {
  const socket = stream.socket;
  stream.socket = null;
  stream.live = false;
  clearTimeout(stream.timer);
  stream.timer = null;
  if (socket) socket.close();
  // A page whose attempt is still open opens a new socket at once.
  if (attempt.mode === "open") streamConnect();
  showStream();
}

/** Send every action the server has not had on this socket yet. */
function streamSend() {
  if (!stream.live || attempt.mode !== "open" || saved.pending) return;
  const from = Math.max(stream.sentUpTo, attempt.savedLength);
  for (const message of actionMessages(game.log, from)) stream.socket.send(message);
  stream.sentUpTo = Math.max(stream.sentUpTo, game.log.length);
  showStream();
}

function streamMessage(socket, event) {
  if (socket !== stream.socket) return;
  let message;
  try {
    message = JSON.parse(event.data);
  } catch {
    return;
  }
  if (message.type === "state") streamState(message);
  else if (message.type === "ack") streamAck(message);
  else if (message.type === "watchers") showWatchers(message.count);
  else if (message.type === "error") stream.error = message.error?.code ?? null;
  else if (message.type === "refused") {
    // The server and the page disagree, and the next socket starts again from the
    // stored game. Another device having played on is said then (the page goes on
    // from that game); any other refusal is shown now.
    if (message.error?.code !== "action_conflict") {
      showSaveFailed({ outcome: "refused", body: { error: message.error } });
    }
    socket.close();
  }
}

/** The server's stored game, on (re)connect or after another device changed it. */
function streamState(state) {
  attempt.clock.observe(state.elapsed_ms, performance.now());
  showWatchers(state.watchers);
  const { outcome, stored } = stateOutcome(game.log, state);
  if (outcome === "adopt") {
    const next = resumeGame(
      { log: game.log, times: saved.times },
      { log: stored, savedMs: attempt.clock.elapsed(performance.now()) ?? 0 },
    );
    if (!goOnWith(next, { savedLength: stored.length, version: state.version })) return;
    persist();
    showSaveFailed(null);
    attempt.note = "attempt_stale";
    showAttempt();
    refresh();
  } else {
    attempt.savedLength = stored.length;
    attempt.sentLength = Math.max(attempt.sentLength, stored.length);
    attempt.version = Number.isInteger(state.version) ? state.version : attempt.version;
  }
  clearTimeout(attempt.timer);
  attempt.timer = null;
  stream.live = true;
  stream.sentUpTo = stored.length;
  stream.delay = RECONNECT_FIRST_MS;
  streamSend();
}

function streamAck(ack) {
  if (!Number.isInteger(ack.n)) return;
  attempt.savedLength = Math.max(attempt.savedLength, Math.min(ack.n, game.log.length));
  attempt.sentLength = Math.max(attempt.sentLength, attempt.savedLength);
  if (Number.isInteger(ack.version)) attempt.version = Math.max(attempt.version ?? 0, ack.version);
  attempt.firstUnsavedAt = null;
  showSaveFailed(null);
  showStream();
}

function streamClosed(socket, event) {
  if (socket !== stream.socket) return;
  stream.socket = null;
  stream.live = false;
  const outcome = closeOutcome(event.code, stream.error);
  showStream();
  if (attempt.mode !== "open") return;
  if (outcome === "closed") {
    // Submitted from another device (a submission of this page ends the attempt itself).
    if (!saved.pending) endAttempt("attempt_done");
    return;
  }
  if (outcome === "day_closed") return endAttempt("attempt_day_closed");
  if (outcome === "banned") return setMode("practice", "player_banned");
  if (outcome === "sign_in" || outcome === "none") return setMode("practice");
  // The network or the server: try again later, and save through the API meanwhile.
  stream.timer = setTimeout(streamConnect, reconnectWait(event.code, stream.delay));
  stream.delay = nextDelay(stream.delay);
  scheduleSave();
}

// Back online: connect now rather than at the end of the wait.
window.addEventListener("online", () => {
  if (attempt.mode === "open" && !stream.socket) streamConnect();
});

/** How many players watch this attempt live (said only when it changes). */
function showWatchers(count) {
  const node = document.getElementById("attempt-watchers");
  const watching = Number.isInteger(count) && count > 0;
  const text = watching ? t("watchers", { count }) : "";
  if (node.textContent !== text) node.textContent = text;
  node.hidden = !watching;
}

/** The socket's state on the page: for the player, a note while actions wait unsent. */
function showStream() {
  const bar = document.getElementById("attempt");
  bar.dataset.stream = stream.live ? "live" : "offline";
  bar.dataset.stored = String(attempt.savedLength);
  const waiting = attempt.mode === "open" && !stream.live && game.log.length > attempt.savedLength;
  const node = document.getElementById("attempt-waiting");
  // Said once when it starts to wait and once when it is all stored: no flood.
  if (node.hidden === waiting) node.hidden = !waiting;
}

// The page going away (a reload, another tab, the phone's home screen) saves what is unsaved.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "hidden") saveAttempt({ keepalive: true });
});
window.addEventListener("pagehide", () => saveAttempt({ keepalive: true }));

/** Show that saving failed (`answer`: the failed answer), or with null that it works again. */
function showSaveFailed(answer) {
  const node = document.getElementById("attempt-save-failed");
  if (answer === null) {
    node.hidden = true;
    return;
  }
  const reason = answer.outcome === "refused" ? errorText(answer.body, "") : "";
  node.textContent = reason ? `${t("attempt_save_failed")} ${reason}` : t("attempt_save_failed");
  node.hidden = false;
}

/** The attempt's notice, its mark and its button, as the mode says. */
function showAttempt() {
  const bar = document.getElementById("attempt");
  bar.dataset.mode = attempt.mode;
  bar.dataset.assisted = String(attempt.assisted);
  const waiting = awaitingStart();
  if (startPanel) startPanel.hidden = !waiting;
  startButton?.toggleAttribute("disabled", attempt.mode === "starting");
  document.getElementById("game").hidden = waiting || dailyForVisitor;
  const mark = document.getElementById("attempt-mark");
  mark.hidden = !inAttempt();
  mark.textContent = attempt.assisted ? t("assisted_mark") : t("ranked");
  mark.dataset.kind = attempt.assisted ? "assisted" : "ranked";
  // Why the game changed under the player's eyes outranks the lasting "assisted".
  const note =
    inAttempt() && attempt.assisted && attempt.note !== "attempt_stale" ? "assisted" : attempt.note;
  document.getElementById("attempt-notice").textContent = note ? t(note) : "";
  bar.hidden = !note && mark.hidden;
}

/** The clock: the time since the start while the attempt is open, its duration once submitted. */
function showClock() {
  const node = document.getElementById("clock");
  const ms = attempt.mode === "open" ? attempt.clock.elapsed(performance.now()) : attempt.duration;
  node.hidden = ms === null;
  if (ms !== null) node.textContent = t("clock", { time: clock(ms) });
}

const startPanel = document.getElementById("start-panel");
const startButton = document.getElementById("start-ranked");

/** The start step's button: a new game of today's deal, the server's clock started. */
startButton?.addEventListener("click", async () => {
  if (attempt.mode !== "none") return;
  game = Game.fromCode(config.deal);
  saved = newSaved();
  persist();
  await startAttempt();
  if (attempt.mode === "open") tableElement.focus();
});

/**
 * A game the visitor left to sign in for (its submission pending) comes
 * along to the account, unless the account's ranked attempt is open: then
 * that game goes on, and the visitor's waits on this browser.
 */
function adoptAnonymousGame() {
  if (!config.user || saved.log.length > 0 || saved.pending || inAttempt()) return;
  const key = gameKey(null, config.deal);
  const theirs = loadSaved(key);
  if (!theirs?.pending) return;
  saved = { ...theirs, times: [], ranked: false };
  game = restoreGame(saved.log);
  persist();
  localStorage.removeItem(key);
  refresh();
  showAttempt();
}

// ---------------------------------------------------------------- submitting

function showResult(html) {
  const result = document.getElementById("result");
  result.replaceChildren(...html);
  result.hidden = false;
}

function paragraph(text, className = "") {
  const p = document.createElement("p");
  p.textContent = text;
  if (className) p.className = className;
  return p;
}

function askToSignIn() {
  const next = location.pathname + location.search;
  const link = document.createElement("a");
  link.href = `${config.login_url}?next=${encodeURIComponent(next)}`;
  link.className = "button primary";
  link.id = "sign-in-to-submit";
  link.textContent = document.getElementById("login-link")?.textContent ?? "Log in";
  const signup = document.createElement("a");
  signup.href = `${config.signup_url}?next=${encodeURIComponent(next)}`;
  signup.className = "button";
  signup.id = "sign-up-to-submit";
  signup.textContent = document.getElementById("signup-link")?.textContent ?? "Sign up";
  const links = document.createElement("p");
  links.className = "result-actions";
  links.append(link, " ", signup);
  showResult([paragraph(t("sign_in_to_submit")), links]);
}

/** Whether the game as it stands was submitted: a second Submit would file it twice. */
function isSubmitted() {
  return saved.submitted !== null && saved.submitted.log === formatLog(game.log);
}

let submitWaiting = false; // a submission waits for the attempt's start to be answered

/**
 * Freeze the current log as the pending submission (one key per log, with
 * the per-action times of a ranked attempt) and send it. A ranked game is
 * sent once the attempt's start is answered, so that it counts as ranked.
 */
async function submitGame() {
  if (attempt.mode === "loading" || attempt.mode === "starting") {
    submitWaiting = true;
    refresh();
    // The load may start the attempt: wait for that too.
    while (attempt.mode === "loading" || attempt.mode === "starting") await attempt.ready;
    submitWaiting = false;
  }
  const log = formatLog(game.log);
  const times = attempt.mode === "open" ? alignedTimes(saved.times, game.log.length) : null;
  // Today's deal played outside the attempt is said to be practice, so that
  // it cannot close an attempt started meanwhile on another device.
  const practice = rankable && !saved.ranked;
  const pending = pendingFor(saved.pending, log, undefined, times, practice);
  if (pending !== saved.pending) {
    saved.pending = pending;
    persist();
  }
  refresh();
  if (!config.user) {
    askToSignIn();
    return;
  }
  sendPending();
}

/** Send the pending submission until the server answers, and show the answer. */
async function sendPending() {
  const answer = await submitPending({
    current: () => saved.pending,
    url: config.games_url,
    csrf: config.csrf,
    deal: config.deal,
    fetch: (...request) => fetch(...request),
    wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    onSend: (attempt) => showResult([paragraph(attempt === 0 ? t("submitting") : t("retrying"))]),
    onRetry: () => showResult([paragraph(t("retrying"))]),
  });
  if (answer.outcome === "dropped") return;
  if (answer.outcome === "sign_in") {
    askToSignIn();
    return;
  }
  saved.pending = null;
  if (
    answer.outcome === "refused" &&
    answer.pending.times &&
    answer.body.error?.code === "invalid_times"
  ) {
    // The times are the page's own measure, for the review: the game itself
    // must not be lost over them. Sent again without (nothing was stored).
    saved.pending = pendingFor(null, answer.pending.log);
    persist();
    sendPending();
    return;
  }
  if (answer.outcome === "refused") {
    persist();
    refresh();
    showResult([
      paragraph(`${t("submit_failed")} ${errorText(answer.body, answer.statusText)}`, "error"),
    ]);
    return;
  }
  saved.submitted = { ...answer.body, log: answer.pending.log };
  if (inAttempt()) endAttempt("attempt_done");
  persist();
  refresh();
  showSubmitted(answer.body);
}

/** The player's-language reason of an API error body (`{"error": {...}}`). */
function errorText(body, statusText) {
  const error = body.error ?? {};
  return error.reason_code
    ? reasonText(error.reason_code, error.params ?? {})
    : (error.message ?? statusText);
}

/**
 * What kind of game was stored: "Ranked" as a mark before the result, or a
 * sentence saying why it is on no board (assisted, or practice).
 */
function resultParts(game) {
  const kind = !game.ranked ? "practice" : game.assisted ? "assisted" : "ranked";
  const fields = { score: game.score, moves: game.moves, time: clock(game.duration_ms) };
  const line = paragraph(t(game.ranked ? "result_time" : "result", fields), "result-line");
  const mark = document.createElement(kind === "ranked" ? "span" : "p");
  mark.className = `result-kind ${kind}`;
  mark.id = "result-kind";
  mark.dataset.kind = kind;
  mark.textContent = t(kind);
  if (kind === "ranked") {
    line.prepend(mark, " ");
    return [line];
  }
  return [mark, line];
}

async function showSubmitted(game) {
  if (game.ranked) {
    attempt.duration = game.duration_ms ?? null;
    showClock();
  }
  const parts = [paragraph(t("submitted")), ...resultParts(game)];
  const replay = document.createElement("a");
  replay.href = `/replays/${game.id}/`;
  replay.textContent = t("replay");
  replay.id = "replay-link";
  showResult([...parts, replay]);
  showAfterGame(game);
  // Only a ranked game without hints, and not held for review, is on the board.
  if (!game.ranked || game.assisted || game.held) return;
  try {
    const response = await fetch(`${config.leaderboard_url}?order=score&around=me&limit=1`, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    const board = await response.json();
    const mine = (board.entries ?? []).find((entry) => entry.player === config.user);
    if (mine) {
      const rank = paragraph(t("rank", { rank: mine.rank, total: board.total }), "rank-line");
      rank.id = "my-rank";
      showResult([...parts, rank, replay]);
    }
  } catch {
    // The rank is a courtesy; the game is stored either way.
  }
}

document.getElementById("submit-game").addEventListener("click", async (event) => {
  const question = inAttempt() ? t("confirm_give_up") : t("confirm_submit");
  if (!game.won && !(await ask(question, event.currentTarget.textContent))) return;
  if (!isSubmitted()) submitGame();
});

// ---------------------------------------------------------------- hints

/*
 * A hint only reads: the server's solver answers from the current deal and
 * log, the page names and points at the action, and the player plays it (with
 * "Play this move" or by hand) like any other. Asking changes neither the log
 * nor the score. During the ranked attempt the server marks the attempt
 * assisted (its game goes on no board), so the page asks first.
 */
const hintButton = document.getElementById("hint");
const hintBox = document.getElementById("hint-box");
const hintPlay = document.getElementById("hint-play");
/** The hint on show: the log it answers and its action (null when it is only a message). */
let hintShown = null;
let hintInFlight = false;

function showHint(text, { log, action = null, kind = "info" }) {
  hintShown = { log, action };
  document.getElementById("hint-text").textContent = text;
  hintBox.dataset.kind = kind;
  hintBox.hidden = false;
  hintPlay.hidden = action === null;
  markHint();
}

function clearHint() {
  hintShown = null;
  hintBox.hidden = true;
  markHint();
}

/** How the hint names a place: "column 3", "the waste", "foundation F2". */
function placeText(place) {
  if (place.type === "waste") return t("the_waste");
  if (place.type === "foundation") return t("foundation_n", { n: place.index + 1 });
  return t("column_n", { n: place.index + 1 });
}

/**
 * What a move takes where, on the current table: the card that moves (the
 * king heading the run when a column's run goes to an empty column), its
 * index in the source column, and the target with "first foundation that
 * accepts" resolved. Null when the move names an empty place.
 */
function moveDetails(action) {
  const pile = game.sourcePile(action.from);
  let index = pile.length - 1;
  const to = { ...action.to };
  if (
    action.from.type === "column" &&
    to.type === "column" &&
    game.columns[to.index].up.length === 0
  ) {
    const start = kingRunStart(pile);
    if (start !== -1) index = start;
  }
  if (index < 0) return null;
  const card = pile[index];
  if (to.type === "foundation" && to.index === null) to.index = game.foundationFor(card);
  if (to.type === "foundation" && to.index < 0) return null;
  return { card, index, to };
}

/** The hint in words: "Hint: move 8♥ from column 5 to column 2." */
function hintText(token) {
  const action = parseAction(token);
  if (action.kind === "stock") return t(game.stock.length > 0 ? "hint_stock" : "hint_recycle");
  const details = action.kind === "move" ? moveDetails(action) : null;
  if (!details) return token;
  return t("hint_move", {
    card: cardLabel(cardText(details.card)),
    source: placeText(action.from),
    target: placeText(details.to),
  });
}

/** Point at the hinted action on the drawn table: its card (or the stock) and its target. */
function markHint() {
  tableElement.querySelectorAll(".hinted, .hint-target").forEach((node) => {
    node.classList.remove("hinted", "hint", "hint-target");
  });
  const token = hintShown?.action;
  if (!token) return;
  const action = parseAction(token);
  if (action.kind === "stock") {
    tableElement.querySelector('[data-place="s"]')?.classList.add("hinted", "hint");
    return;
  }
  const details = action.kind === "move" ? moveDetails(action) : null;
  if (!details) return;
  let source;
  if (action.from.type === "column") {
    source = tableElement.querySelector(
      `.column[data-place="c${action.from.index}"] .card.up[data-index="${details.index}"]`,
    );
  } else {
    const place = action.from.type === "waste" ? "w" : `f${action.from.index}`;
    source = tableElement.querySelector(`.card.up[data-place="${place}"]`);
  }
  source?.classList.add("hinted", "hint");
  const target = details.to.type === "column" ? `c${details.to.index}` : `f${details.to.index}`;
  tableElement.querySelector(`[data-drop="${target}"]`)?.classList.add("hint-target");
}

/** The answer of POST /api/hint/ for `log`, as {text, action, kind}; never throws. */
async function fetchHint(log) {
  const failed = { text: t("hint_failed"), action: null, kind: "error" };
  let response;
  try {
    response = await fetch(config.hint_url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": config.csrf,
      },
      body: JSON.stringify({ deal: config.deal, log }),
    });
  } catch {
    return failed;
  }
  const body = await response.json().catch(() => ({}));
  const refusal = hintRefusal(response.status, body);
  if (refusal?.reason) {
    const text = `${t("hint_refused")} ${reasonText(refusal.reason, refusal.params)}`;
    return { text, action: null, kind: "error" };
  }
  if (refusal) return { text: t(refusal.key, refusal.params), action: null, kind: "error" };
  const assisted = Boolean(body.assisted);
  if (body.result === "move") {
    // Offer to play it only when this page's engine agrees it is legal here.
    const action = game.refusal(body.action) === null ? body.action : null;
    const text = `${hintText(body.action)} ${t("hint_moves_to_win", { moves: body.moves_to_win })}`;
    return { text, action, kind: "move", assisted };
  }
  if (body.result === "lost") return { text: t("hint_lost"), action: null, kind: "lost", assisted };
  if (body.result === "won") return { text: t("hint_won"), action: null, kind: "info", assisted };
  return { text: t("hint_unknown"), action: null, kind: "info", assisted };
}

let hintAsking = false; // from the press to the answer, the confirmation included

async function askHint() {
  if (hintAsking || hintInFlight || game.won || attempt.mode === "loading" || !playable()) return;
  hintAsking = true;
  try {
    if (inAttempt() && !attempt.assisted) {
      if (!(await ask(t("confirm_hint_ranked"), t("hint_anyway")))) return;
      await attempt.ready;
    }
    await fetchAndShowHint();
  } finally {
    hintAsking = false;
  }
}

async function fetchAndShowHint() {
  const log = formatLog(game.log);
  hintInFlight = true;
  hintButton.disabled = true;
  hintButton.setAttribute("aria-busy", "true");
  showHint(t("hint_asking"), { log });
  try {
    const answer = await fetchHint(log);
    if (answer.assisted && inAttempt()) {
      attempt.assisted = true;
      showAttempt();
    }
    const now = formatLog(game.log);
    if (now !== log) showHint(t("hint_stale"), { log: now });
    else showHint(answer.text, { log, action: answer.action, kind: answer.kind });
  } finally {
    hintInFlight = false;
    hintButton.removeAttribute("aria-busy");
    refresh();
  }
}

hintButton.addEventListener("click", askHint);
hintPlay.addEventListener("click", () => {
  if (hintShown?.action) act(hintShown.action);
});

// ---------------------------------------------------------------- start

async function start() {
  refresh();
  showAttempt();
  if (rankable) {
    // Without an attempt to read, the load may start one at once, whose start
    // then is what attempt.ready waits for.
    const load = attemptLoad();
    if (attempt.mode === "loading") attempt.ready = load;
    await load;
  }
  adoptAnonymousGame();
  if (saved.pending && config.user) sendPending();
  else if (saved.pending) askToSignIn();
  else if (isSubmitted()) showSubmitted(saved.submitted);
  else if (game.won) submitGame();
}

// For tests and the curious: the engine state of the page, and its attempt's.
window.easyHarp = {
  get game() {
    return game;
  },
  get attempt() {
    return { mode: attempt.mode, assisted: attempt.assisted, times: saved.times.slice() };
  },
  act,
};

start();
