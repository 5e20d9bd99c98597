/**
 * Watching a player's ranked attempt live: the socket
 * ws/daily/<date>/players/<username>/attempt/ sends the stored game once
 * (`snapshot`), then what moves (watchfeed.js). While the game of the running
 * day is open, a watcher gets its progress only (cards on the foundations,
 * score, moves: `progress`); once it is finished, or to its player, the table
 * (`actions`, played with the engine). For a screen reader, a polite live
 * region says the score and the moves at most every 15 seconds, never each move.
 */
import { Game, splitLog } from "./engine.js";
import { clock, config, renderTable, t } from "./ui.js";
import { reconnectWait } from "./reconnect.js";
import { RECONNECT_FIRST_MS, nextDelay } from "./stream.js";
import { actionsOutcome, progressNewer, progressOf } from "./watchfeed.js";

const SUMMARY_EVERY_MS = 15_000;
// The player has no ranked game today yet: look again this often, so that the
// page goes live once they start.
const NO_GAME_RETRY_MS = 10_000;

const tableElement = document.getElementById("table");
const state = {
  view: null, // "table" or "progress", as the last snapshot said
  game: null, // the table view's game
  progress: null, // the progress view's: actions, score, moves, foundations, won
  socket: null,
  waiting: false, // a gap was seen: a snapshot was asked for
  open: false,
  start: null, // the attempt's start on the page's clock
  endMs: null, // a finished game's time, as the boards show it
  delay: RECONNECT_FIRST_MS,
  summarizedAt: -Infinity,
  summaryTimer: null,
  error: null, // the code of the server's last error: the close that follows says why
};

/** What the page shows of the game: score, moves and cards on the foundations. */
function shown() {
  if (state.view === "table" && state.game) {
    const table = state.game.table();
    return { table, score: table.score, moves: table.moves };
  }
  return state.progress;
}

function draw() {
  const now = shown();
  if (!now) return;
  const table = state.view === "table";
  tableElement.hidden = !table;
  // "The table moves as the player plays": only while it is played.
  document.getElementById("watch-table-note").hidden = !table || !state.open;
  document.getElementById("watch-progress").hidden = table;
  if (table) renderTable(tableElement, now.table);
  else {
    document.getElementById("watch-foundations").value = now.foundations;
    document.getElementById("watch-foundations-count").textContent = t("watch_foundations", {
      count: now.foundations,
    });
  }
  document.getElementById("score").textContent = String(now.score);
  document.getElementById("moves").textContent = String(now.moves);
  document.getElementById("watch-deal").textContent = table ? (config.deal ?? "") : "";
  showClock();
  summarize();
}

function elapsed() {
  if (state.start === null) return null;
  // A finished game's clock stands still at its time on the boards.
  if (!state.open && state.endMs !== null) return state.endMs;
  return Math.max(0, performance.now() - state.start);
}

function showClock() {
  const ms = elapsed();
  document.getElementById("clock").textContent = ms === null ? "" : t("clock", { time: clock(ms) });
}

/** The live region's summary: at most one every SUMMARY_EVERY_MS, the last one always said. */
function summarize() {
  if (state.summaryTimer !== null) return;
  const wait = Math.max(0, state.summarizedAt + SUMMARY_EVERY_MS - performance.now());
  state.summaryTimer = setTimeout(() => {
    state.summaryTimer = null;
    state.summarizedAt = performance.now();
    const now = shown();
    if (!now) return;
    document.getElementById("watch-summary").textContent = t("watch_summary", {
      score: now.score,
      moves: now.moves,
      time: clock(elapsed() ?? 0),
    });
  }, wait);
}

/** The badge ("live", "over" once submitted, or "offline") and the message under the table. */
function setStatus(live, message = "", { reconnecting = true } = {}) {
  const node = document.getElementById("watch-state");
  const over = live && !state.open;
  node.dataset.state = over ? "over" : live ? "live" : "offline";
  node.textContent = over
    ? t("watch_over")
    : live
      ? t("watch_live")
      : reconnecting
        ? t("watch_offline")
        : "";
  document.getElementById("watch-message").textContent = message;
}

/** Once the game is submitted: say so, with a link to its replay when it is known. */
function showOver(game) {
  setStatus(true, t("watch_closed"));
  document.querySelector(".watch-title").textContent = t("watch_title_over", {
    player: config.player,
  });
  if (!Number.isInteger(game)) return;
  const link = document.createElement("a");
  link.id = "watch-replay";
  link.href = `/replays/${game}/`;
  link.textContent = t("watch_replay");
  document.getElementById("watch-message").append(" ", link);
}

function takeSnapshot(snapshot) {
  if (snapshot.view === "table") {
    try {
      state.game = Game.replay(snapshot.deal, splitLog(snapshot.log ?? ""));
    } catch {
      return;
    }
    config.deal = snapshot.deal;
    state.progress = null;
  } else {
    const progress = progressOf(snapshot);
    if (progress === null) return;
    state.game = null;
    state.progress = progress;
  }
  state.view = snapshot.view;
  state.waiting = false;
  state.open = snapshot.status === "open";
  document.getElementById("watch-assisted").hidden = !snapshot.assisted;
  state.start = performance.now() - (snapshot.elapsed_ms ?? 0);
  state.endMs = state.open ? null : (snapshot.elapsed_ms ?? null);
  if (state.open) setStatus(true);
  else showOver(snapshot.game);
  draw();
}

function takeActions(message) {
  const game = state.game;
  if (state.view !== "table" || !game || state.waiting) return;
  const { play, gap } = actionsOutcome(game.log.length, message);
  if (gap) return askSnapshot();
  try {
    play.forEach((token) => game.play(token));
  } catch {
    return askSnapshot();
  }
  draw();
}

function takeProgress(message) {
  const progress = progressOf(message);
  if (state.view !== "progress" || !progressNewer(state.progress, progress)) return;
  state.progress = progress;
  draw();
}

/** Something was lost on the way: the server sends the game whole again. */
function askSnapshot() {
  state.waiting = true;
  if (state.socket?.readyState === WebSocket.OPEN) {
    state.socket.send(JSON.stringify({ type: "snapshot" }));
  }
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const player = encodeURIComponent(config.player);
  const socket = new WebSocket(
    `${scheme}://${location.host}/ws/daily/${config.date}/players/${player}/attempt/`,
  );
  state.socket = socket;
  socket.addEventListener("message", (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    if (message.type === "snapshot") {
      state.delay = RECONNECT_FIRST_MS;
      takeSnapshot(message);
    } else if (message.type === "actions") takeActions(message);
    else if (message.type === "progress") takeProgress(message);
    else if (message.type === "error") state.error = message.error?.code ?? null;
    else if (message.type === "closed") {
      state.open = false;
      showOver(message.game);
      showClock();
    }
  });
  socket.addEventListener("close", (event) => {
    const over = { reconnecting: false };
    const error = state.error;
    state.error = null;
    if (event.code === 4403) return setStatus(false, t("watch_locked"), over);
    if (event.code === 4404) {
      setStatus(false, t("watch_none"), over);
      // No such player: nothing to wait for. No attempt yet: look again now and then.
      if (error === "no_attempt") setTimeout(connect, NO_GAME_RETRY_MS);
      return;
    }
    if (event.code === 4401) return setStatus(false, "", over);
    setStatus(false, error === "too_many_watchers" ? t("watch_full") : "");
    setTimeout(connect, reconnectWait(event.code, state.delay));
    state.delay = nextDelay(state.delay);
  });
}

if (tableElement && config.player) {
  setStatus(false);
  setInterval(() => state.open && showClock(), 1000);
  connect();
}
