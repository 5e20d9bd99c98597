from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0003_first_game_of_the_day_is_ranked"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="game",
            constraint=models.UniqueConstraint(
                condition=models.Q(("ranked", True)),
                fields=("player", "daily"),
                name="game_one_ranked_per_player_and_day",
            ),
        ),
    ]
