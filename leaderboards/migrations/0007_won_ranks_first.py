"""A win ranks above a loss on the score board (docs/RULES.md 9.3).

A won game's `key1` on the score board becomes `-score - WON_AHEAD`: every
won entry moves to a bucket of its own below every loss. Its buckets follow
as count changes (taken from the old bucket, added to the new one), which the
fold adds to the counters like any submission's. The closed days whose order
changes (a loss scored at least as much as a win) have their final ranks
numbered again in the new order. The logic is frozen here, as of this
migration; running it again changes nothing.
"""

from django.db import migrations

# leaderboards.models.WON_AHEAD as of this migration.
WON_AHEAD = 1_000_000

# The won entries of the score board still keyed the old way.
_OLD_WINS = "FROM leaderboards_boardentry WHERE board = 'score' AND won AND key1 > %s"

_BUCKET_MOVES = f"""
INSERT INTO leaderboards_boardcountchange (date, board, key1, players)
SELECT date, board, key1, -count(*) {_OLD_WINS} GROUP BY date, board, key1
UNION ALL
SELECT date, board, key1 - %s, count(*) {_OLD_WINS} GROUP BY date, board, key1
"""

# Days whose order changes: a loss that scored at least as much as a win.
_DAYS_REORDERED = """
SELECT date FROM leaderboards_boardentry WHERE board = 'score'
GROUP BY date
HAVING MAX(CASE WHEN won THEN NULL ELSE score END) >= MIN(CASE WHEN won THEN score END)
"""

_REKEY = (
    "UPDATE leaderboards_boardentry SET key1 = key1 - %s"
    " WHERE board = 'score' AND won AND key1 > %s"
)

# The final ranks of one closed day's score board, numbered again in board order.
_FINAL_RANKS = """
UPDATE leaderboards_finalrank SET rank = ranked.place
FROM (
    SELECT e.id, row_number() OVER (
        ORDER BY e.key1, e.key2, e.duration_ms, e.submitted_at, e.game_id
    ) AS place
    FROM leaderboards_boardentry e JOIN leaderboards_finalrank f ON f.entry_id = e.id
    WHERE e.date = %s AND e.board = 'score'
) ranked
WHERE leaderboards_finalrank.entry_id = ranked.id AND leaderboards_finalrank.rank <> ranked.place
"""


def wins_first(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(_DAYS_REORDERED)
        reordered = [row[0] for row in cursor.fetchall()]
        cursor.execute(_BUCKET_MOVES, [-WON_AHEAD, WON_AHEAD, -WON_AHEAD])
        cursor.execute(_REKEY, [WON_AHEAD, -WON_AHEAD])
        for date in reordered:
            cursor.execute(_FINAL_RANKS, [date])


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboards", "0006_board_count_changes"),
    ]

    operations = [
        migrations.RunPython(wins_first, migrations.RunPython.noop, elidable=False),
    ]
