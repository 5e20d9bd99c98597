/**
 * The play page, its DOM side: pointer and key events become the log actions
 * gestures.js names, played by the JavaScript engine; the game is kept in
 * localStorage so it survives a reload (and a sign-in), and a won game is
 * submitted at once through submit.js (an Idempotency-Key, retried until the
 * server answers). The hint button asks the solver (POST /api/hint/) for the
 * next action of a win and points at it.
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
  doubleTapGesture,
  dropGesture,
  isDrag,
  keyGesture,
  tapGesture,
  tapSorter,
} from "./gestures.js";
import { describeStep } from "./frames.js";
import { setting } from "./settings.js";
import { pendingFor, submitPending } from "./submit.js";
import { actionText, announce, cardLabel, config, reasonText, renderTable, say, t } from "./ui.js";

const STORAGE_PREFIX = "easyharp.game.";
const RULES_SWITCH_KEY = "easyharp.interactive-rules";

const tableElement = document.getElementById("table");
const storageKey = STORAGE_PREFIX + config.deal;

/** What is kept per deal: the log, and any submission not yet acknowledged. */
let saved = loadSaved();
let game = restoreGame(saved.log);

function loadSaved() {
  try {
    const value = JSON.parse(localStorage.getItem(storageKey) ?? "null");
    if (value && Array.isArray(value.log)) return value;
  } catch {
    // A corrupted entry is dropped: a new game is better than a broken page.
  }
  return { deal: config.deal, log: [], pending: null, submitted: null };
}

function restoreGame(log) {
  try {
    return Game.replay(config.deal, log);
  } catch {
    saved.log = [];
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
  document.getElementById("submit-game").disabled = table.moves === 0 || saved.pending !== null;
  document.getElementById("hint").disabled = table.won || hintInFlight;
  tableElement.dataset.moves = String(table.moves);
  // A hint answers one position: once the game moves on it no longer applies.
  if (hintShown && hintShown.log !== formatLog(game.log)) clearHint();
  else markHint();
}

// ---------------------------------------------------------------- actions

/** Play `token`; on refusal show why (translated) and return the reason code. */
function act(token, { quiet = false } = {}) {
  const wasWon = game.won;
  const before = game.table();
  try {
    game.play(token);
  } catch (error) {
    if (!(error instanceof IllegalActionError)) throw error;
    if (!quiet) say(reasonText(error.code, error.params), "refused");
    return error.code;
  }
  say("");
  announce(actionText(describeStep(before, game.table(), token)));
  hideReminder();
  persist();
  refresh();
  if (game.won && !wasWon) onWon();
  return null;
}

const interactiveRules = document.getElementById("interactive-rules");
interactiveRules.checked = localStorage.getItem(RULES_SWITCH_KEY) !== "off";
interactiveRules.addEventListener("change", () => {
  localStorage.setItem(RULES_SWITCH_KEY, interactiveRules.checked ? "on" : "off");
  if (!interactiveRules.checked) hideReminder();
});

function showReminder() {
  if (!interactiveRules.checked) return;
  document.getElementById("reminder-text").textContent = t("reminder");
  document.getElementById("reminder").hidden = false;
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
    say(reasonText(gesture.refused, gesture.params), "refused");
    if (gesture.remind) showReminder();
  } else {
    say(t(gesture.message), "refused");
  }
}

// ---------------------------------------------------------------- pointer gestures

let press = null; // the pointer press in progress

/**
 * One tap waits a moment for a second one: a double tap means "to the board".
 * With the "Double click" setting off a tap answers at once.
 */
const onTap = tapSorter({
  doubleTap: () => setting("doubleClick"),
  onTap: (place, index) => perform(tapGesture(game, place, index)),
  onDoubleTap: (place, index) => perform(doubleTapGesture(game, place, index)),
  now: () => performance.now(),
  setTimer: (callback, ms) => setTimeout(callback, ms),
  clearTimer: (timer) => clearTimeout(timer),
});

function pressTarget(target) {
  const card = target.closest(".card.up[data-place]");
  if (card)
    return { node: card, place: card.dataset.place, index: Number(card.dataset.index ?? 0) };
  const stock = target.closest('[data-place="s"]');
  if (stock) return { node: stock, place: "s", index: 0 };
  return null;
}

tableElement.addEventListener("pointerdown", (event) => {
  if (event.button !== 0 || game.won) return;
  const target = pressTarget(event.target);
  if (!target) return;
  event.preventDefault();
  press = { ...target, x: event.clientX, y: event.clientY, id: event.pointerId, ghost: null };
});

window.addEventListener("pointermove", (event) => {
  if (!press || event.pointerId !== press.id || press.place === "s") return;
  const dx = event.clientX - press.x;
  const dy = event.clientY - press.y;
  if (!press.ghost) {
    if (!isDrag(dx, dy)) return;
    startDrag(press);
  }
  const rect = press.origin;
  press.ghost.style.transform = `translate(${rect.left + dx}px, ${rect.top + dy}px)`;
  markDropTarget(event.clientX, event.clientY);
});

window.addEventListener("pointerup", (event) => {
  if (!press || event.pointerId !== press.id) return;
  const current = press;
  press = null;
  if (current.ghost) {
    const target = dropTargetAt(event.clientX, event.clientY);
    endDrag(current);
    if (target) perform(dropGesture(game, current.place, current.index, target));
    return;
  }
  onTap(current.place, current.index);
});

window.addEventListener("pointercancel", () => {
  if (press?.ghost) endDrag(press);
  press = null;
});

function draggedNodes(current) {
  if (current.place[0] !== "c") return [current.node];
  const column = tableElement.querySelector(`.column[data-place="${current.place}"]`);
  return [...column.querySelectorAll(".card.up")].filter(
    (node) => Number(node.dataset.index) >= current.index,
  );
}

function startDrag(current) {
  const nodes = draggedNodes(current);
  current.origin = current.node.getBoundingClientRect();
  const ghost = document.createElement("div");
  ghost.className = "drag-ghost";
  nodes.forEach((node, i) => {
    const clone = node.cloneNode(true);
    clone.style.setProperty("--y", String(i * 2));
    ghost.append(clone);
    node.classList.add("dragging");
  });
  ghost.style.transform = `translate(${current.origin.left}px, ${current.origin.top}px)`;
  document.body.append(ghost);
  current.ghost = ghost;
  current.nodes = nodes;
}

function endDrag(current) {
  current.ghost.remove();
  current.nodes.forEach((node) => node.classList.remove("dragging"));
  tableElement
    .querySelectorAll(".drop-target")
    .forEach((node) => node.classList.remove("drop-target"));
}

function dropTargetAt(x, y) {
  const hit = document.elementFromPoint(x, y);
  const drop = hit?.closest("[data-drop]");
  if (drop && tableElement.contains(drop)) return drop.dataset.drop;
  return null;
}

function markDropTarget(x, y) {
  const target = dropTargetAt(x, y);
  tableElement.querySelectorAll(".drop-target").forEach((node) => {
    if (node.dataset.drop !== target) node.classList.remove("drop-target");
  });
  if (target && target !== "s")
    tableElement.querySelector(`[data-drop="${target}"]`)?.classList.add("drop-target");
}

// ---------------------------------------------------------------- keyboard

let keySource = null;

document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, select, textarea")) return;
  const key = keyGesture(keySource, event.key, {
    ctrl: event.ctrlKey,
    alt: event.altKey,
    meta: event.metaKey,
  });
  if (key.preventDefault) event.preventDefault();
  if (key.does === "cancel") {
    keySource = null;
    markKeySource();
    say("");
  } else if (key.does === "hint") {
    askHint();
  } else if (key.does === "pick") {
    keySource = key.source;
    say(`${keySource} →`);
    markKeySource();
  } else if (key.does === "play") {
    if (key.source !== keySource) {
      keySource = key.source;
      markKeySource();
    }
    act(key.action);
  }
});

/** Show which card the keys have picked up (the source of the next action). */
function markKeySource() {
  tableElement
    .querySelectorAll(".card.selected")
    .forEach((node) => node.classList.remove("selected"));
  if (keySource === null) return;
  const place = keySource === "W" ? "w" : `c${Number(keySource) - 1}`;
  const cards = tableElement.querySelectorAll(`.card.up[data-place="${place}"]`);
  cards[cards.length - 1]?.classList.add("selected");
}

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

document.getElementById("restart").addEventListener("click", () => {
  if (game.moves > 0 && !window.confirm(t("confirm_restart"))) return;
  game = Game.fromCode(config.deal);
  saved = { deal: config.deal, log: [], pending: null, submitted: null };
  persist();
  document.getElementById("result").hidden = true;
  say("");
  refresh();
});

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

function onWon() {
  say(t("won"));
  submitGame();
}

/** Freeze the current log as the pending submission (one key per log) and send it. */
function submitGame() {
  const pending = pendingFor(saved.pending, formatLog(game.log));
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
  if (answer.outcome === "refused") {
    persist();
    refresh();
    showResult([
      paragraph(`${t("submit_failed")} ${errorText(answer.body, answer.statusText)}`, "error"),
    ]);
    return;
  }
  saved.submitted = { ...answer.body, log: answer.pending.log };
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

async function showSubmitted(game) {
  const parts = [
    paragraph(t("submitted")),
    paragraph(t("result", { score: game.score, moves: game.moves }), "result-line"),
  ];
  const replay = document.createElement("a");
  replay.href = `/replays/${game.id}/`;
  replay.textContent = t("replay");
  replay.id = "replay-link";
  if (!game.daily) {
    parts.push(paragraph(t("not_daily")), replay);
    showResult(parts);
    return;
  }
  showResult([...parts, replay]);
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

document.getElementById("submit-game").addEventListener("click", () => {
  if (!game.won && !window.confirm(t("confirm_submit"))) return;
  submitGame();
});

// ---------------------------------------------------------------- hints

/*
 * A hint only reads: the server's solver answers from the current deal and
 * log, the page names and points at the action, and the player plays it (with
 * "Play this move" or by hand) like any other. Asking changes neither the log
 * nor the score; hints are for practice.
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
  if (response.status === 429) return { text: t("hint_throttled"), action: null, kind: "error" };
  if (response.status >= 500) return failed;
  if (!response.ok) {
    return {
      text: `${t("hint_refused")} ${errorText(body, response.statusText)}`,
      action: null,
      kind: "error",
    };
  }
  if (body.result === "move") {
    // Offer to play it only when this page's engine agrees it is legal here.
    const action = game.refusal(body.action) === null ? body.action : null;
    const text = `${hintText(body.action)} ${t("hint_moves_to_win", { moves: body.moves_to_win })}`;
    return { text, action, kind: "move" };
  }
  if (body.result === "lost") return { text: t("hint_lost"), action: null, kind: "lost" };
  if (body.result === "won") return { text: t("hint_won"), action: null, kind: "info" };
  return { text: t("hint_unknown"), action: null, kind: "info" };
}

async function askHint() {
  if (hintInFlight || game.won) return;
  const log = formatLog(game.log);
  hintInFlight = true;
  hintButton.disabled = true;
  hintButton.setAttribute("aria-busy", "true");
  showHint(t("hint_asking"), { log });
  try {
    const answer = await fetchHint(log);
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

refresh();
if (saved.pending && config.user) sendPending();
else if (saved.pending) askToSignIn();
else if (saved.submitted && formatLog(game.log) === saved.submitted.log)
  showSubmitted(saved.submitted);
else if (game.won) submitGame();

// For tests and the curious: the engine state of the page.
window.easyHarp = {
  get game() {
    return game;
  },
  act,
};
