"""The settings of a test's server replica (tests/replicas.py): production's, with a
channel-layer prefix of its own (`REPLICA_CHANNEL_PREFIX`).

Redis pub/sub is shared by all its databases: without it, the replicas of two
test sessions on one Redis (two pytest-xdist workers, or two checkouts) would
hear each other's board and watcher groups.
"""

import os

from easyharp_site.settings import *  # noqa: F403
from easyharp_site.settings import CHANNEL_LAYERS

if "CONFIG" in CHANNEL_LAYERS["default"]:
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = os.environ["REPLICA_CHANNEL_PREFIX"]
