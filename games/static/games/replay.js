/**
 * The replay page: the tables of `GET /api/games/{id}/replay/` (table 0 is the
 * deal, table i the table after action i), with play / pause, step, jump and
 * speed. It needs no engine: the tables are rebuilt from the replay's steps
 * (frames.js), and each action is read off the tables around it, written out
 * ("8♥ from column 5 to column 2") and marked on the table: the card that
 * moved and the place it left. A game that carries its per-action times
 * (ranked games) can play at the speed it was played.
 */
import { describeStep, replayTables } from "./frames.js";
import { actionText, announce, config, renderTable, say, t } from "./ui.js";

const tableElement = document.getElementById("table");
const scrub = document.getElementById("scrub");
const jump = document.getElementById("jump");
const speed = document.getElementById("speed");
const playPause = document.getElementById("play-pause");
const playLabel = playPause.textContent;
/** Real speed waits as long as the player did between actions, but no pause is longer than this. */
const LONGEST_PAUSE_MS = 3000;
const SHORTEST_PAUSE_MS = 60;
const times = Array.isArray(config.times) ? config.times : null;

let tables = [];
let tokens = [];
let current = 0;
let timer = null;

/** The card an action moved, as drawn now, and the place it left: marked for the eye. */
function markStep(step) {
  if (step.kind === "stock") {
    tableElement.querySelector(".slot.waste .card")?.classList.add("moved");
    tableElement.querySelector('[data-place="s"]')?.classList.add("moved-from");
    return;
  }
  if (step.kind !== "move" || !step.card) return;
  const target = /^F/.test(step.to) ? `f${Number(step.to[1]) - 1}` : `c${Number(step.to) - 1}`;
  const cards = [...tableElement.querySelectorAll(`.card.up[data-place="${target}"]`)];
  cards.slice(cards.length - step.count).forEach((node) => node.classList.add("moved"));
  const source =
    step.from === "W"
      ? '[data-place="w"]'
      : /^F/.test(step.from)
        ? `[data-place="f${Number(step.from[1]) - 1}"]`
        : `.column[data-place="c${Number(step.from) - 1}"]`;
  tableElement.querySelector(source)?.classList.add("moved-from");
}

function show(index) {
  current = Math.max(0, Math.min(tables.length - 1, index));
  const table = tables[current];
  renderTable(tableElement, table);
  document.getElementById("score").textContent = String(table.score);
  document.getElementById("moves").textContent = String(table.moves);
  let label = t("start");
  if (current > 0) {
    const token = tokens[current - 1];
    const step = describeStep(tables[current - 1], table, token);
    markStep(step);
    const words = actionText(step);
    label = `${t("action_n", { index: current, total: tables.length - 1 })}: ${words} (${token})`;
    if (!timer) announce(words);
  } else if (!timer) {
    announce(label); // back at the deal: the last action said no longer holds
  }
  document.getElementById("step-label").textContent = label;
  tableElement.dataset.step = String(current);
  scrub.value = String(current);
  jump.value = String(current);
}

function pause() {
  clearTimeout(timer);
  timer = null;
  playPause.textContent = playLabel;
  playPause.setAttribute("aria-pressed", "false");
}

/** How long to wait before action `index` (0-based): the chosen speed, or the player's own pace. */
function delayBefore(index) {
  if (speed.value !== "real" || !times) return Number(speed.value);
  const gap = index === 0 ? times[0] : times[index] - times[index - 1];
  return Math.max(SHORTEST_PAUSE_MS, Math.min(LONGEST_PAUSE_MS, Number(gap) || 0));
}

function play() {
  if (current >= tables.length - 1) show(0);
  clearTimeout(timer);
  const next = () => {
    if (current >= tables.length - 1) {
      pause();
      return;
    }
    timer = setTimeout(() => {
      show(current + 1);
      next();
    }, delayBefore(current));
  };
  timer = true; // playing, before the first timer is set
  next();
  playPause.textContent = t("pause");
  playPause.setAttribute("aria-pressed", "true");
}

function step(delta) {
  pause();
  show(current + delta);
}

playPause.addEventListener("click", () => (timer ? pause() : play()));
document.getElementById("back").addEventListener("click", () => step(-1));
document.getElementById("forward").addEventListener("click", () => step(1));
document.getElementById("first").addEventListener("click", () => step(-tables.length));
document.getElementById("last").addEventListener("click", () => step(tables.length));
scrub.addEventListener("input", () => {
  pause();
  show(Number(scrub.value));
});
document.getElementById("jump-form").addEventListener("submit", (event) => {
  event.preventDefault();
  pause();
  show(Number(jump.value));
});
speed.addEventListener("change", () => {
  if (timer) play();
});
/** The keys that study a replay: arrows step, Home and End jump to the deal and the last action. */
const STUDY_KEYS = {
  ArrowLeft: () => step(-1),
  ArrowRight: () => step(1),
  Home: () => step(-tables.length),
  End: () => step(tables.length),
};
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  // Fields keep their own keys (the slider steps itself, the number box edits);
  // a button that was just clicked keeps the focus, and the keys still study.
  if (event.target.closest("input, select, textarea")) return;
  if (STUDY_KEYS[event.key]) {
    event.preventDefault();
    STUDY_KEYS[event.key]();
  } else if (event.key === " " && !event.target.closest("button, a")) {
    event.preventDefault();
    timer ? pause() : play();
  }
});

async function load() {
  say(t("loading"));
  try {
    const response = await fetch(config.replay_url, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(String(response.status));
    const replay = await response.json();
    tables = replayTables(replay);
    tokens = replay.steps.map((step) => step.token);
  } catch {
    say(t("load_failed"), "refused");
    return;
  }
  say("");
  scrub.max = String(tables.length - 1);
  jump.max = String(tables.length - 1);
  if (times && times.length === tokens.length) {
    speed.querySelector('option[value="real"]').hidden = false;
    speed.value = "real";
  }
  show(0);
}

load();
