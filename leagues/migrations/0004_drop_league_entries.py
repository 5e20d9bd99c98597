# A league's board is the day's board narrowed to its members, read from the
# day's entries themselves: the league's own copy of them goes.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("leagues", "0003_league_entries"),
    ]

    operations = [
        migrations.DeleteModel(name="LeagueEntry"),
    ]
