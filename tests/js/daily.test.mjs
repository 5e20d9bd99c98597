// The pure side of the daily loop's pages: countdown text, moves against par,
// percentile, histogram bars.
import assert from "node:assert/strict";
import { test } from "node:test";

import { readFileSync } from "node:fs";

import {
  againstPar,
  clock,
  countdownText,
  gridRow,
  moveBars,
  percentile,
  standing,
} from "../../games/static/games/daily.js";

test("a countdown shows hours, minutes and seconds, never below zero", () => {
  assert.equal(countdownText(0), "0:00:00");
  assert.equal(countdownText(59_999), "0:00:59");
  assert.equal(countdownText(3_600_000 + 62_000), "1:01:02");
  assert.equal(countdownText(23 * 3_600_000 + 59 * 60_000 + 59_000), "23:59:59");
  assert.equal(countdownText(-5_000), "0:00:00");
});

test("moves against par are signed, and empty without a par", () => {
  assert.equal(againstPar(312, 308), "+4");
  assert.equal(againstPar(300, 308), "-8");
  assert.equal(againstPar(308, 308), "±0");
  assert.equal(againstPar(308, null), "");
});

test("the percentile is the share of players ranked below", () => {
  assert.equal(percentile(1, 1), 100);
  assert.equal(percentile(1, 2), 100);
  assert.equal(percentile(2, 2), 0);
  assert.equal(percentile(26, 101), 75);
  // A half is rounded up, as the server does (leaderboards.selectors._percentile).
  assert.equal(percentile(100, 201), 51);
  assert.equal(percentile(102, 201), 50);
});

test("histogram bars are labelled by moves over par and sized by the largest bucket", () => {
  const bars = moveBars(
    [
      { min: null, max: 0, games: 2 },
      { min: 1, max: 10, games: 4 },
      { min: 101, max: null, games: 0 },
    ],
    "par or better",
  );
  assert.deepEqual(bars, [
    { label: "par or better", count: 2, width: 50 },
    { label: "+1–10", count: 4, width: 100 },
    { label: "≥ +101", count: 0, width: 0 },
  ]);
  assert.deepEqual(
    moveBars([{ min: null, max: 0, games: 0 }], "≤").map((bar) => bar.width),
    [0],
  );
});

test("a game's time cuts its seconds, as the pages' clock filter does (clocks.json)", () => {
  const cases = JSON.parse(readFileSync(new URL("clocks.json", import.meta.url), "utf8"));
  for (const [milliseconds, shown] of cases) assert.equal(clock(milliseconds), shown);
});

test("a share's grid row reads as the server writes it (grids.json)", () => {
  const cases = JSON.parse(readFileSync(new URL("grids.json", import.meta.url), "utf8"));
  for (const { rows, kinds, words } of cases) {
    assert.deepEqual(
      rows.map((row) => gridRow(row)),
      kinds.map((squares, index) => ({ kinds: squares, label: words[index] })),
    );
  }
});

test("a place reads as the best, the last, alone, or better than a share", () => {
  const strings = {
    standing_alone: "Alone on the board",
    standing_best: "Best of {n}",
    standing_last: "Last of {n}",
    standing_better: "Better than {n}%",
  };
  assert.equal(standing(1, 1, strings), "Alone on the board");
  assert.equal(standing(1, 12, strings), "Best of 12");
  assert.equal(standing(12, 12, strings), "Last of 12");
  assert.equal(standing(4, 12, strings), "Better than 73%");
});
