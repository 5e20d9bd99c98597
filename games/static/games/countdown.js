/**
 * Countdowns to the next deal: every `<time data-countdown datetime="…">` on
 * the page shows the time left, updated each second.
 */

import { countdownText } from "./daily.js";

let ticking = null;

/** Start (or refresh) the countdowns under `root`; idempotent. */
export function startCountdowns(root = document) {
  const update = () => {
    for (const element of root.querySelectorAll("time[data-countdown]")) {
      const until = Date.parse(element.getAttribute("datetime"));
      if (!Number.isNaN(until)) element.textContent = countdownText(until - Date.now());
    }
  };
  update();
  if (ticking === null) ticking = setInterval(update, 1000);
}

startCountdowns();
