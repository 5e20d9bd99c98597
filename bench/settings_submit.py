"""Settings of bench/submit.py: the service's own, plus a bare submission endpoint.

Never used by the service itself. Rate limits are off (the benchmark sends far
more than a player may); everything else, database connections included, is as
docker-compose.yml runs it.
"""

from easyharp_site.settings import *  # noqa: F403
from easyharp_site.settings import REST_FRAMEWORK

ROOT_URLCONF = "bench.urls_submit"
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
