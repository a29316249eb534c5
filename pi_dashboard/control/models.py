"""Commands sent to agents, and the audit log of every control action."""

import uuid
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from pi_dashboard.control import removal
from pi_dashboard.fleet.models import Agent, Host, Model


class CommandKind(models.TextChoices):
    REMOVE_RULE = "remove_rule", "remove rule"
    RESET_PROTOCOL = "reset_protocol", "reset protocol calibration"
    FORGET_MODE = "forget_mode", "forget mode's teach statistics"
    PROBE = "probe", "probe on host"


class CommandState(models.TextChoices):
    PENDING = "pending", "pending"
    DELIVERED = "delivered", "delivered"
    APPLIED = "applied", "applied"
    FAILED = "failed", "failed"
    EXPIRED = "expired", "expired"
    # Applied and confirmed, then a later snapshot showed its effect undone.
    REVERTED = "reverted", "reverted"


# What the agent's ack says when its write did not survive a stale-lock takeover.
WRITTEN_BACK = "pi wrote its older copy back over the change"


class RevertCause(models.TextChoices):
    # The rule came back with a new learnedAt or fresh statistics: pi taught it again.
    RELEARNED = "relearned", "pi learned the rule again"
    # It came back exactly as it was: an older copy of the file was written back.
    OVERWRITTEN = "overwritten", "the file was overwritten"


TERMINAL_COMMAND_STATES = frozenset(
    {
        CommandState.APPLIED,
        CommandState.FAILED,
        CommandState.EXPIRED,
        CommandState.REVERTED,
    }
)
OPEN_COMMAND_STATES = frozenset({CommandState.PENDING, CommandState.DELIVERED})
# How long after an applied ack a snapshot is still expected to confirm it; live
# views stop polling after that (the agent ships a changed store within seconds).
CONFIRMATION_WINDOW = timedelta(minutes=15)


class Command(models.Model):
    """An action for the agent on one host to carry out on pi's state.

    PostgreSQL is the source of truth: agents pull pending commands and ack them.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="commands")
    model = models.ForeignKey(Model, on_delete=models.CASCADE, related_name="commands")
    kind = models.CharField(max_length=32, choices=CommandKind.choices)
    # Kind-specific arguments, e.g. {"mode": "numberFromString"}.
    params = models.JSONField(default=dict, blank=True)
    state = models.CharField(
        max_length=16, choices=CommandState.choices, default=CommandState.PENDING
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)
    delivered_to = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="commands"
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    # What the host's entry showed at creation, for confirmation (effects.baseline).
    baseline = models.JSONField(default=dict, blank=True)
    # Set when a snapshot taken after the command was applied shows its effect.
    confirmed_at = models.DateTimeField(null=True, blank=True)
    # Set when a later snapshot undid the effect (state reverted), with what undid it.
    reverted_at = models.DateTimeField(null=True, blank=True)
    revert_cause = models.CharField(
        max_length=16, choices=RevertCause.choices, blank=True, default=""
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Agent poll: a host's open commands, oldest first.
            models.Index(
                fields=["host", "state", "created_at"], name="command_host_state"
            ),
            # Expiry sweep: open commands past their deadline.
            models.Index(fields=["state", "expires_at"], name="command_state_expiry"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.model_id}@{self.host_id} ({self.state})"

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_COMMAND_STATES

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_COMMAND_STATES

    @property
    def awaits_confirmation(self) -> bool:
        """Applied, not yet confirmed, and a snapshot may still come to confirm it."""
        if self.state != CommandState.APPLIED or self.confirmed_at is not None:
            return False
        finished = self.finished_at or self.created_at
        return timezone.now() - finished < CONFIRMATION_WINDOW

    @property
    def revert_reason(self) -> str:
        """What undid the command, in words (state reverted)."""
        if self.result.get("write_survived") is False:
            return WRITTEN_BACK
        if self.revert_cause:
            return str(RevertCause(self.revert_cause).label)
        return "a later snapshot no longer shows it"

    @property
    def nothing_to_remove_reason(self) -> str:
        """Why pi removed nothing (its ack said `removed: false`)."""
        return removal.nothing_removed_reason(self)

    @property
    def is_settled(self) -> bool:
        """Nothing about this command will change any more: live views stop polling."""
        return self.is_terminal and not self.awaits_confirmation
