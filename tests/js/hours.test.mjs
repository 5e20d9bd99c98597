// The reminder's hour in the player's own time, on the account page.
import assert from "node:assert/strict";
import { test } from "node:test";

import { localTime } from "../../games/static/games/hours.js";

test("a UTC hour reads in the local clock, summer time or not", () => {
  const summer = new Date("2026-07-01T12:00:00Z");
  const winter = new Date("2026-12-01T12:00:00Z");
  const amsterdam = { locale: "nl", timeZone: "Europe/Amsterdam" };
  assert.equal(localTime(18, { day: summer, ...amsterdam }), "20:00");
  assert.equal(localTime(18, { day: winter, ...amsterdam }), "19:00");
  assert.equal(localTime(0, { day: winter, locale: "es", timeZone: "UTC" }), "00:00");
});

test("an hour can fall on the day before where the player is", () => {
  const day = new Date("2026-12-01T12:00:00Z");
  assert.equal(localTime(2, { day, locale: "en-GB", timeZone: "America/New_York" }), "21:00");
  assert.equal(localTime(5, { day, locale: "en-US", timeZone: "Asia/Kolkata" }), "10:30");
  assert.equal(localTime(20, { day, locale: "en", timeZone: "Asia/Tokyo" }), "05:00");
});
