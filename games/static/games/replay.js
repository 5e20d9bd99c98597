/**
 * The replay page: the tables of `GET /api/games/{id}/replay/` (table 0 is the
 * deal, table i the table after action i), with play / pause, step, jump and
 * speed. It needs no engine: the tables are rebuilt from the replay's steps
 * (frames.js).
 */
import { replayTables } from "./frames.js";
import { config, renderTable, say, t } from "./ui.js";

const tableElement = document.getElementById("table");
const scrub = document.getElementById("scrub");
const jump = document.getElementById("jump");
const speed = document.getElementById("speed");
const playPause = document.getElementById("play-pause");
const playLabel = playPause.textContent;

let tables = [];
let tokens = [];
let current = 0;
let timer = null;

function show(index) {
  current = Math.max(0, Math.min(tables.length - 1, index));
  const table = tables[current];
  renderTable(tableElement, table);
  document.getElementById("score").textContent = String(table.score);
  document.getElementById("moves").textContent = String(table.moves);
  const label =
    current === 0
      ? t("start")
      : `${t("action_n", { index: current, total: tables.length - 1 })}: ${tokens[current - 1]}`;
  document.getElementById("step-label").textContent = label;
  tableElement.dataset.step = String(current);
  scrub.value = String(current);
  jump.value = String(current);
}

function pause() {
  clearInterval(timer);
  timer = null;
  playPause.textContent = playLabel;
  playPause.setAttribute("aria-pressed", "false");
}

function play() {
  if (current >= tables.length - 1) show(0);
  clearInterval(timer);
  timer = setInterval(() => {
    if (current >= tables.length - 1) pause();
    else show(current + 1);
  }, Number(speed.value));
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
document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, select, textarea")) return;
  if (event.key === "ArrowLeft") step(-1);
  else if (event.key === "ArrowRight") step(1);
  else if (event.key === " ") {
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
  show(0);
}

load();
