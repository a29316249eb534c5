"""The audit log's one table."""

from django.conf import settings
from django.db import models


class AuditOutcome(models.TextChoices):
    OK = "ok", "ok"
    REFUSED = "refused", "refused"
    FAILED = "failed", "failed"


class AuditEntry(models.Model):
    """Who did what, to which host and model, when, and how it ended."""

    at = models.DateTimeField(auto_now_add=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # Username, token name or agent name at the time (kept when the actor is deleted).
    actor_label = models.CharField(max_length=200)
    action = models.CharField(max_length=64)
    outcome = models.CharField(max_length=16, choices=AuditOutcome.choices)
    # Models by name: every app writes the log, so the log imports none of them.
    host = models.ForeignKey(
        "fleet.Host", null=True, blank=True, on_delete=models.SET_NULL
    )
    model = models.ForeignKey(
        "fleet.Model", null=True, blank=True, on_delete=models.SET_NULL
    )
    command = models.ForeignKey(
        "control.Command",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="audit",
    )
    detail = models.JSONField(default=dict, blank=True)
    ip_address = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        # The table kept its name when the model moved here from control.
        db_table = "control_auditentry"
        ordering = ["-at", "-id"]
        indexes = [
            # Audit page, newest first, filtered by action or outcome.
            models.Index(fields=["-at"], name="audit_at"),
            models.Index(fields=["action", "-at"], name="audit_action_at"),
        ]

    def __str__(self) -> str:
        return (
            f"{self.at:%Y-%m-%d %H:%M} {self.actor_label} {self.action} {self.outcome}"
        )

    @property
    def summary(self) -> str:
        """One line for lists: why it was refused, else what was done."""
        from pi_dashboard.audit.describe import audit_summary

        return audit_summary(action=self.action, detail=self.detail)
