# The column is added at once (a constant default costs PostgreSQL no rewrite); the
# index is built without blocking submissions on PostgreSQL (CONCURRENTLY, outside a
# transaction: the games table is the largest there is).

from django.db import migrations, models

INDEX = models.Index(
    condition=models.Q(("fingerprint_pending", True)),
    fields=["id"],
    name="game_fingerprint_pending",
)


def _concurrently(schema_editor):
    """`CONCURRENTLY` where the database has it (PostgreSQL)."""
    return {"concurrently": True} if schema_editor.connection.vendor == "postgresql" else {}


def index_add(apps, schema_editor):
    schema_editor.add_index(apps.get_model("games", "Game"), INDEX, **_concurrently(schema_editor))


def index_remove(apps, schema_editor):
    schema_editor.remove_index(apps.get_model("games", "Game"), INDEX, **_concurrently(schema_editor))


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
