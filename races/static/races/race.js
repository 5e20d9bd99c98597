/**
 * A race's page. For one of its players: the lobby's list kept current, then
 * the player's own table (drawn and played as on the play page: engine.js,
 * ui.js, tableinput.js), each action sent over the race's socket
 * (ws/races/<code>/) numbered by its place in the log, and the others'
 * progress as a compact list. The countdown and the time left are the
 * server's clock, read here through the offset each message gives.
 *
 * A reload, or a new socket after the network went, starts from the game
 * the server stored: the page rebuilds its table from that log and sends
 * what it played since. A polite live region says only what matters to the
 * race (a player in or out, the start, the end), never a move of another.
 *
 * For anyone else (signed in or not) the page watches: the same socket says
 * the lobby's players as they come and go, the countdown, each player's
 * progress and the end, without the deal (the server never sends it to a
 * watcher before the end). Once the race has started the page says that
 * nobody joins any more.
 */
import { Game, IllegalActionError, splitLog } from "../games/engine.js";
import { describeStep } from "../games/frames.js";
import { RECONNECT_FIRST_MS, actionMessages, nextDelay, stateOutcome } from "../games/stream.js";
import { reconnectWait } from "../games/reconnect.js";
import { tableInput } from "../games/tableinput.js";
import {
  actionText,
  announce,
  ask,
  clock,
  config,
  reasonText,
  renderTable,
  say,
  t,
} from "../games/ui.js";
import { clockOffset, raceEnd, raceNews, racePhase } from "./racing.js";

/** The heartbeat: a player silent for 30 seconds shows as away to the others. */
const HEARTBEAT_MS = 10_000;
/** How soon an action sent a moment before the start (this clock ahead) is sent again. */
const EARLY_RETRY_MS = 300;

const tableElement = document.getElementById("table");
const playSection = document.getElementById("race-play");
const confirmDialog = document.getElementById("confirm-dialog");

const race = {
  state: null, // the race as the server last said it (races.selectors.race_state)
  offset: 0, // ms to add to this clock to read the server's
  phase: "lobby",
};
let game = null;
const stream = {
  socket: null,
  live: false, // the welcome came: actions go over the socket
  stored: 0, // actions the server has stored
  sentUpTo: 0, // the last action sent on this socket
  delay: RECONNECT_FIRST_MS,
  timer: null,
  held: null, // moves came too fast: the timer that sends them again
  stopped: false, // the race is over: no socket any more
};
const timers = [];

function serverNow() {
  return Date.now() + race.offset;
}

function me() {
  return race.state?.players.find((player) => player.player === config.user) ?? null;
}

/** Whether the player may play now: the race runs and they have not left it. */
function playing() {
  return race.phase === "running" && game !== null && !me()?.left;
}

// ---------------------------------------------------------------- the table

function draw() {
  if (game === null) return;
  const table = game.table();
  renderTable(tableElement, table);
  document.getElementById("score").textContent = String(table.score);
  document.getElementById("moves").textContent = String(table.moves);
  document.getElementById("undo-left").textContent = String(table.undo_left);
  document.getElementById("undo").disabled = !playing() || table.undo_left === 0 || table.won;
  playSection.dataset.stored = String(stream.stored);
  playSection.dataset.actions = String(game.log.length);
}

/** Play `token` on this table and send it; on refusal show why. */
function act(token) {
  if (!playing()) {
    say(t(me()?.left ? "race_left_you" : "race_not_started"), "refused");
    return;
  }
  const before = game.table();
  try {
    game.play(token);
  } catch (error) {
    if (!(error instanceof IllegalActionError)) throw error;
    say(reasonText(error.code, error.params), "refused");
    return;
  }
  say("");
  announce(actionText(describeStep(before, game.table(), token)));
  draw();
  send();
}

function perform(gesture) {
  if (gesture === null) return;
  if (gesture.action) act(gesture.action);
  else if (gesture.refused) say(reasonText(gesture.refused, gesture.params), "refused");
  else say(t(gesture.message), "refused");
}

// ---------------------------------------------------------------- the race's state

function news(text) {
  document.getElementById("race-news").textContent = text;
}

/** Take up the race as the server says it (on connect, on each change, each heartbeat). */
function takeRace(next, serverNowText) {
  race.offset = clockOffset(serverNowText, Date.now());
  const before = race.state;
  race.state = next;
  const said = raceNews(before, next, serverNow()).map(({ key, params }) => t(key, params));
  if (said.length) news(said.join(" "));
  if (next.deal && game === null && playSection) {
    game = Game.fromCode(next.deal);
  }
  showPlayers();
  tick();
  if (next.status === "over") showResults();
}

/** The players' list: each one's progress, never their table. */
function showPlayers() {
  const list = document.getElementById("race-players");
  if (!list || !race.state) return;
  const lobby = race.state.status === "lobby";
  list.replaceChildren(...race.state.players.map((player) => playerItem(player, lobby)));
  const count = document.getElementById("race-count");
  if (count) {
    count.textContent = t("race_players", {
      count: race.state.players.length,
      max: race.state.max_players,
    });
  }
  // A rematch's lobby: who of the last race has not joined yet.
  const invited = document.getElementById("race-invited");
  if (invited) {
    const names = new Set(race.state.players.map((player) => player.player));
    const waiting = [...invited.querySelectorAll("[data-player]")];
    for (const node of waiting) node.hidden = names.has(node.dataset.player);
    invited.hidden = waiting.every((node) => node.hidden);
  }
  // A watcher's join button: the server refuses a ninth player anyway.
  const join = document.getElementById("race-join");
  if (join) join.disabled = race.state.players.length >= race.state.max_players;
}

function badge(text, className = "") {
  const node = document.createElement("span");
  node.className = `badge ${className}`.trim();
  node.textContent = text;
  return node;
}

function playerItem(player, lobby) {
  const item = document.createElement("li");
  item.className = "racer";
  item.dataset.player = player.player;
  item.dataset.foundations = String(player.foundations);
  item.dataset.moves = String(player.moves);
  if (player.left) item.dataset.state = "left";
  else if (player.away) item.dataset.state = "away";
  const name = document.createElement("span");
  name.className = "racer-name";
  name.append(player.player);
  if (player.player === config.user) name.append(" ", badge(t("race_you")));
  if (player.player === race.state.host) name.append(" ", badge(t("race_host")));
  if (player.won) name.append(" ", badge(t("race_winner"), "won"));
  if (player.removed) name.append(" ", badge(t("race_removed")));
  else if (player.left) name.append(" ", badge(t("race_gone")));
  else if (player.away) name.append(" ", badge(t("race_away"), "away"));
  item.append(name);
  if (lobby) return item;
  const stats = document.createElement("span");
  stats.className = "racer-stats";
  const bar = document.createElement("progress");
  bar.max = 104;
  bar.value = player.foundations;
  bar.setAttribute("aria-label", t("race_foundations", { count: player.foundations }));
  const parts = [
    `${player.foundations}/104`,
    `${t("score")} ${player.score}`,
    `${t("moves")} ${player.moves}`,
  ];
  if (player.time_ms !== null) parts.push(clock(player.time_ms));
  stats.append(bar, " ", parts.join(" · "));
  item.append(stats);
  return item;
}

/** The status line, the countdown and the clock, as the race's phase is now. */
function tick() {
  if (!race.state) return;
  const was = race.phase;
  const now = racePhase(race.state, serverNow());
  race.phase = now.phase;
  const status = document.getElementById("race-status");
  status.dataset.status = now.phase;
  if (now.phase === "lobby") {
    const host = race.state.host;
    status.textContent = t(host === config.user ? "race_lobby_host" : "race_lobby", { host });
  } else if (now.phase === "countdown") {
    status.textContent = t("race_countdown", { seconds: now.seconds });
  } else if (now.phase === "running") {
    // The time left is the play view's clock, beside the table.
    status.textContent = t("race_on");
  } else {
    const end = raceEnd(race.state);
    status.textContent = race.state.status === "over" ? t(end.key, end.params) : t("race_over");
  }
  const lobby = document.getElementById("race-lobby");
  if (lobby) lobby.hidden = now.phase !== "lobby";
  // The host starts the race: a player who becomes host (the host left) can too.
  const start = document.getElementById("race-start-form");
  if (start) start.hidden = race.state.host !== config.user;
  // A watcher's page: once started, nobody joins.
  const closedNote = document.getElementById("race-closed");
  if (closedNote) closedNote.hidden = now.phase === "lobby";
  if (playSection) {
    playSection.hidden = now.phase === "lobby";
    playSection.dataset.phase = now.phase;
    const countdown = document.getElementById("race-countdown");
    countdown.hidden = now.phase !== "countdown";
    countdown.textContent = now.phase === "countdown" ? String(now.seconds) : "";
    const time = document.getElementById("race-clock");
    time.textContent = now.phase === "running" ? t("race_running", { time: clock(now.left) }) : "";
    tableElement.classList.toggle("waiting", !playing());
  }
  if (was !== "running" && now.phase === "running" && playSection) {
    news(t("race_started"));
    if (document.activeElement === document.body) tableElement?.focus();
    send();
  }
  if (was !== now.phase) draw();
}

/** The race is over: its results, from its page, in place of the play view. */
async function showResults() {
  if (stream.stopped) return;
  stopSocket();
  timers.forEach((timer) => clearInterval(timer));
  let page;
  try {
    const response = await fetch(location.href, { credentials: "same-origin" });
    page = new DOMParser().parseFromString(await response.text(), "text/html");
  } catch {
    return;
  }
  const main = document.querySelector("main");
  const region = document.getElementById("race-news");
  const fresh = [...page.querySelector("main").childNodes].filter(
    (node) => node.id !== "race-news",
  );
  main.replaceChildren(...fresh, region);
  // The results' rematch, live from here on.
  import("./rematch.js");
}

// ---------------------------------------------------------------- the socket

function connect() {
  if (stream.socket || stream.stopped || typeof WebSocket === "undefined") return;
  clearTimeout(stream.timer);
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}${config.race_socket}`);
  stream.socket = socket;
  socket.addEventListener("message", (event) => heard(socket, event));
  socket.addEventListener("close", (event) => closed(socket, event));
}

function stopSocket() {
  const socket = stream.socket;
  stream.socket = null;
  stream.live = false;
  stream.stopped = true;
  clearTimeout(stream.timer);
  socket?.close();
}

/** Send every action the server has not had on this socket yet (once the race runs). */
function send() {
  if (!stream.live || !playing() || stream.held !== null) return;
  const from = Math.max(stream.sentUpTo, stream.stored);
  for (const message of actionMessages(game.log, from)) stream.socket.send(message);
  stream.sentUpTo = Math.max(stream.sentUpTo, game.log.length);
}

function heard(socket, event) {
  if (socket !== stream.socket) return;
  let message;
  try {
    message = JSON.parse(event.data);
  } catch {
    return;
  }
  if (message.type === "welcome") welcome(message);
  else if (message.type === "watching") watching(message);
  else if (message.type === "race") takeRace(message.race, message.server_now);
  else if (message.type === "ack" && Number.isInteger(message.n)) {
    stream.stored = Math.max(stream.stored, message.n);
    draw();
  } else if (message.type === "refused") refused(message.error ?? {});
}

/** On (re)connect: the game the server stored; the page goes on from it. */
function welcome(message) {
  // A watcher's page whose player joined meanwhile (another tab): it goes on showing
  // the race; its next load is a player's.
  if (!playSection) {
    watching(message);
    return;
  }
  stream.live = true;
  stream.delay = RECONNECT_FIRST_MS;
  document.getElementById("race-connection").hidden = true;
  const stored = splitLog(message.log ?? "");
  if (message.race.deal && game !== null) {
    const { outcome } = stateOutcome(game.log, message);
    if (outcome === "adopt") game = Game.replay(message.race.deal, stored);
  } else if (message.race.deal) {
    game = Game.replay(message.race.deal, stored);
  }
  stream.stored = stream.sentUpTo = stored.length;
  takeRace(message.race, message.server_now);
  draw();
  send();
}

/** On (re)connect as a watcher: the race as the server shows it to anyone. */
function watching(message) {
  stream.live = true;
  stream.delay = RECONNECT_FIRST_MS;
  takeRace(message.race, message.server_now);
}

function refused(error) {
  if (error.code === "race_not_started") {
    // This clock ran a little ahead of the server's: the same actions, in a moment.
    stream.sentUpTo = stream.stored;
    setTimeout(send, EARLY_RETRY_MS);
    return;
  }
  if (error.code === "too_fast") {
    // Moves that came at once (after the connection came back, say) count when
    // sent at a person's pace: they go again when the server says, the rest wait.
    say(t("race_too_fast"));
    stream.sentUpTo = stream.stored;
    clearTimeout(stream.held);
    stream.held = setTimeout(
      () => {
        stream.held = null;
        send();
      },
      Math.max(error.retry_after_ms ?? 0, EARLY_RETRY_MS),
    );
    return;
  }
  // The actions sent after a move held back: they go again with it.
  if (error.code === "out_of_order" && stream.held !== null) return;
  if (error.code === "race_over") say(t("race_refused_over"), "refused");
  else if (error.code === "left_race") say(t("race_left_you"), "refused");
  else if (error.reason_code) say(reasonText(error.reason_code, error.params ?? {}), "refused");
  // The server and the page disagree: the next socket starts again from the stored game.
  stream.socket?.close();
}

function closed(socket, event) {
  if (socket !== stream.socket) return;
  stream.socket = null;
  stream.live = false;
  // The session ended, or no such race: nothing to connect to again.
  if ([4401, 4404].includes(event.code) || stream.stopped) return;
  const note = document.getElementById("race-connection");
  if (note) {
    note.textContent = t("race_offline");
    note.hidden = false;
  }
  stream.timer = setTimeout(connect, reconnectWait(event.code, stream.delay));
  stream.delay = nextDelay(stream.delay);
}

window.addEventListener("online", () => {
  if (!stream.socket && !stream.stopped) connect();
});

// ---------------------------------------------------------------- leaving

document.getElementById("race-leave-form")?.addEventListener("submit", async (event) => {
  if (event.target.dataset.confirmed) return;
  event.preventDefault();
  const button = document.getElementById("race-leave");
  if (await ask(t("race_confirm_leave"), button.textContent)) {
    event.target.dataset.confirmed = "yes";
    event.target.requestSubmit();
  }
});

// ---------------------------------------------------------------- start

if (playSection) {
  tableInput({
    table: tableElement,
    game: () => game,
    perform,
    play: act,
    say,
    ignore: () => confirmDialog.open || !playing(),
  });
  document.getElementById("keyboard-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("action-input");
    for (const token of splitLog(input.value)) act(token);
    input.value = "";
  });
  document.getElementById("undo").addEventListener("click", () => act("U"));
}
race.state = config.race_state;
showPlayers();
tick();
timers.push(setInterval(tick, 250));
timers.push(
  setInterval(() => {
    if (stream.live) stream.socket.send('{"type":"ping"}');
  }, HEARTBEAT_MS),
);
connect();

// For tests and the curious: the page's game and what the server stored of it.
window.easyHarp = {
  get game() {
    return game;
  },
  get stored() {
    return stream.stored;
  },
  act,
};
