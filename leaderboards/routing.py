"""Websocket routes of the leaderboards app."""

websocket_urlpatterns: list = []
