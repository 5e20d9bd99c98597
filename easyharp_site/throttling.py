"""Rate limits for the abuse-prone endpoints: sign-up, log-in, submissions, hints, replays,
the search for players.

A view opts in with `throttle_scope = "signup" | "auth" | "submit" | ...`;
`ScopedThrottle` is in `DEFAULT_THROTTLE_CLASSES`, plain Django views (the
browser forms) use `rate_limited(scope)`, and the rates come from the
environment (`THROTTLE_SIGNUP`, ...; see settings).

Each limit is a fixed-window counter in the default cache (Redis when
`REDIS_URL` is set, so every server process shares it): one atomic increment
per request on a key that names the window and expires with it. A parallel
burst therefore lets exactly the limit through, where DRF's own throttles (read
a list of timestamps, append, write it back) lost most of a burst's increments.
While the shared cache is away, each process counts in its own memory instead.

Who is counted depends on what the limit protects:

- `signup` and `auth` protect accounts, so they count per client address
  whatever credentials the request carries (a token or session of the client's
  own accounts would otherwise bring a fresh allowance per account). `auth`
  also counts per target username and address (`auth_pair`), and per target
  username from anywhere (`auth_username`) so that guesses at one player's
  password from many addresses draw on one allowance; but a browser the player
  signed in on before (a known device, easyharp_site/devices.py) is counted
  per device (`auth_device`) instead, so that nobody can lock a player out.
- `join` (joining a league with an invite code) counts both per client
  address and per signed-in player, so that neither many accounts behind one
  address nor one account from many addresses draws a fresh allowance.
- `search` (players by the beginning of their name) counts per client address
  alone, signed in or not: what it guards is the database's work per client.
- `replay`, `hint` and `card` (the costs a visitor can trigger: a replay built,
  the solver, a picture drawn) count per signed-in player, else per client
  address, and besides per client address at a rate of their own
  (`replay_address`, ...; higher, for the players of one school or office), so
  that many accounts behind one address draw on one allowance.
- The other scopes count per signed-in player, else per client address.

The client address is `REMOTE_ADDR` alone (the server sets it from
`X-Forwarded-For` only on connections from the proxies in FORWARDED_ALLOW_IPS,
and then the address the proxy saw), never an address the client wrote itself;
an IPv6 address counts by its /64 block, the smallest block one subscriber is
usually given.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from redis.exceptions import RedisError
from rest_framework.exceptions import ParseError
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from easyharp_site.devices import known_device, username_digest
from easyharp_site.rates import Rate, rate_from_text

if TYPE_CHECKING:  # rest_framework.views imports this module through its settings.
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

ViewFunction: TypeAlias = Callable[..., HttpResponseBase]

# Reads are public and cheap, so only writes are limited...
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# ...except reads expensive enough to be a lever for abuse: a replay of a
# long game costs seconds of CPU to build; a share picture drawn (not one
# served from the cache) costs a drawing; a search
# for players reads an index range of the players' table.
READ_SCOPES = frozenset({"replay", "card", "search"})
# Limits that protect accounts: counted per address, never per account.
ACCOUNT_SCOPES = frozenset({"signup", "auth"})
# The other counters of `auth`: guesses at one username from one address; from
# anywhere but the player's known devices; and from one known device.
PAIR_SCOPE = "auth_pair"
TARGET_SCOPE = "auth_username"
DEVICE_SCOPE = "auth_device"
# Limits counted per client address and, besides, per signed-in player.
ADDRESS_AND_PLAYER_SCOPES = frozenset({"join"})
# Limits counted per client address alone, whoever is signed in.
ADDRESS_SCOPES = frozenset({"search"})
# Limits counted per player (else per address) and per address at the rate
# `<scope>_address`.
ADDRESS_RATE_SCOPES = frozenset({"replay", "hint", "card"})


def client_address(request: HttpRequest | Request) -> str:
    """The address a limit counts: `REMOTE_ADDR`, IPv6 reduced to its /64 block."""
    return address_key(request.META.get("REMOTE_ADDR") or "")


def address_key(address: str) -> str:
    """A client address as the limits count it: IPv4 as it is, IPv6 by its /64 block
    (an IPv4-mapped one as its IPv4), anything unreadable as it is ("unknown" if empty)."""
    address = address or "unknown"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _target_username(request: HttpRequest | Request) -> str | None:
    """The username a log-in attempt is for, as written (None without one)."""
    data = request.data if isinstance(request, Request) else request.POST
    username = data.get("username") if hasattr(data, "get") else None
    if not isinstance(username, str) or not username.strip():
        return None
    return username


def _account_counters(request: HttpRequest | Request, scope: str) -> list[tuple[str, str]]:
    """The (rate name, counter key) pairs of a sign-up or a log-in, the address's first.

    A log-in names a username: it also counts per username and address, then
    per device when the browser signed in as that player before (a known
    device), else per username from anywhere. Nobody can use up a known
    device's allowance from elsewhere, so guessing wrong on purpose never
    locks a player out of the browsers they use.
    """
    address = client_address(request)
    keys = [(scope, f"{scope}:addr:{address}")]
    username = _target_username(request) if scope == "auth" else None
    if username is None:
        return keys
    name = username_digest(username)
    keys.append((PAIR_SCOPE, f"{PAIR_SCOPE}:{name}:{address}"))
    device = known_device(request, username)
    if device is None:
        keys.append((TARGET_SCOPE, f"{TARGET_SCOPE}:{name}"))
    else:
        keys.append((DEVICE_SCOPE, f"{DEVICE_SCOPE}:{device}"))
    return keys


def _counters(request: HttpRequest | Request, scope: str) -> Iterator[tuple[str, Rate]]:
    """Each (counter key, rate) this request draws on, the address's first.

    A scope without a rate in `DEFAULT_THROTTLE_RATES` is not counted (the
    settings give every scope one, checked at start-up).
    """
    rates = api_settings.DEFAULT_THROTTLE_RATES
    if scope in ACCOUNT_SCOPES:
        keys = _account_counters(request, scope)
    else:
        user = getattr(request, "user", None)
        who = f"player:{user.pk}" if user is not None and user.is_authenticated else None
        if scope in ADDRESS_SCOPES:
            keys = [(scope, f"{scope}:addr:{client_address(request)}")]
        elif scope in ADDRESS_RATE_SCOPES:
            address = client_address(request)
            keys = [(f"{scope}_address", f"{scope}_address:{address}")]
            keys += [(scope, f"{scope}:{who or 'addr:' + address}")]
        elif scope in ADDRESS_AND_PLAYER_SCOPES:
            keys = [(scope, f"{scope}:addr:{client_address(request)}")]
            keys += [(scope, f"{scope}:{who}")] if who else []
        else:
            keys = [(scope, f"{scope}:{who or 'addr:' + client_address(request)}")]
    for rate_name, key in keys:
        if rates.get(rate_name):
            yield key, rate_from_text(rates[rate_name])


def _count(store: BaseCache, key: str, rate: Rate, now: float) -> float | None:
    """Count one request on `key`'s current window: None if within `rate`, else seconds to wait."""
    window = int(now // rate.seconds)
    left = (window + 1) * rate.seconds - now
    cache_key = f"limit:{key}:{window}"
    # `add` creates the window's counter (with its expiry) only if it is missing;
    # `incr` is atomic in Redis (INCR) and under the local cache's lock.
    for _ in range(2):
        store.add(cache_key, 0, timeout=math.ceil(left) + 1)
        try:
            hits = store.incr(cache_key)
        except ValueError:  # expired or evicted between the two calls: start it again
            continue
        return None if hits <= rate.limit else max(left, 1.0)
    return None


# While the shared cache is away, each process keeps the limits with counters of
# its own: with N server processes a client gets at most N times a limit, where
# failing open would give it no limit at all. Room for far more counters than a
# minute's traffic makes, so that a flood of addresses cannot cull the others.
_local_counters = LocMemCache("easyharp-limits", {"OPTIONS": {"MAX_ENTRIES": 200_000}})
_shared_state = {"away": False}
_shared_state_lock = threading.Lock()


def _shared_cache_away(exc: Exception) -> None:
    """Log, once per outage, that the limits are counted in this process alone."""
    with _shared_state_lock:
        if _shared_state["away"]:
            return
        _shared_state["away"] = True
    logger.error(
        "rate limits counted per server process: the shared cache is unavailable (%s)", exc
    )


def _shared_cache_back() -> None:
    if not _shared_state["away"]:
        return
    with _shared_state_lock:
        if not _shared_state["away"]:
            return
        _shared_state["away"] = False
    logger.warning("rate limits shared again: the shared cache answers")


def local_counters_clear() -> None:
    """Forget this process's own counters and any outage seen (for tests)."""
    _local_counters.clear()
    with _shared_state_lock:
        _shared_state["away"] = False


def _refusal(counters: list[tuple[str, Rate]]) -> float | None:
    """Count the request on each counter, the shared cache's or, without it, this process's."""
    now = time.time()
    wait: float | None = None
    try:
        for key, rate in counters:
            wait = _count(cache, key, rate, now)
            if wait is not None:
                break
    except (RedisError, OSError) as exc:
        _shared_cache_away(exc)
    else:
        _shared_cache_back()
        return wait
    for key, rate in counters:
        wait = _count(_local_counters, key, rate, now)
        if wait is not None:
            return wait
    return None


def limit_refusal(request: HttpRequest | Request, scope: str) -> float | None:
    """Count this request against `scope`'s limits: None to let it through, else seconds to wait.

    Reads are not counted, except on `READ_SCOPES`. If the shared cache is
    unreachable, each process counts on its own (and says so once in the log):
    a cache outage neither stops players nor lifts the limits.
    """
    if request.method in _SAFE_METHODS and scope not in READ_SCOPES:
        return None
    try:
        counters = list(_counters(request, scope))
    except ParseError:
        # A body that does not parse names no account: it is counted on the
        # address's counter (DRF reads its data as empty from now on), then
        # refused as the 400 it is.
        wait = _refusal(list(_counters(request, scope)))
        if wait is None:
            raise
        return wait
    return _refusal(counters)


def identity_refusal(scope: str, identity: str) -> float | None:
    """Count one request of `scope` for `identity` rather than the client (for example an
    e-mail address asked for): None to let it through, else seconds to wait.

    The same atomic window counter as every limit, kept the same way through an outage.
    """
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope)
    if not rate:
        return None
    return _refusal([(f"{scope}:id:{identity}", rate_from_text(rate))])


class ScopedThrottle(BaseThrottle):
    """DRF's throttle class for views with a `throttle_scope` (see the module docstring).

    The rates are read on every request, so `override_settings` and the
    environment both take effect.
    """

    def __init__(self) -> None:
        self.refused_for: float | None = None

    def allow_request(self, request: Request, view: APIView) -> bool:
        scope = getattr(view, "throttle_scope", None)
        if scope is None:
            return True
        self.refused_for = limit_refusal(request, scope)
        return self.refused_for is None

    def wait(self) -> float | None:
        return self.refused_for


def rate_limited(scope: str) -> Callable[[ViewFunction], ViewFunction]:
    """The `scope` rate limit for a plain Django view's writes (the browser forms).

    The HTML log-in and sign-up forms reach the same passwords and accounts as
    the API's token and register endpoints, so they share those limits (and
    counters); a refused post gets a short 429 page with `Retry-After`.
    """

    def decorate(view: ViewFunction) -> ViewFunction:
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            wait = limit_refusal(request, scope)
            if wait is not None:
                seconds = max(1, math.ceil(wait))
                response = HttpResponse(
                    f"Too many attempts. Please try again in {seconds} seconds.\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(seconds)
                return response
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
