/**
 * The player's settings, as the original app has them, kept in this browser
 * (localStorage): double click (off: a tap answers at once, with no wait for
 * a second one), a four-colour deck, and the card style. They apply to every
 * page that draws cards, as classes on the root element. A signed-in
 * player's settings are kept with the account too (PATCH /api/auth/settings/),
 * and the page brings those into the browser (`adoptSettings`).
 */
const STORAGE_KEY = "easyharp.settings";

export const DEFAULTS = Object.freeze({
  doubleClick: true,
  fourColour: false,
  cardStyle: "classic",
});

const CARD_STYLES = new Set(["classic", "large"]);

/** The settings kept in `storage`, each one checked; anything unreadable is its default. */
export function loadSettings(storage = globalThis.localStorage) {
  let kept = {};
  try {
    kept = JSON.parse(storage?.getItem(STORAGE_KEY) ?? "{}") ?? {};
  } catch {
    kept = {};
  }
  return {
    doubleClick: typeof kept.doubleClick === "boolean" ? kept.doubleClick : DEFAULTS.doubleClick,
    fourColour: typeof kept.fourColour === "boolean" ? kept.fourColour : DEFAULTS.fourColour,
    cardStyle: CARD_STYLES.has(kept.cardStyle) ? kept.cardStyle : DEFAULTS.cardStyle,
  };
}

/** Keep `settings` in `storage` (private mode or a full quota: they last this page only). */
export function saveSettings(settings, storage = globalThis.localStorage) {
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify(settings));
  } catch {
    // The page still follows them until it is left.
  }
}

/** One setting as it stands now (read afresh, so a change on another tab counts too). */
export function setting(name) {
  return loadSettings()[name];
}

/** Show the cards as `settings` ask, through classes on `root`. */
export function applySettings(settings, root) {
  root.classList.toggle("four-colour", settings.fourColour);
  root.dataset.cardStyle = settings.cardStyle;
}

/** Take the settings kept with the account (those it has, and valid) into this browser's. */
export function adoptSettings(kept, storage = globalThis.localStorage) {
  if (!kept || typeof kept !== "object") return;
  const checked = loadSettings({ getItem: () => JSON.stringify(kept) });
  const adopted = loadSettings(storage);
  for (const name of Object.keys(DEFAULTS)) {
    if (name in kept && checked[name] === kept[name]) adopted[name] = kept[name];
  }
  saveSettings(adopted, storage);
}

/**
 * Bind a settings form: every input or select with `data-setting="name"`
 * shows the setting and changes it at once; `remember(settings)`, when given,
 * keeps the change with the account too.
 */
export function bindSettings(form, root, remember = null) {
  const fields = form.querySelectorAll("[data-setting]");
  const current = loadSettings();
  fields.forEach((field) => {
    const name = field.dataset.setting;
    if (field.type === "checkbox") field.checked = current[name];
    else field.value = current[name];
    field.addEventListener("change", () => {
      const settings = loadSettings();
      settings[name] = field.type === "checkbox" ? field.checked : field.value;
      saveSettings(settings);
      applySettings(loadSettings(), root);
      remember?.({ [name]: settings[name] });
    });
  });
}
