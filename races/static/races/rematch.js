/**
 * A finished race's page: its players' "Rematch" turns into "Join the rematch"
 * (and an onlooker's link to it appears) as soon as one of them makes it. The
 * race's socket says so (`rematch` in the race's state); the page listens
 * until it hears it, and connects again if the network goes.
 */
import { RECONNECT_FIRST_MS, nextDelay } from "../games/stream.js";
import { config } from "../games/ui.js";

const section = document.getElementById("race-rematch");
let delay = RECONNECT_FIRST_MS;

/** Show the rematch `rematch` (its code): a player joins it, an onlooker follows its link. */
function showRematch(rematch) {
  if (!section || !rematch || section.dataset.rematch === rematch) return;
  section.dataset.rematch = rematch;
  const make = document.getElementById("race-rematch-make");
  const join = document.getElementById("race-rematch-join");
  if (make && join) {
    make.hidden = true;
    join.hidden = false;
  }
  const link = document.getElementById("race-rematch-link");
  if (link) {
    link.href = `/races/${rematch}/`;
    link.hidden = false;
  }
}

function connect() {
  if (!section || section.dataset.rematch || typeof WebSocket === "undefined") return;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}${config.race_socket}`);
  socket.addEventListener("message", (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    delay = RECONNECT_FIRST_MS;
    showRematch(message.race?.rematch);
    if (section.dataset.rematch) socket.close();
  });
  socket.addEventListener("close", () => {
    if (section.dataset.rematch) return;
    delay = nextDelay(delay);
    setTimeout(connect, delay);
  });
}

connect();
