/** On every page: the player's card settings, the language switch, and the service worker. */
import { applySettings, bindSettings, loadSettings } from "./settings.js";

applySettings(loadSettings(), document.documentElement);
const settingsForm = document.querySelector("[data-settings]");
if (settingsForm) bindSettings(settingsForm, document.documentElement);

// The language switch applies as soon as a language is chosen.
const form = document.querySelector(".language-switch");
if (form) {
  const select = form.querySelector("select");
  form.querySelector("button").hidden = true;
  select.addEventListener("change", () => form.submit());
}

// Offline play once a page has been loaded (sw.js); a browser without service workers just has none.
navigator.serviceWorker?.register("/sw.js").catch(() => {});
