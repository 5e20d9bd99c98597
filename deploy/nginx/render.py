"""Render the edge's nginx configuration from easyharp.conf.template and the environment.

Each `${NAME}` of the template is replaced by the variable NAME, which must be
set (the names written `$like_this` are nginx's own and are left alone, unlike
a bare envsubst, which blanks every variable it is not told to skip). A line
naming a list, `${EDGE_UPSTREAMS}` (addresses separated by spaces or commas),
is written once per item, so the edge balances over every server listed:

    EDGE_UPSTREAMS="web1:8000 web2:8000" ... python3 render.py TEMPLATE OUTPUT

The edge image runs it at each start (docker-compose.yml); the tests render
with `site_render` and check the result with `nginx -t`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

PLACEHOLDER = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")
# Variables holding several values, each given a line of its own.
LISTS = frozenset({"EDGE_UPSTREAMS"})
# A value may not end a directive or open a block of its own.
UNSAFE = re.compile(r"[;{}\n\r#\"'\\]")


class RenderError(ValueError):
    """The template cannot be rendered with these values; the message says why."""


def _checked(name: str, item: str) -> str:
    if UNSAFE.search(item):
        raise RenderError(f"{name} may not hold ; {{ }} # quotes or line breaks: {item!r}")
    return item


def _value(name: str, values: Mapping[str, str]) -> str:
    return _checked(name, values[name].strip())


def _items(name: str, values: Mapping[str, str]) -> list[str]:
    return [_checked(name, item) for item in values[name].replace(",", " ").split()]


def _filled(line: str, values: Mapping[str, str]) -> str:
    return PLACEHOLDER.sub(lambda match: _value(match[1], values), line)


def site_render(template: str, values: Mapping[str, str]) -> str:
    """`template` with each `${NAME}` replaced by `values[NAME]`, and each line that
    names a list written once per item; RenderError names every variable missing."""
    missing = sorted({n for n in PLACEHOLDER.findall(template) if not values.get(n, "").strip()})
    if missing:
        raise RenderError(f"not set: {', '.join(missing)}")
    rendered = []
    for line in template.splitlines(keepends=True):
        lists = sorted(set(PLACEHOLDER.findall(line)) & LISTS)
        if len(lists) > 1:
            raise RenderError(f"one list per line: {line.strip()!r}")
        if not lists:
            rendered.append(_filled(line, values))
            continue
        (name,) = lists
        rendered.extend(_filled(line, {**values, name: item}) for item in _items(name, values))
    return "".join(rendered)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: render.py TEMPLATE OUTPUT", file=sys.stderr)
        return 2
    template, output = Path(argv[1]), Path(argv[2])
    try:
        rendered = site_render(template.read_text(), os.environ)
    except RenderError as error:
        print(f"render.py: {template}: {error}", file=sys.stderr)
        return 1
    output.write_text(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
