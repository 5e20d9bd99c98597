"""A win ranks above a loss on the score board (leaderboards 0007): the settled days
whose order changed (a loss scored at least as much as a win) go stale, so the
standings job settles them again from their boards as they now stand and ranks
their weeks and months again."""

from django.db import migrations

_STALE = """
UPDATE leagues_settledday SET stale = %s WHERE date IN (
    SELECT date FROM leaderboards_boardentry WHERE board = 'score'
    GROUP BY date
    HAVING MAX(CASE WHEN won THEN NULL ELSE score END) >= MIN(CASE WHEN won THEN score END)
)
"""


def reordered_days_stale(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(_STALE, [True])


class Migration(migrations.Migration):
    dependencies = [
        ("leagues", "0005_player_name_prefix_index"),
        ("leaderboards", "0007_won_ranks_first"),
    ]

    operations = [
        migrations.RunPython(reordered_days_stale, migrations.RunPython.noop, elidable=False),
    ]
