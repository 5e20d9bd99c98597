"""ASGI entry point: HTTP through Django, websockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")
# Django must be set up before anything imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from easyharp_site.middleware import BodyCapMiddleware  # noqa: E402
from games import preparer  # noqa: E402
from leaderboards.routing import websocket_urlpatterns  # noqa: E402

if settings.DAILY_DEAL_PREPARE_IN_PROCESS:
    # The embedded default has no separate job to prepare the days ahead.
    preparer.start()

application = ProtocolTypeRouter(
    {
        "http": BodyCapMiddleware(django_asgi_app),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
