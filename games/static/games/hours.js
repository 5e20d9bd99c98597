/**
 * The account page's reminder hour, also in the browser's own time: the hour
 * is chosen in UTC (the day's deal turns at midnight UTC), the player reads
 * their own clock.
 */

/**
 * The hour `utcHour` of the UTC day of `day`, as a clock in `timeZone` shows it:
 * "20:00", on 24 hours like the page's own "18:00 UTC".
 */
export function localTime(utcHour, { day = new Date(), locale, timeZone } = {}) {
  const moment = new Date(
    Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), utcHour),
  );
  const hours = { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone };
  return moment.toLocaleTimeString(locale, hours);
}

/** Say the chosen hour in local time under the choice (nothing when there is none). */
function showLocalTime(select, hint) {
  const chosen = select.value !== "";
  hint.hidden = !chosen;
  if (chosen) {
    const time = localTime(Number(select.value), { locale: document.documentElement.lang });
    hint.textContent = hint.dataset.localTime.replace("{time}", time);
  }
}

const select = globalThis.document?.querySelector("select[data-utc-hours]");
const hint = globalThis.document?.getElementById("reminder-local");
if (select && hint) {
  showLocalTime(select, hint);
  select.addEventListener("change", () => showLocalTime(select, hint));
}
