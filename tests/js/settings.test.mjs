// The player's settings: kept per browser, each one checked when read back.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import {
  DEFAULTS,
  adoptSettings,
  loadSettings,
  saveSettings,
} from "../../games/static/games/settings.js";

function memoryStorage(initial = {}) {
  const items = new Map(Object.entries(initial));
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => items.set(key, String(value)),
    items,
  };
}

describe("settings", () => {
  test("a browser that kept nothing gets the defaults: double click on, two colours, classic cards", () => {
    assert.deepEqual(loadSettings(memoryStorage()), DEFAULTS);
    assert.deepEqual(DEFAULTS, { doubleClick: true, fourColour: false, cardStyle: "classic" });
  });

  test("saved settings are read back", () => {
    const storage = memoryStorage();
    saveSettings({ doubleClick: false, fourColour: true, cardStyle: "large" }, storage);
    assert.deepEqual(loadSettings(storage), {
      doubleClick: false,
      fourColour: true,
      cardStyle: "large",
    });
  });

  test("an unreadable or wrong entry falls back to the defaults, field by field", () => {
    const broken = memoryStorage({ "easyharp.settings": "{not json" });
    assert.deepEqual(loadSettings(broken), DEFAULTS);
    const wrong = memoryStorage({
      "easyharp.settings": JSON.stringify({ doubleClick: "no", fourColour: true, cardStyle: "x" }),
    });
    assert.deepEqual(loadSettings(wrong), { ...DEFAULTS, fourColour: true });
  });

  test("a storage that refuses to keep anything does not break the page", () => {
    const full = {
      getItem: () => null,
      setItem: () => {
        throw new Error("QuotaExceededError");
      },
    };
    assert.doesNotThrow(() => saveSettings(DEFAULTS, full));
  });

  test("the account's settings replace the browser's, those it has and only valid ones", () => {
    const storage = memoryStorage();
    saveSettings({ doubleClick: false, fourColour: false, cardStyle: "large" }, storage);
    adoptSettings({ fourColour: true, cardStyle: "huge" }, storage);
    assert.deepEqual(loadSettings(storage), {
      doubleClick: false,
      fourColour: true,
      cardStyle: "large",
    });
    adoptSettings(null, storage);
    assert.equal(loadSettings(storage).fourColour, true);
  });
});
