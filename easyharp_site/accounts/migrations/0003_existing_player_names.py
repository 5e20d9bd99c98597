"""Store the look-alike keys of the players who signed up before names had them.

Players are taken in sign-up order; a key already held by an earlier player is
left out (that later look-alike keeps its name, but no new name can be made to
look like it through that key), and counted in the migration's output.
"""

from django.db import migrations

from easyharp_site.accounts.names import name_keys


def store_keys(apps, schema_editor):
    user_model = apps.get_model("auth", "User")
    player_name = apps.get_model("accounts", "PlayerName")
    taken = set(player_name.objects.values_list("key", flat=True))
    skipped = 0
    for player_id, username in user_model.objects.order_by("pk").values_list("pk", "username"):
        keys = name_keys(username)
        skipped += len(keys & taken)
        player_name.objects.bulk_create(
            [player_name(player_id=player_id, key=key) for key in keys - taken]
        )
        taken |= keys
    if skipped:
        print(f"\n  {skipped} look-alike name keys already held by an earlier player were left out")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_player_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(store_keys, migrations.RunPython.noop)]
