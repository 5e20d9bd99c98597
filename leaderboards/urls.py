"""Routes of the board pages (the API has its own, in `api_urls`)."""

from django.urls import path

from leaderboards import web

urlpatterns = [
    path("", web.home, name="home"),
    path("today/spread/", web.today_spread, name="today-spread"),
    path("today/playing/", web.playing_now_section, name="playing-now"),
    path("leaderboard/", web.leaderboard, name="leaderboard"),
    path("leaderboard/<str:date>/", web.leaderboard, name="leaderboard-day"),
    path("players/<str:username>/", web.player, name="player"),
    path("replays/<int:game_id>/", web.replay, name="replay"),
    path("games/<int:game_id>/", web.game_card, name="game-card"),
    path("archive/", web.archive, name="archive"),
    path("archive/<str:month>/", web.archive, name="archive-month"),
    path("cards/games/<int:game_id>.png", web.card_game, name="card-game"),
    path("cards/days/<str:date>.png", web.card_day, name="card-day"),
    path("cards/players/<str:username>.png", web.card_player, name="card-player"),
]
