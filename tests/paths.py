"""Where the tests find the project and its conformance vectors (one place for each path)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The conformance vectors, copied unchanged from the independent implementation.
VECTORS = ROOT / "tests" / "vectors"
GAME_VECTORS = VECTORS / "games.jsonl"
DEAL_VECTORS = VECTORS / "deals.json"
