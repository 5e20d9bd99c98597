"""Settings for Easy Harp Daily.

One settings file, read from the environment (every variable is listed with its
default in `.env.example`). With nothing set it runs on SQLite with the
in-memory channel layer, so a fresh checkout needs no other server.
"""

from __future__ import annotations

import datetime
import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from easyharp_site.dates import day_from_text
from easyharp_site.rates import rate_from_text

# The site's own files (templates, static sources, translations) are in its
# package, in a checkout as in an installed wheel.
SITE_DIR = Path(__file__).resolve().parent
# Where a run's files go unless set (the SQLite database, the collected static
# files): the checkout, or, installed from the wheel, the folder it runs in.
BASE_DIR = SITE_DIR.parent if (SITE_DIR.parent / "manage.py").is_file() else Path.cwd()


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), not {value!r}")


def env_int(name: str, default: int, *, positive: bool = False) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from None
    if positive and number <= 0:
        raise ImproperlyConfigured(f"{name} must be above 0, not {value!r}")
    return number


def env_float(name: str, default: float, *, positive: bool = False) -> float:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}") from None
    if positive and not number > 0:  # also refuses nan
        raise ImproperlyConfigured(f"{name} must be above 0, not {value!r}")
    return number


def env_date(name: str, default: str) -> datetime.date:
    value = os.environ.get(name) or default
    try:
        return day_from_text(value)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name} must be a real date written YYYY-MM-DD, not {value!r}"
        ) from None


def env_rate(name: str, default: str) -> str:
    """A rate limit such as `30/min`, checked here so that a typo stops the start-up."""
    value = os.environ.get(name) or default
    try:
        rate_from_text(value)
    except ValueError as error:
        raise ImproperlyConfigured(f"{name}: {error}") from None
    return value


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def env_site_url(name: str, default: str) -> str:
    """An origin, `http(s)://host[:port]` and nothing more; a typo stops the start-up."""
    value = (os.environ.get(name) or default).removesuffix("/")
    parts = urlsplit(value)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if (
        parts.scheme not in {"http", "https"}
        or not parts.hostname
        or not port_ok
        or parts.username is not None
        or f"{parts.scheme}://{parts.netloc}" != value
    ):
        raise ImproperlyConfigured(
            f"{name} must be an origin such as https://example.com (no path), not {value!r}"
        )
    return value


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-for-debug"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
# The site's public address: every absolute link (share cards, og tags, mails,
# API links) is built from it, never from a request's Host header, which any
# client may vary (easyharp_site/site.py). The default serves `make run`.
SITE_URL = env_site_url("SITE_URL", "http://127.0.0.1:8000")
# Where the ASGI server listens (the systemd unit passes them to uvicorn); the
# health check (deploy/healthcheck.py) asks it there.
WEB_HOST = env_str("WEB_HOST", "127.0.0.1")
WEB_PORT = env_int("WEB_PORT", 8000, positive=True)

# Transport and cookie security, on by default whenever DEBUG is off
# (`manage.py check --deploy` is clean with production settings). Behind a
# TLS-terminating proxy, set SECURE_PROXY_SSL_HEADER=true so Django trusts the
# proxy's X-Forwarded-Proto; set SECURE_SSL_REDIRECT=false only where the proxy
# already redirects (or for plain-HTTP local runs).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# The health check is probed over plain HTTP from inside the deployment.
SECURE_REDIRECT_EXEMPT = [r"^healthz/?$"]
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy on every answer (django-csp): scripts, styles, fonts
# and fetches from this origin only, no inline script or style (the pages have
# none; the API docs page loads its script and style as files), images from
# here or data: URLs (Swagger UI's icons). 'self' covers the live board's
# ws:/wss: socket to the same host (CSP Level 3).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# Largest request body (bytes) read into memory; a 20,000-action log is about
# 80 KB. Enforced for every body, whatever its content type, by
# easyharp_site.middleware (under ASGI before Django buffers it; DRF's parsers
# read the stream directly). Also cap it at the reverse proxy.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("REQUEST_MAX_BODY_BYTES", 1_048_576)
# Whatever Django buffers stays in memory: no body within the cap is spooled to disk.
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE

# The deal of the day is derived from the date with this salt, so nobody can
# compute tomorrow's deal from the code.
DAILY_DEAL_SALT = env_str("DAILY_DEAL_SALT", "easyharp-development-salt")
if not DEBUG and DAILY_DEAL_SALT == "easyharp-development-salt":
    raise ImproperlyConfigured("DAILY_DEAL_SALT must be set to a secret value when DEBUG is off")
# Only deals the solver proves winnable become deals of the day (when it is installed).
DAILY_DEAL_REQUIRE_WIN = env_bool("DAILY_DEAL_REQUIRE_WIN", True)
# The solver's work is counted, not timed (games/solver/work.py), so a day's par
# is the same on any machine. Positions the solver may expand deciding a candidate
# deal; one it neither wins nor proves lost within them is passed over.
DAILY_DEAL_SOLVER_NODES = env_int("DAILY_DEAL_SOLVER_NODES", 100_000, positive=True)
# Only a safety cap on the time per candidate: a candidate whose work it cuts short
# is passed over, so a stored par is always the full work's.
DAILY_DEAL_SOLVER_SECONDS = env_float("DAILY_DEAL_SOLVER_SECONDS", 300.0, positive=True)
# The first day served; earlier dates are not served (and never stored).
DAILY_DEAL_FIRST_DATE = env_date("DAILY_DEAL_FIRST_DATE", "2026-01-01")
# The days kept prepared ahead by the `prepare deals` job, today included
# (`make run` keeps 2: the solver takes seconds a day).
DAILY_DEAL_DAYS_AHEAD = env_int("DAILY_DEAL_DAYS_AHEAD", 30, positive=True)
# Longest move log a submission may carry.
GAME_MAX_ACTIONS = env_int("GAME_MAX_ACTIONS", 20_000)
# What one player may store in a UTC day: practice games past either ceiling are
# refused (429) until the next day; the ranked game and a race's games never are.
# The actions count every game of the day, the new one's included.
PLAYER_GAMES_PER_DAY = env_int("PLAYER_GAMES_PER_DAY", 200, positive=True)
PLAYER_ACTIONS_PER_DAY = env_int("PLAYER_ACTIONS_PER_DAY", 200_000, positive=True)
# Positions the solver may expand deciding a hint (POST /api/hint/); the rest of a
# hint's work is fixed, so the same table always gets the same hint.
HINT_SOLVER_NODES = env_int("HINT_SOLVER_NODES", 20_000, positive=True)
# Only a safety cap on the time per hint: a hint it cuts short says so ("cut_short").
HINT_SOLVER_SECONDS = env_float("HINT_SOLVER_SECONDS", 10.0, positive=True)
# The heavy work of requests (hints, replays) runs in a pool of processes of
# each server process, at a lower CPU priority (games/pool.py), shared in turn
# between client addresses: processes, jobs that may wait for them in all and
# jobs one address may have running or waiting (one more is a 503 `busy`; a
# player has one), the Retry-After of that refusal in seconds, and the
# processes' niceness (0 to 19; at 10 a server process busy at the same time
# gets about 90% of a shared core).
HEAVY_WORK_PROCESSES = env_int("HEAVY_WORK_PROCESSES", 1, positive=True)
HEAVY_WORK_NICENESS = env_int("HEAVY_WORK_NICENESS", 10)
if not 0 <= HEAVY_WORK_NICENESS <= 19:
    raise ImproperlyConfigured("HEAVY_WORK_NICENESS must be 0 to 19")
HEAVY_WORK_QUEUE = env_int("HEAVY_WORK_QUEUE", 8)
HEAVY_WORK_PER_ADDRESS = env_int("HEAVY_WORK_PER_ADDRESS", 2, positive=True)
HEAVY_WORK_RETRY_AFTER = env_int("HEAVY_WORK_RETRY_AFTER", 10, positive=True)
# The longest a request waits for its heavy work (then a 503 `busy`).
HEAVY_WORK_TIMEOUT = env_float("HEAVY_WORK_TIMEOUT", 120.0, positive=True)
# A fair share of each server process per client address on the heavy routes
# (easyharp_site.fairness): requests of one address running at once, how many
# more may wait their turn, and for how many seconds, before a 429
# `too_many_at_once`.
REQUEST_CONCURRENCY_PER_ADDRESS = env_int("REQUEST_CONCURRENCY_PER_ADDRESS", 2, positive=True)
REQUEST_QUEUE_PER_ADDRESS = env_int("REQUEST_QUEUE_PER_ADDRESS", 64)
REQUEST_QUEUE_SECONDS = env_float("REQUEST_QUEUE_SECONDS", 2.0, positive=True)
# Seconds a built replay is kept in the cache (a stored game's log never changes).
REPLAY_CACHE_SECONDS = env_int("REPLAY_CACHE_SECONDS", 7 * 24 * 3600, positive=True)
# How much later than the server measured a ranked game its last per-action
# time may be (milliseconds): the client's clock and the network's delay.
ATTEMPT_TIMES_ALLOWANCE_MS = env_int("ATTEMPT_TIMES_ALLOWANCE_MS", 2_000)
# The fewest milliseconds per action a person needs over a whole ranked game: a
# faster game is held off the boards until a moderator looks (docs/FAIR_PLAY.md).
REVIEW_MIN_MS_PER_ACTION = env_int("REVIEW_MIN_MS_PER_ACTION", 150)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "csp",
    # The job queue and its schedules, kept in the database (easyharp_site/jobs.py).
    "django_q",
    "easyharp_site.accounts",
    "games",
    "leaderboards",
    "leagues",
    "races",
    "ranking",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "easyharp_site.middleware.RequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # "Sign out everywhere" ends the other sessions of a player (accounts/sessions.py).
    "easyharp_site.accounts.middleware.SessionGenerationMiddleware",
    # Remembers, in a signed cookie, the players who signed in on a browser.
    "easyharp_site.devices.KnownDeviceMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

ROOT_URLCONF = "easyharp_site.urls"
ASGI_APPLICATION = "easyharp_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SITE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        # An empty DATABASE_URL (as .env.example has it) means the default.
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
        conn_health_checks=True,
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default has two processes writing (the server and the job
    # worker): a write waits for the other's lock instead of failing at once,
    # and readers never block the writer (write-ahead log).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # The copy check's index covers its lookup on PostgreSQL (INCLUDE); SQLite
    # builds it on its key alone, which serves the embedded default as well.
    SILENCED_SYSTEM_CHECKS = ["models.W040"]

# A bounded connection pool per server process (PostgreSQL only; 0 turns it
# off). Under ASGI each in-flight request runs its sync code in a thread of its
# own, so without a pool the connection count follows the number of concurrent
# requests until PostgreSQL refuses clients; with one, a burst waits up to
# DATABASE_POOL_TIMEOUT seconds for a connection. Needs DATABASE_CONN_MAX_AGE=0.
DATABASE_POOL_MAX_SIZE = env_int("DATABASE_POOL_MAX_SIZE", 0)
# Seconds to connect to PostgreSQL: a database that is away fails a socket or a
# request (4503, 503) within this, instead of the operating system's minutes.
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 3, positive=True)
    )
# With conn_health_checks on, Django has the pool check each connection before
# handing it out, so dead ones left by a database restart are replaced.
if DATABASE_POOL_MAX_SIZE > 0 and DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_MAX_SIZE,
        "timeout": env_float("DATABASE_POOL_TIMEOUT", 10.0),
    }

# The event loop's own PostgreSQL connections, for the sockets' streamed writes
# (easyharp_site.loop_pool): a pool per server process's loop, at most this many
# connections, a wait of this long for one, and timeouts to connect and per statement.
LOOP_POOL_MAX_SIZE = env_int("LOOP_POOL_MAX_SIZE", 2)
LOOP_POOL_TIMEOUT = env_float("LOOP_POOL_TIMEOUT", 5.0)
LOOP_POOL_CONNECT_TIMEOUT = env_int("LOOP_POOL_CONNECT_TIMEOUT", 5)
LOOP_POOL_STATEMENT_TIMEOUT_MS = env_int("LOOP_POOL_STATEMENT_TIMEOUT_MS", 5_000)

# Redis holds two kinds of data: what must stay (the channel layer, the rate
# limits' counters and the counts every process shares: the default cache) at
# REDIS_URL, and what may be evicted and is made again on demand (built
# replays, drawn share pictures: the `evictable` cache; the board mirror) at
# CACHE_REDIS_URL. Run apart (docker-compose.yml), the second has a memory cap
# with allkeys-lru and the first noeviction, so a full cache never drops a limit.
REDIS_URL = env_str("REDIS_URL", "")
CACHE_REDIS_URL = env_str("CACHE_REDIS_URL", "") or REDIS_URL
if CACHE_REDIS_URL and not REDIS_URL:
    raise ImproperlyConfigured("CACHE_REDIS_URL needs REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Pub/sub: a board change is one PUBLISH, pushed to every server
            # process at once, and a stopped process leaves nothing behind. The
            # queue-based RedisChannelLayer needs four round trips per received
            # message, and fell behind on a busy machine (docs/PERFORMANCE.md). Pub/sub may drop a
            # message; the live boards refresh periodically to cover that.
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
    CACHES = {
        "default": {
            "BACKEND": "easyharp_site.compat.SharedPoolRedisCache",
            "LOCATION": REDIS_URL,
        },
        "evictable": {
            "BACKEND": "easyharp_site.compat.SharedPoolRedisCache",
            "LOCATION": CACHE_REDIS_URL,
        },
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "evictable": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "evictable",
        },
    }
# Friends boards read the day's board entries from a mirror in Redis, one
# request for up to 1,001 players (leaderboards/mirror.py); off, or with Redis
# down, they read the table.
BOARD_MIRROR = env_bool("BOARD_MIRROR", bool(CACHE_REDIS_URL))
if BOARD_MIRROR and not CACHE_REDIS_URL:
    raise ImproperlyConfigured("BOARD_MIRROR needs REDIS_URL")
# One subscriber per server process hears board changes on the default layer
# and hands each update to that process's sockets directly (leaderboards/live.py):
# a board change costs one message per server process, not one per socket.

# Live boards: at most this many updates a second per board and socket (bursts
# are coalesced; the last update always carries the latest board).
LIVE_BOARD_MAX_UPDATES_PER_SECOND = env_float("LIVE_BOARD_MAX_UPDATES_PER_SECOND", 4.0)
if LIVE_BOARD_MAX_UPDATES_PER_SECOND <= 0:
    raise ImproperlyConfigured("LIVE_BOARD_MAX_UPDATES_PER_SECOND must be above 0")
# Seconds between forced re-reads of every watched board, a safety net for a
# change announcement lost on the way (Redis down, pub/sub drop).
LIVE_BOARD_REFRESH_SECONDS = env_float("LIVE_BOARD_REFRESH_SECONDS", 30.0)
# Longest wait (seconds) of a submission on the channel layer to announce a change.
LIVE_BOARD_SEND_TIMEOUT = env_float("LIVE_BOARD_SEND_TIMEOUT", 1.0)
# Largest message (bytes) a live-board client may send; larger ones get an error.
LIVE_CLIENT_MESSAGE_MAX_BYTES = env_int("LIVE_CLIENT_MESSAGE_MAX_BYTES", 1024)

# A race's players hear its state (races/live.py) at most this many times a
# second from each server process while they play (the last change always
# reaches them); joins, leaves, the start and the end are sent at once.
RACE_UPDATES_PER_SECOND = env_float("RACE_UPDATES_PER_SECOND", 4.0)
if RACE_UPDATES_PER_SECOND <= 0:
    raise ImproperlyConfigured("RACE_UPDATES_PER_SECOND must be above 0")

# The ranked attempt's socket (games/consumers.py): its largest client message,
# and the messages a socket may send, sustained and at once (enough to replay
# the actions a page queued while it was offline); past them it is closed.
ATTEMPT_STREAM_MESSAGE_MAX_BYTES = env_int("ATTEMPT_STREAM_MESSAGE_MAX_BYTES", 256)
ATTEMPT_STREAM_ACTIONS_PER_SECOND = env_float("ATTEMPT_STREAM_ACTIONS_PER_SECOND", 10.0)
ATTEMPT_STREAM_BURST = env_int("ATTEMPT_STREAM_BURST", 1_000)
if ATTEMPT_STREAM_ACTIONS_PER_SECOND <= 0 or ATTEMPT_STREAM_BURST < 1:
    raise ImproperlyConfigured("ATTEMPT_STREAM_ACTIONS_PER_SECOND and _BURST must be above 0")
# The sockets that may watch one attempt, or one race, over every server process
# (each costs a send of every change); past it a new watcher is refused (4429).
# Each address's share of a server process's sockets (easyharp_site.sockets.SocketGuard):
# new sockets a second sustained and at once, and sockets open at once; past
# them a socket is closed with 4429 before it reads anything.
SOCKET_CONNECTS_PER_SECOND = env_float("SOCKET_CONNECTS_PER_SECOND", 10.0, positive=True)
SOCKET_CONNECT_BURST = env_int("SOCKET_CONNECT_BURST", 60, positive=True)
SOCKETS_PER_ADDRESS = env_int("SOCKETS_PER_ADDRESS", 100, positive=True)

LIVE_WATCHERS_MAX = env_int("LIVE_WATCHERS_MAX", 1_000)
if LIVE_WATCHERS_MAX < 1:
    raise ImproperlyConfigured("LIVE_WATCHERS_MAX must be above 0")
# How often the home and friends pages ask who of the player's friends and leagues
# is playing their ranked game now (one indexed read each time).
PLAYING_NOW_POLL_SECONDS = env_int("PLAYING_NOW_POLL_SECONDS", 30, positive=True)

# Argon2id with this service's parameters first (easyharp_site/accounts/hashers.py,
# docs/RELIABILITY.md); PBKDF2 after it, so that passwords hashed
# before still log in, and are rehashed with Argon2 at that log-in.
PASSWORD_HASHERS = [
    "easyharp_site.accounts.hashers.ServiceArgon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
]

# Django's checks, in the site's words (Django's Spanish says "usted"; the site, "tú").
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "easyharp_site.accounts.validators.UserAttributeSimilarityValidator"},
    {"NAME": "easyharp_site.accounts.validators.MinimumLengthValidator"},
    {"NAME": "easyharp_site.accounts.validators.CommonPasswordValidator"},
    {"NAME": "easyharp_site.accounts.validators.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# Mail (password reset links, e-mail address checks). With no EMAIL_HOST the
# mail is written to the console (the embedded default); with one, it goes out
# over SMTP. Mail is stored with the request's transaction and sent by the job
# worker, never by the request that asked for it (easyharp_site/accounts/mail.py).
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", bool(EMAIL_HOST))
# Seconds an SMTP connection may wait on the server before the mail counts as failed.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 20)
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Easy Harp Daily <noreply@localhost>")
# The most mails waiting to be sent before a request that wants to send one is
# told to try again later.
EMAIL_QUEUE_MAX = env_int("EMAIL_QUEUE_MAX", 200)
# Seconds a password reset link works (once: setting the password uses it up).
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3600)
# Seconds a link that confirms an e-mail address works (once).
EMAIL_VERIFY_TIMEOUT = env_int("EMAIL_VERIFY_TIMEOUT", 3 * 24 * 3600)
# Days the username of a deleted account stays reserved; then anyone may take it.
ACCOUNT_USERNAME_RESERVED_DAYS = env_int("ACCOUNT_USERNAME_RESERVED_DAYS", 90)

# The jobs (preparing deals, closing days, standings, the board mirror, mail)
# run in django-q2's worker, `manage.py qcluster` (compose's `worker`, started
# beside the server by `make run`). Its queue is a table of the database (the
# ORM broker): a job queued survives any restart.
# A job runs at most TASK_TIMEOUT_SECONDS unless it names its own timeout (a
# mail: its claim, 4 x EMAIL_TIMEOUT; prepare deals: 300 s). A job taken by a
# worker that died, or that failed, is taken again once its own timeout and
# TASK_RETRY_SECONDS have passed since it was taken (easyharp_site/job_broker.py):
# never while it may still be running, and within minutes, not half an hour.
# A worker told to stop finishes its jobs first, so compose's stop_grace_period
# is above the longest timeout.
TASK_TIMEOUT_SECONDS = env_int("TASK_TIMEOUT_SECONDS", 120, positive=True)
TASK_RETRY_SECONDS = env_int("TASK_RETRY_SECONDS", 30, positive=True)
# The worker touches this file each time it looks at the queue (every
# TASK_POLL_SECONDS when idle); its health check (deploy/worker_healthcheck.py)
# fails once the file is older than TASK_HEARTBEAT_STALE_SECONDS.
TASK_HEARTBEAT_FILE = Path(
    env_str("TASK_HEARTBEAT_FILE", "") or Path(tempfile.gettempdir()) / "easyharp-worker.heartbeat"
)
TASK_HEARTBEAT_STALE_SECONDS = env_int("TASK_HEARTBEAT_STALE_SECONDS", 60, positive=True)
Q_CLUSTER = {
    "name": "easyharp",
    "orm": "default",
    # The ORM broker, locking each job for its own timeout and TASK_RETRY_SECONDS,
    # and touching the heartbeat.
    "broker_class": "easyharp_site.job_broker.JobBroker",
    "workers": env_int("TASK_WORKERS", 2, positive=True),
    "timeout": TASK_TIMEOUT_SECONDS,
    # The lock of a job of the default timeout (django-q2 checks it against the timeout).
    "retry": TASK_TIMEOUT_SECONDS + TASK_RETRY_SECONDS,
    # A failed job is tried again (once its lock lapses), three times in all.
    "max_attempts": env_int("TASK_MAX_ATTEMPTS", 3, positive=True),
    "ack_failures": False,
    # Seconds between looks at an empty queue: the delay of a new mail.
    "poll": env_float("TASK_POLL_SECONDS", 0.5, positive=True),
    # The last 100 successful runs of each job (admin, /healthz/?details=1).
    "save_limit": 100,
    "save_limit_per": "func",
    # A worker that was away runs a missed periodic job once, not once per miss.
    "catch_up": False,
    "label": "Jobs",
    # Jobs run where they are queued, at once (the tests; TASKS_RUN_AT_ONCE).
    "sync": env_bool("TASKS_RUN_AT_ONCE", False),
}

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("es", "Español"), ("nl", "Nederlands")]
LOCALE_PATHS = [SITE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# docker-compose.yml names the release in it (/static/RELEASE/), so the edge can
# let browsers keep each file for a year: a new release is a new URL.
STATIC_URL = env_str("STATIC_URL", "") or "static/"
# Where collectstatic gathers the static files (the image serves them from there).
STATIC_ROOT = Path(env_str("STATIC_ROOT", "") or BASE_DIR / "staticfiles")
# collectstatic also writes a gzip copy of each text file, which WhiteNoise
# serves to the browsers that accept it. File names stay as they are: the
# pages' ES modules import each other by name, and the service worker keeps
# them by name.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# The site-wide pieces' own files (the API docs page's style).
STATICFILES_DIRS = [SITE_DIR / "static"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON only in production: DRF's browsable API (HTML forms for every
    # endpoint, inline script) is a debugging aid.
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        *(["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    ],
    "EXCEPTION_HANDLER": "easyharp_site.errors.api_exception_handler",
    # Deeply nested JSON is a 400, not a RecursionError (easyharp_site/parsers.py).
    # No multipart: the API takes no uploads (a multipart body is a 415).
    "DEFAULT_PARSER_CLASSES": [
        "easyharp_site.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
    ],
    # Views opt in with `throttle_scope`; counters live in the shared cache,
    # and in each process's memory while it is away (easyharp_site/throttling.py).
    "DEFAULT_THROTTLE_CLASSES": ["easyharp_site.throttling.ScopedThrottle"],
    # Scoped limits, per client address (sign-up, log-in) or per player, and
    # for log-in guesses per target username; rates from the environment.
    "DEFAULT_THROTTLE_RATES": {
        "auth": env_rate("THROTTLE_AUTH", "30/min"),
        # Guesses at one player's password from one address...
        "auth_pair": env_rate("THROTTLE_AUTH_PAIR", "20/hour"),
        # ...from all addresses but the player's known devices (a new browser
        # of the player waits while a player is under attack)...
        "auth_username": env_rate("THROTTLE_AUTH_USERNAME", "60/hour"),
        # ...and from one browser the player signed in on before.
        "auth_device": env_rate("THROTTLE_AUTH_DEVICE", "20/hour"),
        "submit": env_rate("THROTTLE_SUBMIT", "120/min"),
        "signup": env_rate("THROTTLE_SIGNUP", "20/hour"),
        # Replays of long games are the costliest public read (20,000 frames).
        "replay": env_rate("THROTTLE_REPLAY", "60/min"),
        # A hint may cost seconds of solver time.
        "hint": env_rate("THROTTLE_HINT", "30/min"),
        # Share pictures drawn (a cached picture is served without counting).
        "card": env_rate("THROTTLE_CARD", "30/min"),
        # The same three per client address too, whoever is signed in: what the
        # players behind one address (a school, an office) share.
        "replay_address": env_rate("THROTTLE_REPLAY_ADDRESS", "240/min"),
        "hint_address": env_rate("THROTTLE_HINT_ADDRESS", "60/min"),
        "card_address": env_rate("THROTTLE_CARD_ADDRESS", "60/min"),
        # Password reset requests per client address, and per e-mail address
        # asked for (counted alike for known and unknown addresses, so the
        # answer never tells which is which; it bounds the mails of an account).
        "reset": env_rate("THROTTLE_RESET", "10/hour"),
        "reset_email": env_rate("THROTTLE_RESET_EMAIL", "3/hour"),
        # Links sent to confirm an e-mail address, per player.
        "email": env_rate("THROTTLE_EMAIL", "10/hour"),
        # Joining a league by invite code, per client address and per player.
        "join": env_rate("THROTTLE_JOIN", "30/hour"),
        # Races created, per player (the API and the races page).
        "race": env_rate("THROTTLE_RACE", "20/hour"),
        # Searches for players by name, per client address.
        "search": env_rate("THROTTLE_SEARCH", "30/min"),
    },
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Easy Harp Daily API",
    "DESCRIPTION": "Daily two-deck solitaire challenge: deals, validated games, replays "
    "and leaderboards.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "HintResultEnum": "games.api.HINT_RESULTS",
        "RaceStatusEnum": "races.api.RACE_STATUSES",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        # Every 429 and 503 documents its Retry-After header.
        "easyharp_site.errors.schema_retry_after_headers",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # Django's own console handler on "django" would print every line a second
    # time (the request lines of `make run` among them): the root's is enough.
    "loggers": {"django": {"handlers": [], "level": env_str("LOG_LEVEL", "INFO")}},
}
