"""Drop the single-column foreign-key indexes of the line tables that others cover.

eventrecord_unique_content and corpusrecord_unique_content start with host_id,
event_model_ts with model_id: these only cost a write per stored line. (The corpus
keeps its model_id index: no other one starts with it.) As in 0009, only the
indexes go; Django's AlterField would re-create and re-validate the foreign keys.
"""

import django.db.models.deletion
from django.db import migrations, models

# (index, table, column) as Django named them when it created them.
INDEXES = (
    ("ingest_eventrecord_host_id_80d88812", "ingest_eventrecord", "host_id"),
    ("ingest_eventrecord_model_id_57aeb9d7", "ingest_eventrecord", "model_id"),
    ("ingest_corpusrecord_host_id_6009830f", "ingest_corpusrecord", "host_id"),
)


class Migration(migrations.Migration):
    dependencies = [
        ("fleet", "0003_hostmodel_entry_original"),
        ("ingest", "0009_rollup_fk_indexes_covered"),
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
                    model_name="eventrecord",
                    name="host",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="fleet.host",
                    ),
                ),
                migrations.AlterField(
                    model_name="eventrecord",
                    name="model",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="fleet.model",
                    ),
                ),
                migrations.AlterField(
                    model_name="corpusrecord",
                    name="host",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="corpus",
                        to="fleet.host",
                    ),
                ),
            ],
        )
    ]
