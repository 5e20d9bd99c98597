"""The browser's engine and the server's agree on every conformance vector.

Node runs `games/static/games/engine.js` over tests/vectors/games.jsonl; each
result must equal the Python engine's: the same final `table()` dict, or the
same refused index, token, reason code and English reason.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from games import rules
from tests.paths import GAME_VECTORS, ROOT

VECTORS = GAME_VECTORS
ENGINE = ROOT / "games" / "static" / "games" / "engine.js"

NODE_SCRIPT = """
import { readFileSync } from "node:fs";
import { Game, IllegalActionError } from "%s";
const lines = readFileSync(process.argv[2], "utf8").split("\\n").filter((line) => line.trim());
const results = lines.map((line) => {
  const vector = JSON.parse(line);
  try {
    return { table: Game.replay(vector.deal, vector.log).table() };
  } catch (error) {
    if (!(error instanceof IllegalActionError)) throw error;
    return { index: error.index, token: error.token, code: error.code, reason: error.reason };
  }
});
process.stdout.write(JSON.stringify(results));
"""


def _python_result(vector: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"table": rules.replay(vector["deal"], vector["log"]).table()}
    except (rules.IllegalActionError, rules.InvalidActionError) as error:
        return {
            "index": error.index,
            "token": error.token,
            "code": error.code,
            "reason": error.reason,
        }


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_the_javascript_engine_gives_the_python_engines_results_on_every_vector(
    tmp_path: Path,
) -> None:
    script = tmp_path / "run.mjs"
    script.write_text(NODE_SCRIPT % ENGINE.as_uri())
    output = subprocess.run(
        ["node", str(script), str(VECTORS)], capture_output=True, text=True, check=True
    ).stdout
    javascript = json.loads(output)
    vectors = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]
    assert len(javascript) == len(vectors)
    for line, (vector, result) in enumerate(zip(vectors, javascript, strict=True), start=1):
        assert result == _python_result(vector), f"vector line {line}"
