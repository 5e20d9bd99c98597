/**
 * What every page script shares: the page's config (rendered by the view as
 * JSON, strings already in the player's language) and the drawing of a table
 * dict (the shape of Game.table() in both engines) as cards.
 */

const configElement = document.getElementById("page-config");

/** The page's config: user, csrf token, urls, translated strings. */
export const config = configElement ? JSON.parse(configElement.textContent) : { strings: {} };

/** A translated string, with `{name}` placeholders filled from `params`. */
export function t(key, params = {}) {
  const text = config.strings?.[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) =>
    name in params ? String(params[name]) : whole,
  );
}

/**
 * A duration in milliseconds as a clock shows it (`4:07`, `1:02:09`); empty
 * for none. The same format as the pages' `clock` template filter.
 */
export function clock(milliseconds) {
  if (milliseconds === null || milliseconds === undefined) return "";
  const total = Math.floor(milliseconds / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours
    ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}`
    : `${minutes}:${seconds}`;
}

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

/** "TH" → "10♥": the rank as players read it and the suit symbol. */
export function cardLabel(text) {
  const rank = text[0] === "T" ? "10" : text[0];
  return rank + SUIT_SYMBOLS[text[1]];
}

function element(tag, className, attributes = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** A face-up card: rank and suit in the corner (visible when overlapped) and large in the middle. */
export function cardElement(text) {
  const suit = text[1];
  const node = element(
    "div",
    `card up ${RED_SUITS.has(suit) ? "red" : "black"} suit-${SUIT_NAMES[suit]}`,
    {
      "data-card": text,
      "aria-label": cardLabel(text),
      role: "img",
    },
  );
  const corner = element("span", "corner");
  corner.textContent = cardLabel(text);
  const pip = element("span", "pip");
  pip.textContent = SUIT_SYMBOLS[suit];
  node.append(corner, pip);
  return node;
}

function faceDownElement() {
  return element("div", "card down", { "aria-label": t("face_down"), role: "img" });
}

function slot(className, attributes, label) {
  const node = element("div", `slot ${className}`, attributes);
  if (label) {
    const mark = element("span", "slot-mark");
    mark.textContent = label;
    node.append(mark);
  }
  return node;
}

/**
 * Draw `table` into `container`: a top row (stock, waste, F1..F8) and the 9
 * columns. Every place carries data-place ("s", "w", "f0".."f7", "c0".."c8")
 * and every face-up column card its data-index in the column's face-up cards,
 * which is all the play page needs to turn gestures into actions.
 */
export function renderTable(container, table) {
  const top = element("div", "top-row");

  const stock = slot("stock", { "data-place": "s", "data-drop": "s", title: t("stock") });
  if (table.stock > 0) {
    const back = faceDownElement();
    const count = element("span", "count");
    count.textContent = String(table.stock);
    back.append(count);
    stock.append(back);
  } else {
    stock.classList.add("empty");
    stock.append(Object.assign(element("span", "slot-mark"), { textContent: "↻" }));
  }
  stock.setAttribute("role", "button");
  stock.setAttribute("aria-label", `${t("stock")}: ${table.stock}`);

  const waste = slot("waste", { "data-place": "w", title: t("waste") });
  if (table.waste_top) {
    const card = cardElement(table.waste_top);
    card.dataset.place = "w";
    waste.append(card);
    const count = element("span", "count");
    count.textContent = String(table.waste);
    waste.append(count);
  }
  top.append(stock, waste);

  const foundations = element("div", "foundations");
  table.foundations.forEach((foundation, index) => {
    const place = `f${index}`;
    const node = slot(
      `foundation suit-${SUIT_NAMES[foundation.suit]}`,
      {
        "data-place": place,
        "data-drop": place,
        title: `F${index + 1}`,
        "aria-label": `F${index + 1}: ${foundation.count}`,
      },
      SUIT_SYMBOLS[foundation.suit],
    );
    if (foundation.top) {
      const card = cardElement(foundation.top);
      card.dataset.place = place;
      node.append(card);
    }
    foundations.append(node);
  });
  top.append(foundations);

  const columns = element("div", "columns");
  table.columns.forEach((column, index) => {
    const place = `c${index}`;
    const node = element("div", "column", {
      "data-place": place,
      "data-drop": place,
      "aria-label": t("column_n", { n: index + 1 }),
    });
    if (column.down === 0 && column.up.length === 0) node.classList.add("empty");
    let offset = 0;
    for (let i = 0; i < column.down; i++) {
      const card = faceDownElement();
      card.style.setProperty("--y", String(offset));
      offset += 1;
      node.append(card);
    }
    column.up.forEach((text, i) => {
      const card = cardElement(text);
      card.dataset.place = place;
      card.dataset.index = String(i);
      card.style.setProperty("--y", String(offset));
      card.tabIndex = -1;
      offset += 2;
      node.append(card);
    });
    // Offsets count in half-strips: face-down cards overlap more than face-up ones.
    node.style.setProperty("--depth", String(offset));
    columns.append(node);
  });

  container.replaceChildren(top, columns);
  container.classList.toggle("won", Boolean(table.won));
}

/** Show `text` in the page's status line. */
export function say(text, kind = "info") {
  const message = document.getElementById("message");
  if (!message) return;
  message.textContent = text;
  message.dataset.kind = kind;
}
