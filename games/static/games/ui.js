/**
 * What every page script shares: the page's config (rendered by the view as
 * JSON, strings already in the player's language) and the drawing of a table
 * dict (the shape of Game.table() in both engines) as cards.
 */

const configElement = document.getElementById("page-config");

/** The page's config: user, csrf token, urls, translated strings. */
export const config = configElement ? JSON.parse(configElement.textContent) : { strings: {} };

const pluralRules = new Intl.PluralRules(config.language ?? "en");

/**
 * A translated string, with `{name}` placeholders filled from `params`. A
 * string with plural forms (`{count, one, other}`, see games/web.py) takes the
 * form that the number in its `count` field asks for in the page's language.
 */
export function t(key, params = {}) {
  let text = config.strings?.[key] ?? key;
  if (typeof text === "object") {
    text = text[pluralRules.select(Number(params[text.count]))] ?? text.other;
  }
  return text.replace(/\{(\w+)\}/g, (whole, name) =>
    name in params ? String(params[name]) : whole,
  );
}

// A game's time as every page shows it (the live page, the boards, the panel).
export { clock } from "./daily.js";

/**
 * The player's-language text of an engine refusal: its reason code, filled
 * with the engine's fields (cards shown as on the cards, suits and places
 * translated). A field the server did not send shows as "…".
 */
export function reasonText(code, params = {}) {
  const template = config.strings?.reasons?.[code] ?? code;
  const fields = {};
  for (const [name, value] of Object.entries(params)) {
    if (name === "card" || name === "target") fields[name] = cardLabel(value);
    else if (name === "suit") fields[name] = config.strings?.suits?.[value] ?? value;
    else if (name === "source") fields[name] = placeLabel(value);
    else fields[name] = value;
  }
  const text = template.replace(/\{(\w+)\}/g, (whole, name) =>
    name in fields ? String(fields[name]) : "…",
  );
  // The engine's reasons are clauses ("no foundation accepts 6♦"): shown as a sentence.
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** A place as the log writes it ("5", "W", "F3", as refusals carry it) in the player's words. */
export function placeLabel(token) {
  if (/^[1-9]$/.test(token)) return t("column_n", { n: token });
  if (token === "W") return t("the_waste");
  return token;
}

const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RED_SUITS = new Set(["H", "D"]);
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

const FACES = new Set(["J", "Q", "K"]);

/** The rank as printed on the card in the player's language ("10", "B" for a Dutch jack). */
function rankLetter(rank) {
  if (rank === "T") return "10";
  return config.strings?.rank_letters?.[rank] ?? rank;
}

/** "TH" → "10♥": the rank as players read it and the suit symbol. */
export function cardLabel(text) {
  return rankLetter(text[0]) + SUIT_SYMBOLS[text[1]];
}

/** "TH" → "10 of hearts": the card in words, for screen readers. */
export function cardName(text) {
  const rank = text[0] === "T" ? "10" : (config.strings?.rank_names?.[text[0]] ?? text[0]);
  const suit = SUIT_NAMES[text[1]];
  return t("card_name", { rank, suit: config.strings?.suits?.[suit] ?? suit });
}

function element(tag, className, attributes = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** What a face card shows in its middle: a figure that reads as jack, queen or king. */
const FIGURES = { J: "♞", Q: "♛", K: "♚" };

/**
 * A face-up card: rank and suit in the corner (visible when overlapped) and
 * large in the middle; a face card shows its figure and rank letter framed.
 * Its accessible name says the card and, when given, where it lies.
 */
export function cardElement(text, place = "") {
  const suit = text[1];
  const face = FACES.has(text[0]);
  const name = place ? t("card_at", { card: cardName(text), place }) : cardName(text);
  const node = element(
    "div",
    `card up ${RED_SUITS.has(suit) ? "red" : "black"} suit-${SUIT_NAMES[suit]}${face ? " face" : ""}`,
    { "data-card": text, "aria-label": name, role: "img" },
  );
  const corner = element("span", "corner", { "aria-hidden": "true" });
  corner.textContent = cardLabel(text);
  const pip = element("span", "pip", { "aria-hidden": "true" });
  if (face) {
    const figure = element("span", "figure");
    figure.textContent = FIGURES[text[0]];
    const monogram = element("span", "monogram");
    monogram.textContent = `${rankLetter(text[0])}${SUIT_SYMBOLS[suit]}`;
    pip.append(figure, monogram);
  } else {
    pip.textContent = SUIT_SYMBOLS[suit];
  }
  node.append(corner, pip);
  return node;
}

function faceDownElement() {
  return element("div", "card down", { "aria-label": t("face_down"), role: "img" });
}

function slot(className, attributes, label) {
  const node = element("div", `slot ${className}`, attributes);
  if (label) {
    const mark = element("span", "slot-mark", { "aria-hidden": "true" });
    mark.textContent = label;
    node.append(mark);
  }
  return node;
}

/**
 * Draw `table` into `container`: a top row (stock, waste, F1..F8) and the 9
 * columns. Every place carries data-place ("s", "w", "f0".."f7", "c0".."c8")
 * and every face-up column card its data-index in the column's face-up cards,
 * which is all the play page needs to turn gestures into actions. Cards that
 * changed place slide there from where they were, and a table that has just
 * been won celebrates.
 */
export function renderTable(container, table) {
  const before = cardPositions(container);
  const wasWon = container.classList.contains("won");
  const top = element("div", "top-row");

  const stock = slot("stock", {
    "data-place": "s",
    "data-drop": "s",
    role: "button",
    "aria-label": `${t("stock")}: ${table.stock}`,
  });
  if (table.stock > 0) {
    const back = faceDownElement();
    back.setAttribute("aria-hidden", "true");
    back.removeAttribute("role");
    back.removeAttribute("aria-label");
    stock.append(back, countBadge(table.stock));
  } else {
    stock.classList.add("empty");
    stock.append(Object.assign(element("span", "slot-mark"), { textContent: "↻" }));
  }

  const waste = slot("waste", { "data-place": "w", role: "group", "aria-label": t("waste") });
  if (table.waste_top) {
    const card = cardElement(table.waste_top, t("the_waste"));
    card.dataset.place = "w";
    waste.append(card, countBadge(table.waste));
  }
  top.append(stock, waste);

  const foundations = element("div", "foundations");
  table.foundations.forEach((foundation, index) => {
    const place = `f${index}`;
    const name = t("foundation_n", { n: index + 1 });
    const node = slot(
      `foundation suit-${SUIT_NAMES[foundation.suit]}`,
      {
        "data-place": place,
        "data-drop": place,
        role: "group",
        "aria-label": `${name}: ${foundation.count}`,
      },
      SUIT_SYMBOLS[foundation.suit],
    );
    if (foundation.top) {
      const card = cardElement(foundation.top, name);
      card.dataset.place = place;
      node.append(card);
    }
    foundations.append(node);
  });
  top.append(foundations);

  const columns = element("div", "columns");
  table.columns.forEach((column, index) => {
    const place = `c${index}`;
    const name = t("column_n", { n: index + 1 });
    const node = element("div", "column", {
      "data-place": place,
      "data-drop": place,
      role: "group",
      "aria-label": name,
    });
    if (column.down === 0 && column.up.length === 0) node.classList.add("empty");
    // A card lies below the strips of the cards above it: --d face-down ones
    // and --u face-up ones, whose heights site.css sets (face-up strips taller).
    for (let i = 0; i < column.down; i++) {
      const card = faceDownElement();
      card.style.setProperty("--d", String(i));
      node.append(card);
    }
    column.up.forEach((text, i) => {
      const card = cardElement(text, name);
      card.dataset.place = place;
      card.dataset.index = String(i);
      card.style.setProperty("--d", String(column.down));
      card.style.setProperty("--u", String(i));
      card.tabIndex = -1;
      node.append(card);
    });
    node.style.setProperty("--downs", String(column.down));
    node.style.setProperty("--ups", String(column.up.length));
    columns.append(node);
  });

  container.replaceChildren(top, columns);
  container.classList.toggle("won", Boolean(table.won));
  // A won table says so (site.css draws it over the table) for as long as it stands won.
  if (table.won) container.dataset.celebration = t("won");
  else delete container.dataset.celebration;
  slideCards(container, before);
  if (table.won && !wasWon && before.size > 0) celebrate(container);
}

function countBadge(count) {
  const badge = element("span", "count", { "aria-hidden": "true" });
  badge.textContent = String(count);
  return badge;
}

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");
/** More cards than a king's run changing place at once is a jump, not a move: no slide. */
const MAX_SLIDING_CARDS = 13;
const SLIDE_MS = 180;

/** Where every face-up card of `container` is drawn: card text → [{place, rect}]. */
function cardPositions(container) {
  const positions = new Map();
  container.querySelectorAll(".card.up[data-card]").forEach((node) => {
    const list = positions.get(node.dataset.card) ?? [];
    list.push({ place: node.dataset.place, rect: node.getBoundingClientRect() });
    positions.set(node.dataset.card, list);
  });
  const stock = container.querySelector('[data-place="s"]');
  if (stock) positions.set("stock", [{ place: "s", rect: stock.getBoundingClientRect() }]);
  return positions;
}

/**
 * Slide the cards that changed place from where they were drawn before (the
 * two copies of a card are told apart by their place; a card new to the
 * waste comes from the stock). Nothing moves for players who ask for reduced
 * motion.
 */
function slideCards(container, before) {
  if (before.size === 0 || reducedMotion?.matches) return;
  const moves = [];
  container.querySelectorAll(".card.up[data-card]").forEach((node) => {
    const old = before.get(node.dataset.card) ?? [];
    if (old.some((entry) => entry.place === node.dataset.place)) return;
    const from = old[0] ?? (node.dataset.place === "w" ? before.get("stock")?.[0] : null);
    if (from) moves.push({ node, from: from.rect });
  });
  if (moves.length > MAX_SLIDING_CARDS) return;
  for (const { node, from } of moves) {
    const to = node.getBoundingClientRect();
    const dx = from.left - to.left;
    const dy = from.top - to.top;
    if (Math.abs(dx) + Math.abs(dy) < 2) continue;
    node.animate(
      [
        { transform: `translate(${dx}px, ${dy}px)`, zIndex: 20 },
        { transform: "none", zIndex: 20 },
      ],
      { duration: SLIDE_MS, easing: "ease-out" },
    );
  }
}

/** A short celebration on the table just won (CSS; still for reduced motion). */
function celebrate(container) {
  container.classList.add("celebrate");
  setTimeout(() => container.classList.remove("celebrate"), 4000);
}

/** A place as the log writes it ("5", "W", "F3") in words, as the written-out actions say it. */
function placeWords(token) {
  if (/^F[1-8]$/.test(token)) return t("foundation_n", { n: token[1] });
  return placeLabel(token);
}

/** An action as frames.js `describeStep` reads it, in words: "8♥ from column 5 to column 2". */
export function actionText(step) {
  if (step.kind === "undo") return t("undo_done");
  if (step.kind === "recycle") return t("recycle_done");
  if (step.kind === "stock") return t("stock_done", { card: cardLabel(step.card) });
  if (!step.card) return "";
  return t(step.count > 1 ? "run_moved" : "card_moved", {
    card: cardLabel(step.card),
    source: placeWords(step.from),
    target: placeWords(step.to),
  });
}

/** Tell screen readers what just happened (the page's polite live region, #announce). */
export function announce(text) {
  const region = document.getElementById("announce");
  if (region) region.textContent = text;
}

/** Show `text` in the page's status line. */
export function say(text, kind = "info") {
  const message = document.getElementById("message");
  if (!message) return;
  message.textContent = text;
  message.dataset.kind = kind;
}

/**
 * Ask `question` in the page's own dialog (`games/_confirm_dialog.html`:
 * translated, and seen by screen readers and screenshots alike, which
 * window.confirm is not); resolves to true when the player chose
 * `confirmLabel`, false for Cancel or Escape.
 */
export function ask(question, confirmLabel) {
  const dialog = document.getElementById("confirm-dialog");
  document.getElementById("confirm-text").textContent = question;
  document.getElementById("confirm-ok").textContent = confirmLabel;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}
