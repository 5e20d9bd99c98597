/**
 * Pointer and key input on a table drawn by ui.js `renderTable`, for the pages
 * that play (the play page, a race): a tap, a double tap, a drag or a key
 * becomes the gesture gestures.js names, which the page carries out. The page
 * keeps its game and says what is allowed: `game()` is the game now,
 * `perform(gesture)` plays or refuses it, `play(token)` plays a key's action,
 * `say(text)` shows the keys' picked-up card, `hint()` answers the H key,
 * and `ignore()` is true while the page takes no input (a dialog open, a
 * race not running).
 */
import {
  doubleTapGesture,
  dropGesture,
  isDrag,
  keyGesture,
  tapGesture,
  tapSorter,
} from "./gestures.js";
import { setting } from "./settings.js";

export function tableInput({
  table,
  game,
  perform,
  play,
  say,
  hint = () => {},
  ignore = () => false,
}) {
  // ---------------------------------------------------------------- pointer gestures

  let press = null; // the pointer press in progress

  /**
   * One tap waits a moment for a second one: a double tap means "to the board".
   * With the "Double click" setting off a tap answers at once.
   */
  const onTap = tapSorter({
    doubleTap: () => setting("doubleClick"),
    onTap: (place, index) => perform(tapGesture(game(), place, index)),
    onDoubleTap: (place, index) => perform(doubleTapGesture(game(), place, index)),
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

  table.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || ignore() || game().won) return;
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
      if (target && !ignore()) perform(dropGesture(game(), current.place, current.index, target));
      return;
    }
    if (!ignore()) onTap(current.place, current.index);
  });

  window.addEventListener("pointercancel", () => {
    if (press?.ghost) endDrag(press);
    press = null;
  });

  function draggedNodes(current) {
    if (current.place[0] !== "c") return [current.node];
    const column = table.querySelector(`.column[data-place="${current.place}"]`);
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
    table.querySelectorAll(".drop-target").forEach((node) => node.classList.remove("drop-target"));
  }

  function dropTargetAt(x, y) {
    const hit = document.elementFromPoint(x, y);
    const drop = hit?.closest("[data-drop]");
    if (drop && table.contains(drop)) return drop.dataset.drop;
    return null;
  }

  function markDropTarget(x, y) {
    const target = dropTargetAt(x, y);
    table.querySelectorAll(".drop-target").forEach((node) => {
      if (node.dataset.drop !== target) node.classList.remove("drop-target");
    });
    if (target && target !== "s")
      table.querySelector(`[data-drop="${target}"]`)?.classList.add("drop-target");
  }

  // ---------------------------------------------------------------- keyboard

  let keySource = null;

  document.addEventListener("keydown", (event) => {
    if (ignore() || event.target.closest("input, select, textarea")) return;
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
      hint();
    } else if (key.does === "pick") {
      keySource = key.source;
      say(`${keySource} →`);
      markKeySource();
    } else if (key.does === "play") {
      if (key.source !== keySource) {
        keySource = key.source;
        markKeySource();
      }
      play(key.action);
    }
  });

  /** The drawn table's place of a key source: "W" → "w", "3" → "c2", "F3" → "f2". */
  function keyPlace(source) {
    if (source === "W") return "w";
    if (source[0] === "F") return `f${Number(source.slice(1)) - 1}`;
    return `c${Number(source) - 1}`;
  }

  /** Show which card the keys have picked up (the source of the next action). */
  function markKeySource() {
    table.querySelectorAll(".card.selected").forEach((node) => node.classList.remove("selected"));
    if (keySource === null || keySource === "F") return;
    const place = keyPlace(keySource);
    const cards = table.querySelectorAll(`.card.up[data-place="${place}"]`);
    cards[cards.length - 1]?.classList.add("selected");
  }
}
