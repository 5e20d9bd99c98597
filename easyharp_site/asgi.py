"""ASGI entry point: HTTP through Django, websockets through Channels.

Every HTTP request takes its turn among its address's first
(easyharp_site.fairness), every body passes the size cap (easyharp_site.middleware), every
socket its address's share and the Origin check (easyharp_site.sockets, which
also closes a socket whose database is away with 4503); a socket to a path no route
serves is refused (403) instead of raising in the router (a 500 and a
traceback in the log).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")
# Django must be set up before anything imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import re_path  # noqa: E402

from easyharp_site.compat import daphne_without_form_parsing  # noqa: E402
from easyharp_site.fairness import FairShareMiddleware  # noqa: E402
from easyharp_site.lifespan import server_lifespan  # noqa: E402
from easyharp_site.middleware import BodyCapMiddleware  # noqa: E402
from easyharp_site.sockets import (  # noqa: E402
    DirectFrames,
    OriginCheck,
    SocketGuard,
    refuse_socket,
)
from games.routing import websocket_urlpatterns as game_urlpatterns  # noqa: E402
from leaderboards.routing import board_websocket_urls  # noqa: E402
from leagues.routing import websocket_urlpatterns as league_urlpatterns  # noqa: E402
from leagues.selectors import friends_sql  # noqa: E402
from races.routing import websocket_urlpatterns as race_urlpatterns  # noqa: E402

# Channels routes ASGI applications with Django's re_path, typed for views.
unrouted = re_path(r"", refuse_socket)  # type: ignore[arg-type]

# Under daphne (`manage.py runserver`); production runs uvicorn.
daphne_without_form_parsing()

application = ProtocolTypeRouter(
    {
        "lifespan": server_lifespan,
        "http": FairShareMiddleware(BodyCapMiddleware(django_asgi_app)),
        "websocket": DirectFrames(
            SocketGuard(
                OriginCheck(
                    AuthMiddlewareStack(
                        URLRouter(
                            [
                                *game_urlpatterns,
                                # The friends board is the leagues' audience.
                                *board_websocket_urls(friends=friends_sql),
                                *league_urlpatterns,
                                *race_urlpatterns,
                                unrouted,
                            ]
                        )
                    )
                )
            )
        ),
    }
)
