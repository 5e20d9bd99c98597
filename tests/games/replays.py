"""Replays as a client reads them: every table rebuilt from `start` and `steps`,
and the fixture that checks the browser's decoding (`tests/js/frames.test.mjs`)
against the Python engine.

Refresh the fixture after a change to the replay's shape:

    UPDATE_REPLAY_FIXTURE=1 .venv/bin/pytest tests/games/test_replay_steps.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from games.models import Game as StoredGame
from games.replays import game_replay
from games.rules import RULES_VERSION, Deal
from games.rules import Game as Play

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors" / "games.jsonl"
FIXTURE = ROOT / "tests" / "js" / "replays.json"
# Vector games whose steps, between them, change every field a step can carry:
# stock taps and recycles, undos, cards to and back from the foundations (a
# foundation emptied again), moves that turn a face-down card up.
FIXTURE_DEALS = ("EH1-N-AAAIAHT", "EH1-N-AABTKAX")


def finished_vector_games() -> list[dict[str, Any]]:
    """The vector games whose whole log is legal (the others are refused part-way)."""
    games = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]
    return [game for game in games if "refused_at" not in game]


def replay_of(deal: str, log: str) -> dict[str, Any]:
    """The replay the API serves for a game of `deal` with `log` (read without a database)."""
    play = Play(deal)
    for token in log.split():
        play.play(token)
    # Stored as the service stores a submitted log: canonical tokens.
    game = StoredGame(
        deal_number=Deal.from_code(deal).number, log=" ".join(play.log), rules_version=RULES_VERSION
    )
    return game_replay(game=game)


def engine_tables(deal: str, log: str) -> list[dict[str, Any]]:
    """`Game.table()` at the deal and after every action of `log`."""
    play = Play(deal)
    tables = [play.table()]
    for token in log.split():
        play.play(token)
        tables.append(play.table())
    return tables


def replay_tables(replay: dict[str, Any]) -> list[dict[str, Any]]:
    """Every table of `replay`, rebuilt from its start and its steps as a client does."""
    table = replay["start"]
    tables = [table]
    for step in replay["steps"]:
        table = {
            **table,
            "columns": [dict(column) for column in table["columns"]],
            "foundations": [dict(foundation) for foundation in table["foundations"]],
        }
        for key, value in step.items():
            if key == "columns":
                for index, down, kept, *cards in value:
                    column = table["columns"][index]
                    column["down"], column["up"] = down, column["up"][:kept] + cards
            elif key == "foundations":
                for slot, count, top in value:
                    table["foundations"][slot].update(count=count, top=top)
            elif key != "token":
                table[key] = value
        tables.append(table)
    return tables


def js_fixture() -> str:
    """The fixture's text: for a few vector games, the replay and the engine's tables."""
    games = {game["deal"]: game for game in finished_vector_games()}
    lines = []
    for deal in FIXTURE_DEALS:
        log = games[deal]["log"]
        entry = {"deal": deal, "replay": replay_of(deal, log), "tables": engine_tables(deal, log)}
        lines.append(json.dumps(entry, separators=(",", ":")))
    return "[\n" + ",\n".join(lines) + "\n]\n"
