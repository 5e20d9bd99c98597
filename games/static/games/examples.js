/**
 * The examples page: each example's table drawn as on the play page, and the
 * engine's refusal of its action in the player's words (the same catalogue
 * the play page shows refusals from).
 */
import { config, reasonText, renderTable } from "./ui.js";

(config.examples ?? []).forEach((example, index) => {
  const table = document.querySelector(`[data-example="${index}"]`);
  if (table) renderTable(table, example.table);
  const refusal = document.querySelector(`[data-refusal="${index}"]`);
  if (refusal) refusal.textContent = reasonText(example.code, example.params);
});
