/**
 * A day's board kept live over the websocket
 * `/ws/daily/{date}/leaderboard/?order=score|moves` (or the socket the page
 * names in `config.board_socket`: a friends or a league board): the snapshot
 * on connect, then updates as games arrive. The page's own server-rendered
 * rows stay until the first snapshot, so the board reads fine without
 * JavaScript.
 */
import { standing } from "./daily.js";
import { followButtons } from "./follow.js";
import { reconnectWait } from "./reconnect.js";
import { clock, config, t } from "./ui.js";

const table = document.querySelector("[data-board]");
const around = document.querySelector("[data-around]");
const totalElement = document.querySelector("[data-total]");
const stateElements = document.querySelectorAll("[data-live-state]");
const limit = Number(table?.dataset.limit ?? config.limit ?? 100);
const RECONNECT_MAX_MS = 15000;

/** The board as the page knows it: entries by rank, total, the player's own entry. */
const board = { entries: [], total: 0, me: null };

function cell(text, className = "", label = "") {
  const td = document.createElement("td");
  if (className) td.className = className;
  // On a phone the row is a list entry, each value labelled (site.css, `.board.stack`).
  if (label) td.dataset.label = label;
  if (text instanceof Node) td.append(text);
  else td.textContent = text;
  return td;
}

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}

/** The column headings of `tbody`'s table, which label the values of a row shown as a list. */
function headings(tbody) {
  return [...(tbody.closest("table")?.querySelectorAll("thead th") ?? [])].map((th) =>
    th.textContent.trim(),
  );
}

function playerCell(player) {
  const td = cell(link(`/players/${encodeURIComponent(player)}/`, player), "lead");
  td.dataset.follow = player;
  return td;
}

function row(entry, flash, labels) {
  const tr = document.createElement("tr");
  if (config.user && entry.player === config.user) tr.classList.add("mine");
  if (flash) tr.classList.add("flash");
  tr.dataset.player = entry.player;
  tr.append(
    cell(String(entry.rank), "num rank", labels[0]),
    playerCell(entry.player),
    cell(String(entry.score), "num", labels[2]),
    cell(String(entry.moves), "num", labels[3]),
    cell(clock(entry.duration_ms), "num", labels[4]),
    cell(entry.won ? "✓" : "", "", labels[5]),
    cell(entry.game ? replayLink(entry) : ""),
  );
  return tr;
}

/**
 * The entry's replay link, or a lock while the day runs and the viewer has not
 * played it (the server refuses the replay then; docs/FAIR_PLAY.md).
 */
function replayLink(entry) {
  if (!config.replays_locked || (config.user && entry.player === config.user)) {
    return link(`/replays/${entry.game}/`, t("replay"));
  }
  const span = document.createElement("span");
  span.className = "locked";
  span.textContent = t("locked");
  span.title = t("replays_locked");
  const why = document.createElement("span");
  why.className = "visually-hidden";
  why.textContent = `: ${t("replays_locked")}`;
  span.append(why);
  return span;
}

function renderRows(tbody, entries, previous) {
  const before = new Map(
    previous.map((entry) => [entry.player, `${entry.rank}/${entry.score}/${entry.moves}`]),
  );
  if (entries.length === 0) {
    const tr = document.createElement("tr");
    tr.className = "empty";
    const td = cell(t("no_entries"));
    td.colSpan = 7;
    tr.append(td);
    tbody.replaceChildren(tr);
    return;
  }
  const labels = headings(tbody);
  tbody.replaceChildren(
    ...entries.map((entry) =>
      row(
        entry,
        previous.length > 0 &&
          before.get(entry.player) !== `${entry.rank}/${entry.score}/${entry.moves}`,
        labels,
      ),
    ),
  );
}

/**
 * A friends board lists below its rows the friends who have not played yet
 * (`#friends-not-played`): one whose game arrives leaves that list.
 */
function markPlayed(entries) {
  const notPlayed = document.getElementById("friends-not-played");
  if (!notPlayed) return;
  const played = new Set(entries.map((entry) => entry.player));
  notPlayed.querySelectorAll("[data-player]").forEach((item) => {
    if (played.has(item.dataset.player)) item.remove();
  });
  notPlayed.hidden = !notPlayed.querySelector("[data-player]");
}

let shown = [];
function render() {
  // The viewer's own entry on the day's board: they have played it, its replays are open.
  if (board.me) config.replays_locked = false;
  const entries = board.entries.slice(0, limit);
  renderRows(table.querySelector("tbody"), entries, shown);
  shown = entries;
  if (totalElement) totalElement.textContent = String(board.total);
  table.dataset.total = String(board.total);
  const myRank = document.getElementById("my-rank");
  if (myRank && board.me) myRank.textContent = t("you_are_ranked", board.me);
  followHomePage();
  if (around) refreshAroundMe();
  markPlayed(board.entries);
  followButtons(table);
}

// How long the home page waits before it takes "Today so far" again: the
// games of a busy moment are counted in one request.
const SPREAD_WAIT_MS = 5000;
let spreadTimer = null;

/**
 * The home page's figures that follow the board (its score board): the
 * player's own rank and percentile, the count of players today, and the
 * "Today so far" section, taken again from the server (`/today/spread/`)
 * once the board counts more players than it does.
 */
function followHomePage() {
  const dayRank = document.getElementById("day-rank-text");
  if (dayRank && board.me?.rank) {
    dayRank.textContent = t("rank_of", { rank: board.me.rank, total: board.total });
    const better = document.getElementById("day-percentile");
    if (better) better.textContent = standing(board.me.rank, board.total, config.strings);
  }
  const playersToday = document.getElementById("players-today");
  if (playersToday) playersToday.textContent = t("players_today", { count: board.total });
  const spread = document.getElementById("today-spread");
  if (!spread || spreadTimer || Number(spread.dataset.players) >= board.total) return;
  spreadTimer = setTimeout(async () => {
    try {
      const response = await fetch("/today/spread/", { credentials: "same-origin" });
      if (!response.ok) return;
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = page.getElementById("today-spread");
      if (fresh) document.getElementById("today-spread")?.replaceWith(fresh);
    } catch {
      // The next change of the board tries again.
    } finally {
      spreadTimer = null;
    }
  }, SPREAD_WAIT_MS);
}

/**
 * Apply a server message to the board. A snapshot replaces everything; an
 * update carries the board's new state for the entries it touched.
 */
export function applyMessage(state, message) {
  if (message.type === "snapshot") {
    state.entries = message.entries ?? [];
    state.total = message.total ?? state.entries.length;
    state.me = message.me ?? null;
    return true;
  }
  if (message.type !== "update") return false;
  if (Array.isArray(message.entries)) state.entries = message.entries;
  if (typeof message.total === "number") state.total = message.total;
  if ("me" in message) state.me = message.me;
  return true;
}

let aroundTimer = null;
function refreshAroundMe() {
  // The signed-in player's neighbourhood comes from the REST API (it may be far below the top).
  clearTimeout(aroundTimer);
  aroundTimer = setTimeout(async () => {
    try {
      const response = await fetch(
        config.around_api ??
          `/api/daily/${config.date}/leaderboard/?order=${config.order}&around=me&limit=11`,
        {
          credentials: "same-origin",
          headers: { Accept: "application/json" },
        },
      );
      if (!response.ok) return;
      const page = await response.json();
      renderRows(around.querySelector("tbody"), page.entries ?? [], []);
      followButtons(around);
    } catch {
      // Try again with the next update.
    }
  }, 200);
}

function setState(state) {
  stateElements.forEach((node) => {
    node.dataset.state = state;
    node.textContent = state === "live" ? t("live") : t("offline");
  });
}

let retryDelay = 1000;
function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const path = config.board_socket ?? `/ws/daily/${config.date}/leaderboard/?order=${config.order}`;
  const socket = new WebSocket(`${scheme}://${location.host}${path}`);
  socket.addEventListener("open", () => {
    retryDelay = 1000;
  });
  socket.addEventListener("message", (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    // Whether this viewer may open the day's replays yet (it changes once they have played).
    if (message.type === "snapshot" && typeof message.replays_locked === "boolean") {
      config.replays_locked = message.replays_locked;
    }
    if (applyMessage(board, message)) {
      setState("live");
      render();
      document.body.dataset.boardMessages = String(
        Number(document.body.dataset.boardMessages ?? 0) + 1,
      );
    }
  });
  socket.addEventListener("close", (event) => {
    setState("offline");
    // 4000-4999: the server refused this board for good (e.g. no such day); do not hammer it.
    if (event.code >= 4000 && event.code < 5000) return;
    setTimeout(connect, reconnectWait(event.code, retryDelay));
    retryDelay = Math.min(RECONNECT_MAX_MS, retryDelay * 2);
  });
}

if (table && config.date) {
  setState("offline");
  if (around) refreshAroundMe();
  connect();
}
