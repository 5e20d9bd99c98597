"""Live friends and league boards over the websocket, driven through the whole ASGI stack.

A league's socket is for its members only (4404 for anyone else, as for a
league that does not exist); a member's ranked game updates it, a
non-member's does not; a friends socket is its viewer's alone. Runs on the
in-memory channel layer and on Redis.
"""

from __future__ import annotations

import asyncio
import datetime
import random
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.base_user import AbstractBaseUser

from easyharp_site.asgi import application
from games.models import DailyDeal, Game
from leaderboards import live
from leaderboards.consumers import CLOSE_NO_BOARD, CLOSE_NOT_SIGNED_IN
from leaderboards.mirror import KIND, ON_MOVES, ON_SCORE, PENDING, WON, mirror_read
from leaderboards.services import board_mirror_build
from leagues import services
from leagues.models import Follow, League, Membership
from ranking.actions import game_void, player_ban, player_unban
from tests.fixtures import WIN_LOG, stored_game
from tests.leaderboards.test_consumers import (  # noqa: F401 - fixtures of the live tests
    QUIET,
    _close_database_thread_connections,
    board_of,
    drain,
    flushed,
    layers,
    random_log,
    session_cookie,
    submit,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flushed")]

MakePlayer = Callable[[str], AbstractBaseUser]


async def open_path(path: str, player: AbstractBaseUser | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if player is not None:
        headers.append(await database_sync_to_async(session_cookie)(player))
    return WebsocketCommunicator(application, path, headers=headers)


def league_path(slug: str, daily: DailyDeal, order: str = "score") -> str:
    return f"/ws/leagues/{slug}/daily/{daily.date.isoformat()}/leaderboard/?order={order}"


def friends_path(daily: DailyDeal) -> str:
    return f"/ws/daily/{daily.date.isoformat()}/leaderboard/?order=score&scope=friends"


async def snapshot_of(path: str, player: AbstractBaseUser | None) -> tuple[Any, dict[str, Any]]:
    communicator = await open_path(path, player)
    connected, _ = await communicator.connect()
    assert connected
    message = await communicator.receive_json_from(timeout=5)
    assert message["type"] == "snapshot", message
    return communicator, message


async def refused(path: str, player: AbstractBaseUser | None) -> tuple[dict[str, Any], int]:
    communicator = await open_path(path, player)
    await communicator.connect()
    error = await communicator.receive_json_from(timeout=5)
    closed = await communicator.receive_output(timeout=5)
    await communicator.disconnect()
    return error, closed["code"]


@database_sync_to_async
def league_of(owner: AbstractBaseUser, *members: AbstractBaseUser) -> League:
    league = services.league_create(owner=owner, name="Live league")  # type: ignore[arg-type]
    for member in members:
        services.league_join(player=member, code=league.invite_code)  # type: ignore[arg-type]
    return league


async def test_a_members_ranked_game_updates_the_league_board_and_an_outsiders_does_not(
    daily: DailyDeal, make_player: MakePlayer, board_reads: list[live.BoardKey]
) -> None:
    reads = board_reads
    alice, bob, outsider = await database_sync_to_async(
        lambda: (make_player("alice"), make_player("bob"), make_player("outsider"))
    )()
    league = await league_of(alice, bob)
    communicator, snapshot = await snapshot_of(league_path(league.slug, daily), alice)
    try:
        assert snapshot["total"] == 0 and snapshot["me"] is None

        reads.clear()
        await database_sync_to_async(submit)(outsider, WIN_LOG)
        assert await communicator.receive_nothing(timeout=QUIET)
        # Not even read again: the outsider is not in the league's audience.
        assert reads == []

        await database_sync_to_async(submit)(bob, ["S"])
        update = await communicator.receive_json_from(timeout=5)
        assert update["type"] == "update"
        assert update["total"] == 1
        assert [(e["rank"], e["player"]) for e in update["entries"]] == [(1, "bob")]

        await database_sync_to_async(submit)(alice, WIN_LOG)
        update = await communicator.receive_json_from(timeout=5)
        assert [(e["rank"], e["player"]) for e in update["entries"]] == [
            (1, "alice"),
            (2, "bob"),
        ]
        assert update["me"]["rank"] == 1
        assert await communicator.receive_nothing(timeout=QUIET)
    finally:
        await communicator.disconnect()


async def test_a_non_member_cannot_open_a_league_socket(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, bob = await database_sync_to_async(lambda: (make_player("alice"), make_player("bob")))()
    league = await league_of(alice)

    for player in (bob, None):
        error, code = await refused(league_path(league.slug, daily), player)
        assert code == CLOSE_NO_BOARD
        assert error["error"]["code"] == "not_found"
        assert "Live league" not in str(error)
    missing, code = await refused(league_path("no-such-league", daily), bob)
    assert code == CLOSE_NO_BOARD and missing == error


async def test_a_member_removed_while_watching_is_closed_and_sees_no_more(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, bob = await database_sync_to_async(lambda: (make_player("alice"), make_player("bob")))()
    league = await league_of(alice, bob)
    communicator, _ = await snapshot_of(league_path(league.slug, daily), bob)
    try:
        await database_sync_to_async(services.league_member_remove)(
            owner=alice, slug=league.slug, username="bob"
        )
        await database_sync_to_async(submit)(alice, WIN_LOG)
        error = await communicator.receive_json_from(timeout=5)
        assert error["error"]["code"] == "not_found"
        closed = await communicator.receive_output(timeout=5)
        assert closed == {"type": "websocket.close", "code": CLOSE_NO_BOARD}
    finally:
        await communicator.disconnect()


async def test_a_friends_board_is_its_viewers_alone(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, bob, carol, dave = await database_sync_to_async(
        lambda: [make_player(name) for name in ("alice", "bob", "carol", "dave")]
    )()
    await database_sync_to_async(services.follow_add)(follower=alice, followee=bob)
    await database_sync_to_async(services.follow_add)(follower=carol, followee=dave)
    mine, mine_snapshot = await snapshot_of(friends_path(daily), alice)
    theirs, _ = await snapshot_of(friends_path(daily), carol)
    try:
        assert mine_snapshot["entries"] == [] and mine_snapshot["me"] is None

        await database_sync_to_async(submit)(bob, ["S"])
        update = await mine.receive_json_from(timeout=5)
        assert [(e["rank"], e["player"]) for e in update["entries"]] == [(1, "bob")]
        # bob is not carol's friend: her board did not move.
        assert await theirs.receive_nothing(timeout=QUIET)

        await database_sync_to_async(submit)(dave, WIN_LOG)
        update = await theirs.receive_json_from(timeout=5)
        assert [e["player"] for e in update["entries"]] == ["dave"]
        assert await mine.receive_nothing(timeout=QUIET)

        await database_sync_to_async(submit)(alice, WIN_LOG)
        update = await mine.receive_json_from(timeout=5)
        assert [e["player"] for e in update["entries"]] == ["alice", "bob"]
        assert update["me"]["rank"] == 1
    finally:
        await mine.disconnect()
        await theirs.disconnect()


@pytest.mark.redis
async def test_a_friends_board_read_from_the_board_mirror_updates_live(
    daily: DailyDeal, make_player: MakePlayer, settings: Any
) -> None:
    settings.BOARD_MIRROR = True
    alice, bob = await database_sync_to_async(lambda: (make_player("alice"), make_player("bob")))()
    await database_sync_to_async(services.follow_add)(follower=alice, followee=bob)
    assert await database_sync_to_async(board_mirror_build)(date=daily.date) == 0
    communicator, snapshot = await snapshot_of(friends_path(daily), alice)
    try:
        assert snapshot["entries"] == []
        await database_sync_to_async(submit)(bob, ["S"])
        update = await communicator.receive_json_from(timeout=5)
        assert [(e["rank"], e["player"]) for e in update["entries"]] == [(1, "bob")]
        await database_sync_to_async(submit)(alice, WIN_LOG)
        update = await communicator.receive_json_from(timeout=5)
        assert [e["player"] for e in update["entries"]] == ["alice", "bob"]
        assert update["me"]["rank"] == 1
        # Both records reach the complete mirror after their commits: under the
        # server with the process's other records of the moment, so a record
        # may still be pending (read from the table) when the board moves.
        expected = {alice.pk: ON_SCORE | ON_MOVES | WON, bob.pk: ON_SCORE}
        kinds: dict[int, int] = {}
        for _ in range(500):
            records = await database_sync_to_async(mirror_read)(
                date=daily.date, player_ids=[alice.pk, bob.pk]
            )
            assert records is not None
            kinds = {player: fields[KIND] for player, fields in records.items()}
            if PENDING not in kinds.values():
                break
            await asyncio.sleep(0.01)
        assert kinds == expected
    finally:
        await communicator.disconnect()


async def test_following_someone_while_watching_brings_them_onto_the_friends_board(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, bob = await database_sync_to_async(lambda: (make_player("alice"), make_player("bob")))()
    await database_sync_to_async(submit)(bob, ["S"])
    communicator, snapshot = await snapshot_of(friends_path(daily), alice)
    try:
        assert snapshot["entries"] == []
        await database_sync_to_async(services.follow_add)(follower=alice, followee=bob)
        update = await communicator.receive_json_from(timeout=5)
        assert [e["player"] for e in update["entries"]] == ["bob"]
    finally:
        await communicator.disconnect()


async def test_a_friends_socket_needs_a_signed_in_player(daily: DailyDeal) -> None:
    error, code = await refused(friends_path(daily), None)
    assert code == CLOSE_NOT_SIGNED_IN
    assert error["error"]["code"] == "not_authenticated"


# --- Membership changes while a board is open ------------------------------------------


def players_shown(message: dict[str, Any]) -> list[str]:
    return [entry["player"] for entry in message["entries"]]


async def test_a_player_who_joins_while_the_league_board_is_open_appears_with_their_game(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, bob, carol = await database_sync_to_async(
        lambda: [make_player(name) for name in ("alice", "bob", "carol")]
    )()
    league = await league_of(alice, bob)
    await database_sync_to_async(submit)(bob, ["S"])
    communicator, snapshot = await snapshot_of(league_path(league.slug, daily), alice)
    try:
        assert players_shown(snapshot) == ["bob"]
        await database_sync_to_async(services.league_join)(player=carol, code=league.invite_code)
        # Nothing of carol's to show yet: the board stands.
        assert await communicator.receive_nothing(timeout=QUIET)

        await database_sync_to_async(submit)(carol, WIN_LOG)
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == ["carol", "bob"]
        assert update["total"] == 2
    finally:
        await communicator.disconnect()


async def test_joining_brings_the_players_game_onto_the_open_board_at_once(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, carol = await database_sync_to_async(
        lambda: [make_player(name) for name in ("alice", "carol")]
    )()
    league = await league_of(alice)
    await database_sync_to_async(submit)(carol, WIN_LOG)
    communicator, snapshot = await snapshot_of(league_path(league.slug, daily), alice)
    try:
        assert snapshot["total"] == 0
        await database_sync_to_async(services.league_join)(player=carol, code=league.invite_code)
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == ["carol"] and update["total"] == 1
    finally:
        await communicator.disconnect()


async def test_a_member_who_leaves_or_is_removed_leaves_the_open_board_at_once(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, bob, carol = await database_sync_to_async(
        lambda: [make_player(name) for name in ("alice", "bob", "carol")]
    )()
    league = await league_of(alice, bob, carol)
    for player in (bob, carol):
        await database_sync_to_async(submit)(player, ["S"])
    communicator, snapshot = await snapshot_of(league_path(league.slug, daily), alice)
    try:
        assert sorted(players_shown(snapshot)) == ["bob", "carol"]
        await database_sync_to_async(services.league_leave)(player=bob, slug=league.slug)
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == ["carol"] and update["total"] == 1

        await database_sync_to_async(services.league_member_remove)(
            owner=alice, slug=league.slug, username="carol"
        )
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == [] and update["total"] == 0

        # bob's next game is no longer this board's business.
        await database_sync_to_async(submit)(bob, WIN_LOG)
        assert await communicator.receive_nothing(timeout=QUIET)
    finally:
        await communicator.disconnect()


async def test_follow_and_unfollow_change_the_open_friends_board_at_once(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, bob, carol = await database_sync_to_async(
        lambda: [make_player(name) for name in ("alice", "bob", "carol")]
    )()
    communicator, snapshot = await snapshot_of(friends_path(daily), alice)
    try:
        assert snapshot["entries"] == []
        # Followed before playing: their game shows when it comes.
        await database_sync_to_async(services.follow_add)(follower=alice, followee=carol)
        assert await communicator.receive_nothing(timeout=QUIET)
        await database_sync_to_async(submit)(carol, ["S"])
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == ["carol"]

        await database_sync_to_async(submit)(bob, WIN_LOG)
        assert await communicator.receive_nothing(timeout=QUIET)
        await database_sync_to_async(services.follow_add)(follower=alice, followee=bob)
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == ["bob", "carol"]

        await database_sync_to_async(services.follow_remove)(follower=alice, followee=carol)
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == ["bob"] and update["total"] == 1
    finally:
        await communicator.disconnect()


async def test_a_board_of_an_earlier_day_follows_membership_too(
    daily: DailyDeal, make_player: MakePlayer
) -> None:
    alice, carol = await database_sync_to_async(
        lambda: [make_player(name) for name in ("alice", "carol")]
    )()
    league = await league_of(alice)

    @database_sync_to_async
    def played_yesterday() -> DailyDeal:
        yesterday = DailyDeal.objects.create(
            date=daily.date - datetime.timedelta(days=1), number=daily.number
        )
        stored_game(player=carol, daily=yesterday, score=10, moves=10)
        return yesterday

    yesterday = await played_yesterday()
    communicator, snapshot = await snapshot_of(league_path(league.slug, yesterday), alice)
    try:
        assert snapshot["total"] == 0
        await database_sync_to_async(services.league_join)(player=carol, code=league.invite_code)
        update = await communicator.receive_json_from(timeout=5)
        assert players_shown(update) == ["carol"]
    finally:
        await communicator.disconnect()


@pytest.mark.parametrize("seed", [1, 2])
async def test_a_narrowed_boards_snapshot_plus_its_updates_equals_a_fresh_snapshot(
    daily: DailyDeal, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Random joins, leaves, removals, follows, unfollows, games, voids, bans and
    lifted bans, watched by the league's owner on the league's boards and their
    friends boards through a small window (3 entries, so players move in and
    out of it): once the updates stop, every open board shows what a new
    socket's snapshot shows. The owner is never banned: a ban closes their
    sockets (tests/security/test_socket_sessions.py)."""
    monkeypatch.setattr(live, "WATCHED_ENTRIES", 3)
    rng = random.Random(seed)
    owner, *others = await database_sync_to_async(
        lambda: [make_player(f"p{number}") for number in range(7)]
    )()
    moderator = await database_sync_to_async(make_player)("moderator")
    league = await league_of(owner)
    paths = [league_path(league.slug, daily, order) for order in ("score", "moves")] + [
        f"/ws/daily/{daily.date.isoformat()}/leaderboard/?order={order}&scope=friends"
        for order in ("score", "moves")
    ]
    sockets = []
    for path in paths:
        communicator, snapshot = await snapshot_of(path, owner)
        sockets.append([communicator, path, board_of(snapshot), snapshot["version"]])

    @database_sync_to_async
    def change() -> None:
        """One random change, of membership, of following, of a game or of a ban."""
        player = rng.choice(others)
        member = Membership.objects.filter(league=league, player=player).exists()
        followed = Follow.objects.filter(follower=owner, followee=player).exists()
        roll = rng.random()
        if roll < 0.15 and player.is_active and not member:
            services.league_join(player=player, code=league.invite_code)
        elif roll < 0.22 and member:
            services.league_leave(player=player, slug=league.slug)
        elif roll < 0.28 and member:
            services.league_member_remove(owner=owner, slug=league.slug, username=player.username)
        elif roll < 0.4:
            if followed:
                services.follow_remove(follower=owner, followee=player)
            else:
                services.follow_add(follower=owner, followee=player)
        elif roll < 0.47 and stored:
            game_void(game=stored.pop(rng.randrange(len(stored))), reason="random")
        elif roll < 0.55:
            act = player_ban if player.is_active else player_unban
            act(player=player, moderator=moderator, reason="random")
        else:
            mover = rng.choice([owner, player])
            if mover.is_active:
                log = WIN_LOG if rng.random() < 0.3 else random_log(rng, rng.randint(1, 60))
                stored.append(submit(mover, log))
        player.refresh_from_db()

    stored: list[Game] = []
    try:
        for _ in range(30):
            await change()
            if rng.random() < 0.3:
                # Let some updates out between changes, not only at the end.
                await asyncio.sleep(rng.random() * 0.1)
        for socket in sockets:
            communicator, _, board, version = socket
            socket[3], _ = await drain(communicator, board, version)
        for _, path, board, _ in sockets:
            fresh, snapshot = await snapshot_of(path, owner)
            await fresh.disconnect()
            assert board == board_of(snapshot), path
    finally:
        for communicator, *_ in sockets:
            await communicator.disconnect()
