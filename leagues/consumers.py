"""A league's live board: `ws/leagues/<slug>/daily/<date>/leaderboard/?order=score|moves`.

The day's live board (`leaderboards.consumers`, whose protocol it speaks)
narrowed to the league's members and ranked among them. Only members see it:
anyone else, signed in or not, gets the close code 4404, as for a league that
does not exist; a member removed while watching is closed with it too.
"""

from __future__ import annotations

import datetime

from channels.db import database_sync_to_async

from leaderboards import live
from leaderboards.audiences import Audience
from leaderboards.consumers import CLOSE_NO_BOARD, LeaderboardConsumer
from leagues.models import League
from leagues.selectors import league_members_sql


def _member_league_id(slug: str, player_id: int | None) -> int | None:
    if player_id is None:
        return None
    league = League.objects.filter(slug=slug, memberships__player_id=player_id).first()
    return None if league is None else league.pk


class LeagueBoardConsumer(LeaderboardConsumer):
    """The league's board of a day, for its members."""

    async def board_key(
        self, date: datetime.date, order: str, query: dict[str, list[str]]
    ) -> live.BoardKey | None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        league_id = await database_sync_to_async(_member_league_id)(slug, self.player_id)
        if league_id is None:
            await self._refuse(CLOSE_NO_BOARD, "not_found", "There is no such league.")
            return None
        return live.BoardKey(date, order, Audience("league", league_id, league_members_sql))
