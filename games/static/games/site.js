/** On every page: the language switch applies as soon as a language is chosen. */
const form = document.querySelector(".language-switch");
if (form) {
  const select = form.querySelector("select");
  form.querySelector("button").hidden = true;
  select.addEventListener("change", () => form.submit());
}
