"""Routes of the board pages (the API has its own, in `api_urls`)."""

from django.urls import URLPattern, path

from games.origins import Origins, no_origins
from leaderboards import web
from leaderboards.audiences import Members


def board_urls(
    *,
    origins: Origins = no_origins,
    friends: Members | None = None,
    circle: Members | None = None,
) -> list[URLPattern]:
    """The board pages' routes, as the site's wiring hands them what the apps above
    know: the replay and player pages name where a game of no day was played as
    `origins` says (the races' read); `?scope=friends` narrows a board to `friends`,
    and "Playing now" lists the viewer's `circle` (the leagues' reads). Without
    them: no origin, no friends board, no "Playing now"."""
    played_in = {"origins": origins}
    playing = {"circle": circle}
    narrowed = {"friends": friends}
    return [
        path("", web.home, playing, name="home"),
        path("today/spread/", web.today_spread, name="today-spread"),
        path("today/playing/", web.playing_now_section, playing, name="playing-now"),
        path("leaderboard/", web.leaderboard, narrowed, name="leaderboard"),
        path("leaderboard/<str:date>/", web.leaderboard, narrowed, name="leaderboard-day"),
        path("players/<str:username>/", web.player, played_in, name="player"),
        path("replays/<int:game_id>/", web.replay, played_in, name="replay"),
        path("games/<int:game_id>/", web.game_card, name="game-card"),
        path("archive/", web.archive, name="archive"),
        path("archive/<str:month>/", web.archive, name="archive-month"),
        path("cards/games/<int:game_id>.png", web.card_game, name="card-game"),
        path("cards/days/<str:date>.png", web.card_day, name="card-day"),
        path("cards/players/<str:username>.png", web.card_player, name="card-player"),
    ]
