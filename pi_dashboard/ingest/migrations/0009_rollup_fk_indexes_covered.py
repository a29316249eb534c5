"""Drop the single-column foreign-key indexes of the rollup tables.

rollup_host / rollup_model (and the daily ones) start with the same column, so
these only cost a write per new cell. Only the indexes go: Django's AlterField
would also drop and re-create (and re-validate) the foreign keys.
"""

import django.db.models.deletion
from django.db import migrations, models

# (index, table, column) as Django named them when it created them.
INDEXES = (
    ("ingest_rollup_host_id_6cd9a818", "ingest_rollup", "host_id"),
    ("ingest_rollup_model_id_e314f68f", "ingest_rollup", "model_id"),
    ("ingest_dailyrollup_host_id_d01f46aa", "ingest_dailyrollup", "host_id"),
    ("ingest_dailyrollup_model_id_28e68e2b", "ingest_dailyrollup", "model_id"),
)


def _foreign_key(to: str, related_name: str, *, nullable: bool) -> models.ForeignKey:
    return models.ForeignKey(
        blank=nullable,
        db_index=False,
        null=nullable,
        on_delete=django.db.models.deletion.CASCADE,
        related_name=related_name,
        to=to,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("fleet", "0003_hostmodel_entry_original"),
        ("ingest", "0008_daily_rollup_outcome_index"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    [f'DROP INDEX IF EXISTS "{name}"' for name, _, _ in INDEXES],
                    reverse_sql=[
                        f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}")'
                        for name, table, column in INDEXES
                    ],
                )
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="rollup",
                    name="host",
                    field=_foreign_key("fleet.host", "rollups", nullable=False),
                ),
                migrations.AlterField(
                    model_name="rollup",
                    name="model",
                    field=_foreign_key("fleet.model", "rollups", nullable=True),
                ),
                migrations.AlterField(
                    model_name="dailyrollup",
                    name="host",
                    field=_foreign_key("fleet.host", "daily_rollups", nullable=False),
                ),
                migrations.AlterField(
                    model_name="dailyrollup",
                    name="model",
                    field=_foreign_key("fleet.model", "daily_rollups", nullable=True),
                ),
            ],
        )
    ]
