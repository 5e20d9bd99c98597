"""Settings of bench/submit.py: the service's own, plus a bare submission endpoint.

Never used by the service itself. Rate limits are off (the benchmark sends far
more than a player may), and database connections are kept between requests,
as docker-compose.yml does.
"""

from easyharp_site.settings import *  # noqa: F403
from easyharp_site.settings import DATABASES, REST_FRAMEWORK

ROOT_URLCONF = "bench.urls_submit"
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
DATABASES["default"]["CONN_MAX_AGE"] = 600
