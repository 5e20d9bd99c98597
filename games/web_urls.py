"""Routes of the games pages (the API has its own, in `api_urls`)."""

from django.urls import path

from games import web

urlpatterns = [
    path("play/", web.play, name="play"),
    path("rules/", web.rules_page, name="rules"),
    path("examples/", web.examples_page, name="examples"),
    path("faq/", web.faq_page, name="faq"),
    path("leaderboard/<str:date>/par/", web.par_replay_page, name="par-replay"),
    path("live/<str:username>/", web.watch_page, name="watch"),
    path("sw.js", web.service_worker, name="service-worker"),
    path("manifest.webmanifest", web.manifest, name="manifest"),
]
