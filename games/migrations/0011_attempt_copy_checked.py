# The copy check reads each attempt of a closed day once (games.copies). The
# attempts stored before it are counted as read: added as True, then False for
# new ones.

from django.db import migrations, models

HELP = (
    "Its day closed and the copy check read it: a game of the day that followed it, "
    "never submitted, is a copy of it (games.copies)."
)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0010_game_device_address_rehearsal"),
    ]

    operations = [
        migrations.AddField(
            model_name="attempt",
            name="copy_checked",
            field=models.BooleanField(default=True, help_text=HELP),
        ),
        migrations.AlterField(
            model_name="attempt",
            name="copy_checked",
            field=models.BooleanField(default=False, help_text=HELP),
        ),
        migrations.AddIndex(
            model_name="attempt",
            index=models.Index(
                condition=models.Q(("copy_checked", False)),
                fields=["id"],
                name="attempt_copy_unchecked",
            ),
        ),
    ]
