"""Every move of RULES.md, its points, and every way it can be refused."""

from __future__ import annotations

import json

import pytest

from games.rules import REASONS, Game, IllegalActionError, InvalidActionError, replay
from tests.paths import GAME_VECTORS

from .positions import arrange, columns_of


def refusal(game: Game, token: str) -> IllegalActionError:
    """Play `token`, expect a refusal, and check that it changed nothing."""
    before = (game.position(), game.table(), game.log, game.undo_left)
    with pytest.raises(IllegalActionError) as refused:
        game.play(token)
    assert (game.position(), game.table(), game.log, game.undo_left) == before
    assert refused.value.code in REASONS
    return refused.value


# ---------------------------------------------------------------- the stock


def test_a_tap_turns_the_next_stock_card_onto_the_waste() -> None:
    game = arrange(stock="4C 9D", waste="2S")
    game.play("S")
    assert game.table()["waste_top"] == "4C"
    assert (game.table()["stock"], game.table()["waste"]) == (1, 2)
    assert (game.score, game.moves) == (0, 1)


def test_a_tap_on_an_empty_stock_recycles_the_waste_in_the_same_order() -> None:
    game = arrange(stock="4C 9D 2S")
    game.play_log("S S S")
    game.play("S")  # recycle
    assert game.table()["stock"] == 3 and game.table()["waste"] == 0
    assert (game.score, game.moves) == (0, 4)
    turned = []
    for _ in range(3):
        game.play("S")
        turned.append(game.table()["waste_top"])
    assert turned == ["4C", "9D", "2S"]


def test_a_tap_is_refused_when_stock_and_waste_are_both_empty() -> None:
    assert refusal(arrange(columns=["KS"]), "S").code == "empty_stock_and_waste"


# ---------------------------------------------------------------- column to column


def test_a_card_goes_on_the_next_higher_rank_of_the_other_colour() -> None:
    game = arrange(columns=["8S", "7H"])
    game.play("21")
    assert columns_of(game)[:2] == ["8S 7H", ""]
    assert (game.score, game.moves) == (0, 1)


@pytest.mark.parametrize(
    "columns",
    [["8S", "7C"], ["8H", "7D"], ["9S", "7H"], ["7S", "7H"], ["6S", "7H"]],
    ids=["same colour black", "same colour red", "two ranks", "same rank", "lower"],
)
def test_a_column_refuses_a_card_that_does_not_fit(columns: list[str]) -> None:
    error = refusal(arrange(columns=columns), "21")
    assert error.code == "column_refuses"
    assert error.params == {"card": columns[1], "target": columns[0]}


def test_only_the_top_card_moves_and_the_reason_reminds_of_it() -> None:
    # 6D would fit on 7C, but only the top card (5S) may move.
    game = arrange(columns=["7C", "", "9c 6D 5S"])
    error = refusal(game, "31")
    assert error.code == "one_card_at_a_time"
    assert "only the top card moves" in error.reason
    assert "starts with a king and goes to an empty column" in error.reason


def test_a_card_that_fits_nowhere_below_gets_the_plain_reason() -> None:
    game = arrange(columns=["7C", "", "9c 6S 5H"])
    assert refusal(game, "31").code == "column_refuses"


def test_a_king_headed_run_refused_by_a_column_is_told_where_it_may_go() -> None:
    game = arrange(columns=["9C", "", "3d KH QS"])
    error = refusal(game, "31")
    assert error.code == "run_only_to_empty"
    assert "KH" in error.reason


def test_a_king_headed_run_moves_as_one_block_to_an_empty_column() -> None:
    game = arrange(columns=["", "4c 9h KD QS JH", "8S"])
    game.play("21")
    assert columns_of(game)[:2] == ["KD QS JH", "4c 9H"]
    assert (game.score, game.moves) == (5, 1)


def test_a_lone_king_moves_to_an_empty_column() -> None:
    game = arrange(columns=["", "KC"])
    game.play("21")
    assert columns_of(game)[:2] == ["KC", ""]


def test_a_run_not_headed_by_a_king_never_goes_to_an_empty_column() -> None:
    game = arrange(columns=["", "5c QD JS"])
    error = refusal(game, "21")
    assert error.code == "king_only"


def test_the_top_card_alone_does_not_go_to_an_empty_column() -> None:
    assert refusal(arrange(columns=["", "4h 7S"]), "21").code == "king_only"


def test_a_move_from_an_empty_column_is_refused() -> None:
    error = refusal(arrange(columns=["8S", ""]), "21")
    assert error.code == "empty_source"
    assert error.params == {"source": "2"}
    assert error.reason == "there is no card to move: column 2 is empty"


def test_a_move_to_the_same_column_is_refused() -> None:
    assert refusal(arrange(columns=["8S 7H"]), "11").code == "same_column"


def test_turning_up_happens_at_once_and_earns_five() -> None:
    game = arrange(columns=["8S", "3c 5d 7H"])
    game.play("21")
    assert columns_of(game)[1] == "3c 5D"
    assert (game.score, game.moves) == (5, 1)


# ---------------------------------------------------------------- the waste


def test_waste_to_column_earns_five() -> None:
    game = arrange(columns=["8S"], waste="2C 7D")
    game.play("W1")
    assert columns_of(game)[0] == "8S 7D"
    assert (game.score, game.table()["waste_top"]) == (5, "2C")


def test_a_king_from_the_waste_goes_to_an_empty_column() -> None:
    game = arrange(columns=["8S"], waste="KH")
    game.play("W2")
    assert columns_of(game)[1] == "KH"


def test_waste_to_an_empty_column_is_only_for_a_king() -> None:
    assert refusal(arrange(columns=["8S"], waste="QH"), "W2").code == "king_only"


def test_waste_to_a_column_that_refuses() -> None:
    assert refusal(arrange(columns=["8S"], waste="7S"), "W1").code == "column_refuses"


def test_an_empty_waste_is_not_a_source() -> None:
    error = refusal(arrange(columns=["8S"], stock="7H"), "W1")
    assert (error.code, error.params) == ("empty_source", {"source": "W"})
    assert "the waste is empty" in error.reason


@pytest.mark.parametrize("token", ["1W", "WW", "F1W"])
def test_nothing_goes_onto_the_waste(token: str) -> None:
    game = arrange(columns=["AS"], waste="2H", foundations=["AS"])
    assert refusal(game, token).code == "waste_is_not_a_destination"


def test_waste_to_foundation_earns_ten() -> None:
    game = arrange(waste="AD")
    game.play("WF")
    assert game.table()["foundations"][4] == {"suit": "D", "count": 1, "top": "AD"}
    assert game.score == 10


# ---------------------------------------------------------------- foundations


def test_an_unnamed_foundation_is_the_first_that_accepts() -> None:
    game = arrange(columns=["AS", "AS"])
    game.play("1F")
    game.play("2F")
    assert [f["count"] for f in game.table()["foundations"]] == [1, 1, 0, 0, 0, 0, 0, 0]
    game = arrange(columns=["2S"], foundations=["", "AS"])
    game.play("1F")
    assert game.table()["foundations"][1]["top"] == "2S"


def test_a_named_foundation_takes_its_suit_one_rank_up() -> None:
    game = arrange(columns=["5d 2H"], foundations=["", "", "", "AH"])
    game.play("1F4")
    assert game.table()["foundations"][3]["top"] == "2H"
    assert (game.score, columns_of(game)[0]) == (15, "5D")


@pytest.mark.parametrize(
    ("card", "token", "foundations"),
    [
        ("2H", "1F1", []),
        ("3H", "1F3", ["", "", "AH"]),
        ("2H", "1F4", []),
        ("2H", "1F3", ["", "", "AH 2H"]),
    ],
    ids=["other suit", "right suit wrong rank", "no ace yet", "already has that rank"],
)
def test_a_named_foundation_refuses(card: str, token: str, foundations: list[str]) -> None:
    error = refusal(arrange(columns=[card], foundations=foundations), token)
    assert error.code == "foundation_refuses"
    assert error.params["card"] == card


def test_no_foundation_accepts() -> None:
    error = refusal(arrange(columns=["3C"], foundations=["", "", "", "", "", "", "AC"]), "1F")
    assert (error.code, error.params) == ("no_foundation_accepts", {"card": "3C"})


def test_an_empty_foundation_is_not_a_source() -> None:
    error = refusal(arrange(columns=["8S"]), "F21")
    assert (error.code, error.params) == ("empty_source", {"source": "F2"})


@pytest.mark.parametrize("token", ["F1F2", "F1F", "F1F1", "F8F3"])
def test_no_card_moves_from_one_foundation_to_another(token: str) -> None:
    game = arrange(foundations=["AS"])
    assert refusal(game, token).code == "foundation_to_foundation"


def test_a_card_taken_back_from_a_foundation_earns_nothing() -> None:
    game = arrange(columns=["3C"], foundations=["", "", "AH 2H"])
    game.play("F31")
    assert columns_of(game)[0] == "3C 2H"
    assert (game.score, game.moves) == (0, 1)
    assert game.table()["foundations"][2]["count"] == 1


def test_taking_back_to_an_empty_column_is_only_for_a_king() -> None:
    game = arrange(columns=["8S"], foundations=["AS 2S"])
    assert refusal(game, "F12").code == "king_only"
    assert refusal(game, "F11").code == "column_refuses"


def test_fair_play_a_card_earns_its_ten_only_once() -> None:
    game = arrange(columns=["3C 2H"], foundations=["", "", "AH"])
    game.play("1F3")
    assert game.score == 10
    game.play("F31")
    game.play("1F")
    assert game.score == 10
    game.play("F31")
    game.play("1F3")
    assert (game.score, game.moves) == (10, 5)


def test_undoing_a_first_placement_clears_its_mark() -> None:
    game = arrange(columns=["3C 2H"], foundations=["", "", "AH"])
    game.play("1F3")
    assert game.score == 10
    game.undo()
    assert game.score == 0
    game.play("1F3")
    assert game.score == 10


def test_a_turned_card_under_a_foundation_move_earns_five_more() -> None:
    game = arrange(columns=["9d AS"])
    game.play("1F")
    assert (game.score, columns_of(game)[0]) == (15, "9D")


# ---------------------------------------------------------------- undo


def test_undo_restores_the_table_and_score_but_not_the_move_count() -> None:
    game = arrange(columns=["8S", "3c 5d 7H"], stock="4C", waste="KD")
    start = (game.position(), columns_of(game))
    game.play_log("21 W3 S")
    assert (game.score, game.moves) == (10, 3)
    game.play_log("U U U")
    assert (game.position(), columns_of(game)) == start
    assert (game.score, game.moves) == (0, 3)
    assert game.log == ["21", "W3", "S", "U", "U", "U"]


def test_undo_of_a_recycle_and_a_king_run() -> None:
    game = arrange(columns=["", "4c KD QS"], waste="2C 7D")
    start = game.position()
    game.play_log("21 S U U")
    assert game.position() == start


def test_undo_of_a_card_taken_back() -> None:
    game = arrange(columns=["3C"], foundations=["", "", "AH 2H"])
    start = game.position()
    game.play_log("F31 U")
    assert game.position() == start and game.table()["foundations"][2]["count"] == 2


def test_undo_with_nothing_to_undo_is_refused() -> None:
    game = arrange(stock="4C")
    assert refusal(game, "U").code == "nothing_to_undo"
    game.play("S")
    game.undo()
    assert refusal(game, "U").code == "nothing_to_undo"


def test_undo_takes_back_at_most_the_hundred_latest_actions() -> None:
    game = Game(1)
    game.play_log(["S"] * 59 + ["S"] + ["S"] * 59 + ["S"] + ["S"] * 30)  # 150 taps
    assert game.undo_left == 100
    game.play_log(["U"] * 100)
    assert game.undo_left == 0
    assert game.table()["waste"] == 50 and game.table()["stock"] == 9  # back after action 50
    error = refusal(game, "U")
    assert (error.code, error.index) == ("nothing_to_undo", 251)


# ---------------------------------------------------------------- winning


def _clean_win_log() -> str:
    vectors = GAME_VECTORS
    for line in vectors.read_text().splitlines():
        vector = json.loads(line)
        if vector.get("won"):
            return str(vector["log"])
    raise AssertionError("the vectors hold a won game")


def test_a_clean_win_scores_1220_plus_five_per_waste_card_played_to_a_column() -> None:
    log = _clean_win_log()
    game = replay("EH1-N-AAAAAAE", log)
    tokens = log.split()
    to_columns = sum(1 for t in tokens if t.upper().startswith("W") and t[1:].isdigit())
    assert game.is_won and game.table()["won"]
    assert not any(t.upper().startswith("F") for t in tokens)  # no card taken back
    assert game.score == 1220 + 5 * to_columns == 1340
    assert all(f["count"] == 13 for f in game.table()["foundations"])


@pytest.mark.parametrize("token", ["S", "U", "F11", "xx"])
def test_nothing_is_accepted_after_the_win(token: str) -> None:
    game = replay("EH1-N-AAAAAAE", _clean_win_log())
    if token == "xx":
        with pytest.raises(InvalidActionError):
            game.play(token)
        return
    error = refusal(game, token)
    assert error.code == "game_over"
    assert list(game.legal_actions()) == []


def test_a_log_that_goes_on_after_the_win_is_refused_there() -> None:
    log = _clean_win_log()
    with pytest.raises(IllegalActionError) as refused:
        replay("EH1-N-AAAAAAE", log + " U")
    assert refused.value.index == len(log.split()) + 1
    assert refused.value.code == "game_over"


# ---------------------------------------------------------------- errors


def test_a_refusal_names_the_action_its_index_and_the_reason() -> None:
    with pytest.raises(IllegalActionError) as refused:
        replay("EH1-N-AAAAAAB", "S  s\n 37")
    error = refused.value
    assert isinstance(error, ValueError)
    assert (error.index, error.token, error.code) == (3, "37", "column_refuses")
    assert str(error) == f'action 3 "37": {error.reason}'
    assert error.as_dict() == {
        "index": 3,
        "token": "37",
        "reason": error.reason,
        "code": "column_refuses",
        "params": {"card": "4H", "target": "6H"},
    }


def test_unreadable_text_is_an_invalid_action_with_its_index() -> None:
    with pytest.raises(InvalidActionError) as refused:
        replay("EH1-N-AAAAAAB", "S s 3x S")
    error = refused.value
    assert isinstance(error, ValueError) and not isinstance(error, IllegalActionError)
    assert (error.index, error.token, error.code) == (3, "3x", "unreadable_action")


def test_the_first_refusal_wins_over_a_later_unreadable_token() -> None:
    with pytest.raises(IllegalActionError) as refused:
        replay("EH1-N-AAAAAAB", "37 ??")
    assert refused.value.index == 1


def test_play_reports_the_index_the_action_would_have_had() -> None:
    game = replay("EH1-N-AAAAAAB", "S S")
    with pytest.raises(IllegalActionError) as refused:
        game.play("37")
    assert refused.value.index == 3


def test_every_reason_has_an_english_template() -> None:
    codes = {
        "empty_stock_and_waste",
        "empty_source",
        "one_card_at_a_time",
        "king_only",
        "run_only_to_empty",
        "column_refuses",
        "foundation_refuses",
        "no_foundation_accepts",
        "foundation_to_foundation",
        "waste_is_not_a_destination",
        "same_column",
        "nothing_to_undo",
        "game_over",
        "unreadable_action",
    }
    assert set(REASONS) == codes


def test_play_log_counts_indexes_from_the_start_of_the_game() -> None:
    game = replay("EH1-N-AAAAAAB", "S S")
    with pytest.raises(IllegalActionError) as refused:
        game.play_log("S 37")
    assert (refused.value.index, refused.value.token) == (4, "37")
    assert game.log == ["S", "S", "S"]
