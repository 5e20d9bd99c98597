# The column is added at once (a constant default costs PostgreSQL no rewrite); the
# index is built without blocking submissions on PostgreSQL (CONCURRENTLY, outside a
# transaction: the games table is the largest there is).

from django.db import migrations, models

INDEX = models.Index(
    condition=models.Q(("fingerprint_pending", True)),
    fields=["id"],
    name="game_fingerprint_pending",
)


def index_add(apps, schema_editor):
    game = apps.get_model("games", "Game")
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.add_index(game, INDEX, concurrently=True)
    else:
        schema_editor.add_index(game, INDEX)


def index_remove(apps, schema_editor):
    game = apps.get_model("games", "Game")
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.remove_index(game, INDEX, concurrently=True)
    else:
        schema_editor.remove_index(game, INDEX)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("games", "0008_attempt_server_times"),
    ]

    operations = [
        migrations.AddField(
            model_name="game",
            name="fingerprint_pending",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="A daily game whose tables the copy check has not read yet: the job "
                "(games.copies.pending_fingerprints_check) compares a ranked one with the "
                "earlier games and keeps its sketch.",
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddIndex(model_name="game", index=INDEX)],
            database_operations=[migrations.RunPython(index_add, index_remove)],
        ),
    ]
