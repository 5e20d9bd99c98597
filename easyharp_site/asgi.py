"""ASGI entry point: HTTP through Django, websockets through Channels.

Every HTTP request takes its turn among its address's first
(easyharp_site.fairness), every body passes the size cap (easyharp_site.middleware), every
socket the Origin check (easyharp_site.sockets); a socket to a path no route
serves is refused (403) instead of raising in the router (a 500 and a
traceback in the log).
"""

import functools
import os
from typing import Any

from daphne.http_protocol import WebRequest
from django.core.asgi import get_asgi_application


def _without_form_parsing(init: Any) -> Any:
    """daphne's request, minus Twisted's parsing of POSTed form bodies.

    Twisted parses every multipart or URL-encoded POST body into `request.args`
    (all of it, in memory) before daphne hands the raw body to the application,
    which never reads those args; a body it cannot parse (a multipart one
    without a boundary, say) got Twisted's own empty 400 instead of the
    application's answer in the error shape. `parsePOSTFormSubmission` is
    Twisted's switch for exactly this; daphne passes its arguments through.
    """

    @functools.wraps(init)
    def wrapped(self: WebRequest, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parsePOSTFormSubmission", False)
        init(self, *args, **kwargs)

    return wrapped


# Under daphne (`manage.py runserver`, bench/fanout.py's old path), which
# imports this module before it serves a request; production runs uvicorn.
WebRequest.__init__ = _without_form_parsing(WebRequest.__init__)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")
# Django must be set up before anything imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import re_path  # noqa: E402

from easyharp_site.collector import passes_on_a_timer  # noqa: E402
from easyharp_site.fairness import FairShareMiddleware  # noqa: E402
from easyharp_site.middleware import BodyCapMiddleware  # noqa: E402
from easyharp_site.sockets import DirectFrames, OriginCheck, refuse_socket  # noqa: E402
from games.routing import websocket_urlpatterns as game_urlpatterns  # noqa: E402
from leaderboards.routing import websocket_urlpatterns  # noqa: E402
from leagues.routing import websocket_urlpatterns as league_urlpatterns  # noqa: E402
from races.routing import websocket_urlpatterns as race_urlpatterns  # noqa: E402

# Channels routes ASGI applications with Django's re_path, typed for views.
unrouted = re_path(r"", refuse_socket)  # type: ignore[arg-type]

application = ProtocolTypeRouter(
    {
        "http": FairShareMiddleware(BodyCapMiddleware(django_asgi_app)),
        "websocket": DirectFrames(
            OriginCheck(
                AuthMiddlewareStack(
                    URLRouter(
                        [
                            *game_urlpatterns,
                            *websocket_urlpatterns,
                            *league_urlpatterns,
                            *race_urlpatterns,
                            unrouted,
                        ]
                    )
                )
            )
        ),
    }
)

# Everything imported so far lives as long as the process: the collector never
# walks it again (about 175,000 objects); its full passes run on a timer, and a
# young pass every second.
passes_on_a_timer()
