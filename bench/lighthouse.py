"""Lighthouse (the npm package pinned in package.json, on Debian's Chromium,
mobile settings: a throttled mid-range phone) on the home, play, board and
replay pages of a running server; prints each page's four scores.

    make run &    # or any server; the replay needs a stored game (--replay ID)
    .venv/bin/python bench/lighthouse.py --base http://127.0.0.1:8000 --replay 1
    .venv/bin/python bench/lighthouse.py --page archive=/archive/ --page card=/games/1/ \
        --cookie sessionid=...    # more pages, as a signed-in player sees them

The machine's load average is printed too: the performance score moves with
the load (Lighthouse simulates the throttling from what it measures).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
CHROMIUM = "/usr/bin/chromium"
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]


def scores(url: str, cookie: str | None = None) -> dict[str, int]:
    """The page's category scores (0..100) in one Lighthouse run with its mobile defaults
    (as the player whose session `cookie`, "sessionid=...", is given)."""
    headers = [f"--extra-headers={json.dumps({'Cookie': cookie})}"] if cookie else []
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        subprocess.run(
            [
                str(LIGHTHOUSE),
                url,
                "--quiet",
                "--output=json",
                f"--output-path={report}",
                f"--only-categories={','.join(CATEGORIES)}",
                "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
                *headers,
            ],
            check=True,
            env={**os.environ, "CHROME_PATH": CHROMIUM},
        )
        result = json.loads(report.read_text())
    return {name: round(result["categories"][name]["score"] * 100) for name in CATEGORIES}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--replay", type=int, default=1, help="a stored game's id")
    parser.add_argument(
        "--page", action="append", default=[], metavar="NAME=PATH",
        help="another page to score (repeat); e.g. --page archive=/archive/",
    )  # fmt: skip
    parser.add_argument(
        "--cookie", help='a signed-in player\'s session, "sessionid=...": every page as they see it'
    )
    args = parser.parse_args()
    pages = {
        "home": "/",
        "play": "/play/",
        "board": "/leaderboard/",
        "replay": f"/replays/{args.replay}/",
        **dict(page.split("=", 1) for page in args.page),
    }
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'page':10} " + " ".join(f"{name:>14}" for name in CATEGORIES))
    for name, path in pages.items():
        figures = scores(args.base + path, args.cookie)
        print(f"{name:10} " + " ".join(f"{figures[c]:>14}" for c in CATEGORIES), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
