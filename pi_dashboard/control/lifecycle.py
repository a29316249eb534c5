"""A command after its creation: delivery to the agent, ack, expiry, confirmation.

pending → delivered → applied | failed; pending/delivered → expired; applied commands
are then confirmed when a snapshot shows their effect. Every transition is audited.
Callers use these through `control.services`.
"""

import threading
import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.control import effects, reverts, selectors, wakeup
from pi_dashboard.control.models import OPEN_COMMAND_STATES, Command, CommandState
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.lib.errors import Conflict, DomainError, NotFound

ACK_STATUSES = (CommandState.APPLIED, CommandState.FAILED)
EXPIRE_BATCH = 1000
# A waiting long-poll holds a request thread; past this many in one process, polls
# answer at once (the agent polls again after its interval) so pages stay served.
_long_poll_slots = threading.BoundedSemaphore(settings.PI_LONG_POLL_MAX_CONCURRENT)


class CommandExpired(Conflict):
    code = "expired"


def commands_pull(*, agent: Agent, wait_seconds: float) -> list[Command]:
    """The open commands of the agent's host, marking pending ones delivered.

    With `wait_seconds` > 0 and nothing to hand out, waits (outside any transaction)
    until a command appears or the time is up.
    """
    host_id = agent.host_id
    if host_id is None:
        raise Conflict(
            "This agent is bound to no pi host yet: send a heartbeat first.",
            code="agent_not_bound",
        )
    fleet_services.agent_contact(agent=agent)
    commands = _commands_claim(agent=agent, host_id=host_id)
    if commands or wait_seconds <= 0:
        return commands
    if not _long_poll_slots.acquire(blocking=False):
        return commands
    try:
        wakeup.wait_for(
            host_id=host_id,
            timeout=wait_seconds,
            ready=lambda: selectors.command_open_for_host(host_id=host_id).exists(),
        )
    finally:
        _long_poll_slots.release()
    return _commands_claim(agent=agent, host_id=host_id)


@transaction.atomic
def _commands_claim(*, agent: Agent, host_id: int) -> list[Command]:
    commands = list(
        selectors.command_open_for_host(host_id=host_id)
        .select_related("host", "model")
        .select_for_update(of=("self",))
    )
    pending = [c for c in commands if c.state == CommandState.PENDING]
    if not pending:
        return commands
    now = timezone.now()
    Command.objects.filter(pk__in=[c.pk for c in pending]).update(
        state=CommandState.DELIVERED, delivered_at=now, delivered_to=agent
    )
    for command in pending:
        command.state = CommandState.DELIVERED
        command.delivered_at = now
        command.delivered_to = agent
    AuditEntry.objects.bulk_create(
        _command_audit_entry(
            c,
            label=_agent_label(agent),
            action="command.delivered",
            outcome=AuditOutcome.OK,
            agent=str(agent.pk),
        )
        for c in pending
    )
    return commands


def _agent_label(agent: Agent) -> str:
    return f"agent:{agent.name}"


def _command_audit_entry(
    command: Command, *, label: str, action: str, outcome: AuditOutcome, **detail: Any
) -> AuditEntry:
    """An unsaved audit entry for a transition made by an agent or the system."""
    return AuditEntry(
        actor_label=label,
        action=action,
        outcome=outcome,
        host_id=command.host_id,
        model_id=command.model_id,
        command=command,
        detail={"kind": command.kind, "params": command.params, **detail},
    )


def command_ack(
    *,
    agent: Agent,
    command_id: uuid.UUID,
    status: str,
    result: dict[str, Any],
    detail: str,
) -> Command:
    """Record the agent's outcome. Acking twice with the same status is harmless."""
    known = (
        Command.objects.select_related("host", "model")
        .filter(pk=command_id, host_id=agent.host_id)
        .first()
        if agent.host_id is not None
        else None
    )
    with audit.refusals_audited(
        actor=None,
        label=_agent_label(agent),
        action="command.ack",
        host=known.host if known else None,
        model=known.model if known else None,
        detail={"command": str(command_id), "status": status},
    ):
        if known is None:
            raise NotFound(
                f"No command {command_id} for this agent's host.", code="not_found"
            )
        try:
            return _command_ack(
                agent=agent,
                command_id=known.pk,
                status=status,
                result=result,
                detail=detail,
            )
        except CommandExpired:
            commands_expire(ids=[known.pk])
            raise


@transaction.atomic
def _command_ack(
    *,
    agent: Agent,
    command_id: uuid.UUID,
    status: str,
    result: dict[str, Any],
    detail: str,
) -> Command:
    if status not in ACK_STATUSES:
        raise DomainError(
            f"status must be applied or failed, not {status!r}.", code="invalid_status"
        )
    command = (
        Command.objects.select_for_update(of=("self",))
        .select_related("host", "model")
        .get(pk=command_id)
    )
    _check_ackable(command=command, status=status)
    if command.is_terminal:  # the same ack again: harmless, nothing changes
        _ack_audit(agent=agent, command=command, detail=detail, repeated=True)
        return command
    now = timezone.now()
    command.state = status
    command.finished_at = now
    command.result = result
    command.error = detail if status == CommandState.FAILED else ""
    command.delivered_at = command.delivered_at or now
    command.delivered_to_id = command.delivered_to_id or agent.pk
    command.save()
    _ack_audit(agent=agent, command=command, detail=detail, repeated=False)
    if status == CommandState.APPLIED and result.get("write_survived") is False:
        # After a stale-lock takeover pi wrote its older copy back (13.2).
        reverts.command_revert_at_ack(command=command)
    elif status == CommandState.APPLIED:
        _confirm_from_current_entry(command=command)
    return command


def _check_ackable(*, command: Command, status: str) -> None:
    """Refuse an ack of an expired command, or one contradicting an earlier ack."""
    deadline = f"{command.expires_at:%Y-%m-%d %H:%M:%S} UTC"
    if command.state == CommandState.EXPIRED:
        raise CommandExpired(
            f"Command {command.pk} expired at {deadline}; it must not be applied."
        )
    # A reverted command was applied: the agent repeating its applied ack is harmless.
    acked = (
        CommandState.APPLIED
        if command.state == CommandState.REVERTED
        else command.state
    )
    if command.is_terminal and acked != status:
        raise Conflict(
            f"Command {command.pk} was already acked as {command.state}.",
            code="already_acked",
        )
    if command.is_open and command.expires_at <= timezone.now():
        raise CommandExpired(
            f"Command {command.pk} expired at {deadline}, before this ack arrived."
        )


def _ack_audit(*, agent: Agent, command: Command, detail: str, repeated: bool) -> None:
    audit.audit_log(
        actor=None,
        label=_agent_label(agent),
        action="command.ack",
        outcome=(
            AuditOutcome.OK
            if command.state == CommandState.APPLIED
            else AuditOutcome.FAILED
        ),
        host=command.host,
        model=command.model,
        command=command,
        detail={
            "kind": command.kind,
            "params": command.params,
            "status": command.state,
            "result": command.result,
            "detail": detail[:2000],
            "repeated": repeated,
        },
    )


def _confirm_from_current_entry(*, command: Command) -> None:
    """Confirm at once if a snapshot received after delivery already shows the effect.

    The agent may ship the rewritten store before its ack arrives; that snapshot's
    confirmation call then found the command not yet applied.
    """
    host_model = HostModel.objects.filter(
        host_id=command.host_id, model_id=command.model_id
    ).first()
    if host_model is None or command.delivered_at is None:
        return
    if host_model.updated_at >= command.delivered_at and effects.effect_shown(
        command, host_model.entry
    ):
        command_confirm(command=command, via="ack")


@transaction.atomic
def commands_expire(*, ids: list[uuid.UUID] | None = None) -> int:
    """Expire open commands past their deadline (all, or only `ids`). Returns how many.

    Run every minute by celery beat; safe to run twice at once (skip_locked).
    """
    now = timezone.now()
    due = Command.objects.select_for_update(skip_locked=True).filter(
        state__in=OPEN_COMMAND_STATES, expires_at__lte=now
    )
    if ids is not None:
        due = due.filter(pk__in=ids)
    rows = list(due.order_by("expires_at")[:EXPIRE_BATCH])
    if not rows:
        return 0
    Command.objects.filter(pk__in=[c.pk for c in rows]).update(
        state=CommandState.EXPIRED,
        finished_at=now,
        error="Expired: no agent of the host acked it in time.",
    )
    AuditEntry.objects.bulk_create(
        _command_audit_entry(
            c,
            label="system",
            action="command.expired",
            outcome=AuditOutcome.FAILED,
            was=c.state,
            expires_at=str(c.expires_at),
        )
        for c in rows
    )
    return len(rows)


@transaction.atomic
def commands_confirm_from_snapshot(
    *, host: Host, model: Model, entry: dict[str, Any], taken_at: datetime
) -> int:
    """Mark applied commands whose effect `entry` (a newer snapshot) shows as confirmed.

    Called by snapshot ingest for every host × model it applies (the agent's newest
    snapshot, whatever its `at`). Returns how many. `taken_at` (the entry's `at`,
    from the host's clock) is only recorded: probes compare with the verdict on
    record at creation instead (effects.baseline). A confirmed effect that a later
    snapshot undoes is handled by control.reverts.
    """
    applied = Command.objects.select_for_update().filter(
        host=host, model=model, state=CommandState.APPLIED, confirmed_at__isnull=True
    )
    confirmed = [c for c in applied if effects.effect_shown(c, entry)]
    for command in confirmed:
        command_confirm(command=command, via="snapshot", taken_at=taken_at)
    return len(confirmed)


def command_confirm(
    *, command: Command, via: str, taken_at: datetime | None = None
) -> None:
    """Record that pi's store shows the command's effect (the caller holds the row)."""
    command.confirmed_at = timezone.now()
    command.save(update_fields=["confirmed_at"])
    _command_audit_entry(
        command,
        label="system",
        action="command.confirmed",
        outcome=AuditOutcome.OK,
        via=via,
        snapshot_at=taken_at.isoformat() if taken_at else None,
    ).save()
