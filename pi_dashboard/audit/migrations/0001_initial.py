"""AuditEntry, moved from control: state only, it keeps control's table and indexes."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("control", "0004_auditentry_moves_to_audit"),
        ("fleet", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AuditEntry",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("at", models.DateTimeField(auto_now_add=True)),
                        ("actor_label", models.CharField(max_length=200)),
                        ("action", models.CharField(max_length=64)),
                        (
                            "outcome",
                            models.CharField(
                                choices=[
                                    ("ok", "ok"),
                                    ("refused", "refused"),
                                    ("failed", "failed"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("detail", models.JSONField(blank=True, default=dict)),
                        (
                            "ip_address",
                            models.GenericIPAddressField(blank=True, null=True),
                        ),
                        (
                            "actor",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "host",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to="fleet.host",
                            ),
                        ),
                        (
                            "model",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to="fleet.model",
                            ),
                        ),
                        (
                            "command",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="audit",
                                to="control.command",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "control_auditentry",
                        "ordering": ["-at", "-id"],
                        "indexes": [
                            models.Index(fields=["-at"], name="audit_at"),
                            models.Index(
                                fields=["action", "-at"], name="audit_action_at"
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
