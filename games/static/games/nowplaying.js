/**
 * The "Playing now" section of the home and friends pages, taken again from the
 * server (`/today/playing/`) every few seconds while the page is in view, and
 * at once when it comes back into view: a friend appears as they start their
 * ranked game and goes when they submit it. A poll rather than a socket: a
 * game's start is no event of the boards, and one indexed read per look costs
 * less than telling every follower of every player who starts.
 */
const section = document.getElementById("playing-now");
const seconds = Number(section?.dataset.pollSeconds) || 30;
let busy = false;

async function look() {
  if (busy || document.visibilityState !== "visible") return;
  busy = true;
  try {
    const response = await fetch("/today/playing/", { credentials: "same-origin" });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.getElementById("playing-now");
    const shown = document.getElementById("playing-now");
    // Replaced only when it changed: focus and a reader's place stay put otherwise.
    if (fresh && shown && fresh.innerHTML !== shown.innerHTML) shown.replaceWith(fresh);
  } catch {
    // The network is away: the next look tries again.
  } finally {
    busy = false;
  }
}

if (section) {
  setInterval(look, seconds * 1000);
  document.addEventListener("visibilitychange", look);
}
