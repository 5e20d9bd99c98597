/** On every page: the player's card settings, the language switch, and the service worker. */
import { adoptSettings, applySettings, bindSettings, loadSettings } from "./settings.js";
import { config } from "./ui.js";

/** Keep a changed setting with the signed-in player's account; offline it stays in the browser. */
function remember(changed) {
  fetch(config.settings_url, {
    method: "PATCH",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": config.csrf },
    body: JSON.stringify(changed),
  }).catch(() => {});
}

if (config.user) adoptSettings(config.settings);
applySettings(loadSettings(), document.documentElement);
const settingsForm = document.querySelector("[data-settings]");
if (settingsForm)
  bindSettings(settingsForm, document.documentElement, config.user ? remember : null);

// The language switch applies as soon as a language is chosen (its button is for pages without scripts).
const form = document.querySelector(".language-switch");
form?.querySelector("select").addEventListener("change", () => form.submit());

// Offline play once a page has been loaded (sw.js); a browser without service workers just has none.
navigator.serviceWorker?.register("/sw.js").catch(() => {});

const KEPT_FOR = "easyharp.kept-pages-for";

/**
 * The pages the service worker keeps show who was signed in. When that
 * changes (a log-out, another player on a shared device), the kept copies of
 * the other pages go, so that offline nobody is shown as someone else; this
 * page, just fetched, is kept as it is now.
 */
async function forgetPagesOfAnotherPlayer() {
  if (config.user === undefined) return; // a page without the site's config (an error page)
  const user = config.user ?? "";
  if (localStorage.getItem(KEPT_FOR) === user || !("caches" in window)) return;
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    for (const request of await cache.keys()) {
      const { pathname } = new URL(request.url);
      if (!pathname.startsWith("/static/") && pathname !== location.pathname)
        await cache.delete(request);
    }
  }
  localStorage.setItem(KEPT_FOR, user);
}

forgetPagesOfAnotherPlayer().catch(() => {});
