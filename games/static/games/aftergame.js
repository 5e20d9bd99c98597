/**
 * The after-game panel of the play page: once a ranked game of the day is
 * stored, its score, moves and time against par, its rank and percentile
 * (refreshed while the day runs), the player's streak and histogram, the
 * countdown to the next deal, the text and picture to share (the day's number,
 * the grid of the game's course, its result: nothing of the deal) with a share
 * button, and the badges of the month this game earned. A game on no board
 * (assisted, or held for review) has no rank nor badge, and the panel says why.
 *
 * Its words are in the page (`<template id="aftergame-template">`, from
 * `games/_aftergame.html`); it reads the public API by URL.
 */

import { againstPar, gridRow, moveBars, standing } from "./daily.js";
import { startCountdowns } from "./countdown.js";
import { clock, config } from "./ui.js";

// Seconds between refreshes of the rank while the day runs.
const RANK_REFRESH_MS = 30_000;
let refreshing = null;

async function getJSON(url) {
  const response = await fetch(url, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

function words(panel) {
  const found = {};
  for (const element of panel.querySelectorAll("[data-string]"))
    found[element.dataset.string] = element.textContent;
  return found;
}

function fill(panel, slot, text) {
  const element = panel.querySelector(`[data-slot="${slot}"]`);
  if (element) element.textContent = text;
}

function drawBars(table, bars) {
  const svg = "http://www.w3.org/2000/svg";
  const body = document.createElement("tbody");
  for (const bar of bars) {
    const row = document.createElement("tr");
    const label = document.createElement("th");
    label.scope = "row";
    label.textContent = bar.label;
    const cell = document.createElement("td");
    cell.className = "bar-cell";
    const picture = document.createElementNS(svg, "svg");
    picture.setAttribute("class", "bar");
    picture.setAttribute("viewBox", "0 0 100 10");
    picture.setAttribute("preserveAspectRatio", "none");
    picture.setAttribute("aria-hidden", "true");
    const rect = document.createElementNS(svg, "rect");
    rect.setAttribute("width", String(bar.width));
    rect.setAttribute("height", "10");
    picture.append(rect);
    cell.append(picture);
    const count = document.createElement("td");
    count.className = "num";
    count.textContent = String(bar.count);
    row.append(label, cell, count);
    body.append(row);
  }
  table.replaceChildren(body);
}

/** Whether the game is on the day's boards (so it has a rank). */
function onBoard(game) {
  return !game.assisted && !game.held;
}

async function showRank(panel, game, text) {
  if (!onBoard(game)) return false;
  const url = `/api/daily/${game.daily}/leaderboard/?order=score&around=me&limit=1`;
  const board = await getJSON(url);
  if (!board.me) return false;
  fill(
    panel,
    "rank",
    text.rank_of.replace("{rank}", board.me.rank).replace("{total}", board.total),
  );
  fill(panel, "percentile", standing(board.me.rank, board.total, config.strings));
  return true;
}

/** The share card of the game (text and link), fetched once per panel. */
function shareCard(panel, game) {
  if (!panel.shareCard) {
    panel.shareCard = getJSON(`/api/games/${game.id}/share/`);
    // A failed fetch is asked again by the next click.
    panel.shareCard.catch(() => {
      panel.shareCard = null;
    });
  }
  return panel.shareCard;
}

/** The grid of the share's course, drawn with squares, each row's words after it. */
function drawGrid(rows, label) {
  const grid = document.createElement("div");
  grid.className = "share-grid";
  grid.setAttribute("role", "img");
  grid.setAttribute("aria-label", label);
  for (const row of rows) {
    const { kinds, label: words } = gridRow(row);
    const line = document.createElement("span");
    line.className = "grid-row";
    for (const kind of kinds) {
      const drawn = document.createElement("span");
      drawn.className = `square ${kind}`;
      line.append(drawn);
    }
    const counted = document.createElement("span");
    counted.className = "grid-words";
    counted.textContent = words;
    line.append(counted);
    grid.append(line);
  }
  return grid;
}

/** Show what will be shared: its lines, the grid drawn in their midst, and its picture. */
async function showShare(panel, game) {
  const card = await shareCard(panel, game);
  // The text is its title, the grid's rows, the result's lines and the link.
  const [title, ...rest] = card.text.split("\n");
  const rows = rest.slice(0, card.grid.length);
  const lines = rest.slice(card.grid.length);
  const line = (words) => {
    const element = document.createElement("div");
    element.textContent = words;
    return element;
  };
  panel
    .querySelector('[data-slot="share_preview"]')
    .replaceChildren(
      line(title),
      drawGrid(rows, rows.map((row) => gridRow(row).label).join(", ")),
      ...lines.map(line),
    );
  const picture = panel.querySelector('[data-slot="share_picture"]');
  picture.alt = [title, ...lines.slice(0, -1)].join(". ");
  picture.src = `/cards/games/${game.id}.png`;
  picture.hidden = false;
  const link = panel.querySelector('[data-slot="card_link"]');
  link.href = card.url;
  link.hidden = false;
}

/** The badges of the game's month that this game earned (their day is the game's). */
async function showBadges(panel, game, text) {
  const month = game.daily.slice(0, 7);
  const url = `/api/players/${encodeURIComponent(config.user)}/badges/?month=${month}`;
  const { badges } = await getJSON(url);
  const earned = badges.filter((badge) => badge.earned_on === game.daily);
  if (!earned.length) return;
  const list = panel.querySelector('[data-slot="badge_list"]');
  list.replaceChildren(
    ...earned.map((badge) => {
      const item = document.createElement("li");
      item.className = "badge-item earned";
      item.dataset.badge = badge.code;
      const mark = document.createElement("span");
      mark.className = "badge-icon";
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = badge.mark;
      const name = document.createElement("strong");
      name.textContent = badge.name;
      const words = document.createElement("span");
      words.className = "badge-words";
      const description = document.createElement("span");
      description.className = "small";
      description.textContent = badge.description;
      const state = document.createElement("span");
      state.className = "badge-state";
      state.textContent = text.earned_on;
      words.append(name, description, state);
      item.append(mark, words);
      return item;
    }),
  );
  panel.querySelector('[data-slot="badges"]').hidden = false;
}

async function share(panel, game, text) {
  const state = panel.querySelector('[data-slot="share_state"]');
  try {
    const card = await shareCard(panel, game);
    if (navigator.share) {
      try {
        await navigator.share({ text: card.text });
        return;
      } catch (error) {
        if (error.name === "AbortError") return;
      }
    }
    const box = panel.querySelector('[data-slot="share_text"]');
    box.value = card.text;
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(card.text);
      state.textContent = text.copied;
    } else {
      box.hidden = false;
      box.select();
      state.textContent = text.copy_it;
    }
  } catch {
    state.textContent = text.share_failed;
  }
}

/** Show the panel for a stored game (the submission's answer); nothing for practice. */
export async function showAfterGame(game) {
  const template = document.getElementById("aftergame-template");
  const panel = document.getElementById("aftergame");
  if (!template || !panel || !game.ranked || !game.daily) return;
  panel.replaceChildren(template.content.cloneNode(true));
  panel.shareCard = null;
  const text = words(panel);
  fill(panel, "score", String(game.score));
  fill(panel, "moves", String(game.moves));
  fill(panel, "time", clock(game.duration_ms) || "–");
  panel.querySelector('[data-slot="assisted_note"]').hidden = !game.assisted;
  panel.querySelector('[data-slot="held_note"]').hidden = !game.held;
  panel.querySelector('[data-slot="rank_note"]').hidden = !onBoard(game);
  panel.querySelector('[data-slot="share"]').addEventListener("click", () => {
    share(panel, game, text);
  });
  panel.hidden = false;
  showShare(panel, game).catch(() => {});
  if (onBoard(game)) showBadges(panel, game, text).catch(() => {});
  try {
    const [day, stats] = await Promise.all([
      getJSON(`/api/daily/${game.daily}/`),
      getJSON(`/api/players/${encodeURIComponent(config.user)}/stats/`),
    ]);
    // Par is the moves of a win: a game not won has nothing to compare with it.
    fill(panel, "vs_par", (game.won && againstPar(game.moves, day.par)) || "–");
    fill(panel, "streak", String(stats.current_streak));
    panel.querySelector('[data-slot="countdown"]').setAttribute("datetime", day.closes_at);
    startCountdowns(panel);
    drawBars(
      panel.querySelector('[data-slot="histogram"]'),
      moveBars(stats.moves_vs_par, text.par_or_better),
    );
    const ranked = await showRank(panel, game, text);
    if (ranked && refreshing === null) {
      refreshing = setInterval(() => {
        if (Date.now() >= Date.parse(day.closes_at)) clearInterval(refreshing);
        else showRank(panel, game, text).catch(() => {});
      }, RANK_REFRESH_MS);
    }
  } catch {
    // The panel is a courtesy: the game is stored either way.
  }
}
