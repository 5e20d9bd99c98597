/**
 * The replay page: the frames of `GET /api/games/{id}/replay/` (frame 0 is the
 * deal, frame i the table after action i), with play / pause, step, jump and
 * speed. It needs no engine: each frame carries its table.
 */
import { config, renderTable, say, t } from "./ui.js";

const tableElement = document.getElementById("table");
const scrub = document.getElementById("scrub");
const jump = document.getElementById("jump");
const speed = document.getElementById("speed");
const playPause = document.getElementById("play-pause");
const playLabel = playPause.textContent;

let frames = [];
let current = 0;
let timer = null;

function show(index) {
  current = Math.max(0, Math.min(frames.length - 1, index));
  const frame = frames[current];
  renderTable(tableElement, frame.table);
  document.getElementById("score").textContent = String(frame.score);
  document.getElementById("moves").textContent = String(frame.moves);
  const label =
    current === 0
      ? t("start")
      : `${t("action_n", { index: current, total: frames.length - 1 })}: ${frame.token}`;
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
  if (current >= frames.length - 1) show(0);
  clearInterval(timer);
  timer = setInterval(() => {
    if (current >= frames.length - 1) pause();
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
document.getElementById("first").addEventListener("click", () => step(-frames.length));
document.getElementById("last").addEventListener("click", () => step(frames.length));
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
    const body = await response.json();
    frames = body.frames;
  } catch {
    say(t("load_failed"), "refused");
    return;
  }
  say("");
  scrub.max = String(frames.length - 1);
  jump.max = String(frames.length - 1);
  show(0);
}

load();
