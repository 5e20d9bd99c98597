"""An index for the search of players by the beginning of their name.

The players' table belongs to Django's auth app; the search is the friends
page's (`leagues.selectors.player_search`), so this app keeps its index. It
holds the upper-cased names of active players in byte order ("C"): a
case-insensitive prefix (`UPPER(username) LIKE 'AB%'`) is one range of it, read
in its order up to the limit, whatever the database's own collation. SQLite,
for development only, keeps no such index.
"""

from django.conf import settings
from django.db import migrations

INDEX = "auth_user_name_prefix"


def _table(apps, schema_editor):
    user = apps.get_model(settings.AUTH_USER_MODEL)
    return schema_editor.quote_name(user._meta.db_table)


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f'CREATE INDEX {INDEX} ON {_table(apps, schema_editor)} '
        f'((UPPER(username::text)) COLLATE "C") WHERE is_active'
    )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("leagues", "0004_drop_league_entries"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(create_index, drop_index)]
