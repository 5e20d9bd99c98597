/**
 * Copy buttons: a `button[data-copy="id"]` copies the value of the field with
 * that id to the clipboard and says so in its polite live region
 * (`[data-copy-state="id"]`, a `role="status"`). Without JavaScript the button
 * stays hidden and the read-only field is there to select and copy by hand;
 * where the clipboard is refused, the button selects the field's text instead.
 */
import { t } from "./ui.js";

function say(state, text) {
  // Emptied first, so that saying the same words again is announced again.
  state.textContent = "";
  state.textContent = text;
}

async function copy(field, state) {
  try {
    await navigator.clipboard.writeText(field.value);
    say(state, t("copied"));
  } catch {
    field.focus();
    field.select();
    say(state, t("copy_selected"));
  }
}

for (const button of document.querySelectorAll("button[data-copy]")) {
  const field = document.getElementById(button.dataset.copy);
  const state = document.querySelector(`[data-copy-state="${button.dataset.copy}"]`);
  if (!field || !state) continue;
  field.addEventListener("focus", () => field.select());
  button.addEventListener("click", () => copy(field, state));
  button.hidden = false;
}
