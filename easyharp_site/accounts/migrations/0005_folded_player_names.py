"""Store the key of each existing player's *folded* name, which sign-up now compares too.

A fold writes every letter as its base letter (`ħ`, `ạ` are `h`, `a`), so that
a new `hannah` meets an older `ħannah`. Players are taken in sign-up order; a
key already held by an earlier player is left out, as in 0003. The fold is a
frozen copy of `names.name_fold` as this migration was written.
"""

import re
import unicodedata

import disarm
from django.db import migrations

LATIN_LETTER = re.compile(
    r"LATIN (?:SMALL|CAPITAL) LETTER (?:DOTLESS )?([A-Z]{1,2}|SHARP S|ETH|THORN)( WITH .+)?"
)


def fold(username):
    folded = []
    for char in username:
        latin = LATIN_LETTER.fullmatch(unicodedata.name(char, ""))
        if latin is not None and latin[2] is not None and len(latin[1]) <= 2:
            folded.append(latin[1])
            continue
        folded.extend(
            mark for mark in unicodedata.normalize("NFD", char) if not unicodedata.combining(mark)
        )
    return "".join(folded).casefold()


def store_folded_keys(apps, schema_editor):
    user_model = apps.get_model("auth", "User")
    player_name = apps.get_model("accounts", "PlayerName")
    taken = set(player_name.objects.values_list("key", flat=True))
    for player_id, username in user_model.objects.order_by("pk").values_list("pk", "username"):
        key = disarm.skeleton_key(fold(username), digit_policy="tr39")
        if key not in taken and len(key) <= 255:
            player_name.objects.create(player_id=player_id, key=key)
            taken.add(key)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0004_account_settings")]

    operations = [migrations.RunPython(store_folded_keys, migrations.RunPython.noop)]
