"""``python -m games.rules``: see `games.rules.cli`."""

import sys

from .cli import main

sys.exit(main())
