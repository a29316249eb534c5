"""AuditEntry moves to the audit app: state only, the table stays where it is."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("control", "0003_expire_schedule"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="AuditEntry")],
            database_operations=[],
        ),
    ]
