"""The site's ASGI application with the frame writer turned off, for `bench/fanout.py`.

Every live-board update then goes through the server's ASGI send, one message
framed per socket: the write path that the frame writer replaces, measured
under the same server.
"""

from easyharp_site import sockets

sockets.frame_writer = lambda send: None

from easyharp_site.asgi import application  # noqa: E402

__all__ = ["application"]
