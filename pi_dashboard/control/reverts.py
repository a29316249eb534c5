"""Commands whose confirmed effect a later snapshot undid: reverted, and by what.

The owning agent's newest snapshot is the truth for its host (ingest.snapshots), so
a rule an operator removed can come back: pi learned it again (a new `addedAt`,
fresh statistics, a new calibration), or an older copy of the file was written back
(pi holding its lock past the stale time, a restored backup) and it returns exactly
as it was. Either way the dashboard must say so and offer to do it again.
"""

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.control import effects
from pi_dashboard.control.models import (
    WRITTEN_BACK,
    Command,
    CommandKind,
    CommandState,
    RevertCause,
)
from pi_dashboard.fleet.models import Host, Model
from pi_dashboard.lib.isotime import parse_iso


def baseline(
    kind: str, params: dict[str, Any], entry: dict[str, Any]
) -> dict[str, Any]:
    """What the command undoes, as the entry held it at creation (see revert_cause)."""
    profile = entry.get("profile")
    profile = profile if isinstance(profile, dict) else {}
    if kind == CommandKind.REMOVE_RULE:
        rules = profile.get("rules")
        same_mode = [
            rule
            for rule in (rules if isinstance(rules, list) else [])
            if isinstance(rule, dict) and rule.get("mode") == params["mode"]
        ]
        stats = profile.get("teachStats")
        return {
            "rule": same_mode[0] if same_mode else None,
            # Read when pi answers removed:false: was it retired as ineffective?
            "stats": stats.get(params["mode"]) if isinstance(stats, dict) else None,
        }
    if kind == CommandKind.FORGET_MODE:
        stats = profile.get("teachStats")
        return {"stats": stats.get(params["mode"]) if isinstance(stats, dict) else None}
    if kind == CommandKind.RESET_PROTOCOL:
        return {"protocol": profile.get("protocol")}
    return {}


def revert_cause(command: Command, entry: dict[str, Any]) -> RevertCause:
    """Relearned when what came back differs from what the command undid."""
    now_there = baseline(command.kind, command.params, entry)
    key = next(iter(now_there), None)
    if key is None:  # a probe's newer verdict gone: only an older file does that
        return RevertCause.OVERWRITTEN
    if key in command.baseline:
        before, after = command.baseline[key], now_there[key]
        if key == "rule" and isinstance(before, dict) and isinstance(after, dict):
            # Fired again since it came back is still the same rule; pi re-teaching
            # it stamps a new addedAt.
            before, after = before.get("addedAt"), after.get("addedAt")
        return RevertCause.OVERWRITTEN if before == after else RevertCause.RELEARNED
    # Created before baselines were kept: a rule added after the command is new.
    rule = now_there.get("rule")
    added = parse_iso(rule.get("addedAt")) if isinstance(rule, dict) else None
    if added is not None and added > command.created_at:
        return RevertCause.RELEARNED
    return RevertCause.OVERWRITTEN


@transaction.atomic
def commands_revert_from_snapshot(
    *, host: Host, model: Model, entry: dict[str, Any], taken_at: datetime
) -> int:
    """Mark confirmed commands whose effect `entry` no longer shows as reverted.

    Called by snapshot ingest for every host × model it applies. Only the newest
    confirmed command of each kind and parameters counts: older ones were overtaken.
    Returns how many were reverted.
    """
    confirmed = (
        Command.objects.select_for_update()
        .filter(
            host=host,
            model=model,
            state=CommandState.APPLIED,
            confirmed_at__isnull=False,
        )
        .order_by("-confirmed_at", "-created_at")
    )
    seen: set[tuple[str, str]] = set()
    reverted = 0
    for command in confirmed:
        key = (command.kind, repr(sorted(command.params.items())))
        if key in seen:
            continue
        seen.add(key)
        if effects.effect_shown(command, entry):
            continue
        _revert(command, cause=revert_cause(command, entry), taken_at=taken_at)
        reverted += 1
    return reverted


def command_revert_at_ack(*, command: Command) -> None:
    """The agent took over pi's stale lock and its write did not survive: pi wrote
    its older copy back. The command must not stand as applied (the caller holds the
    row, in its transaction)."""
    _revert(command, cause=RevertCause.OVERWRITTEN, taken_at=None, reason=WRITTEN_BACK)


def _revert(
    command: Command,
    *,
    cause: RevertCause,
    taken_at: datetime | None,
    reason: str | None = None,
) -> None:
    command.state = CommandState.REVERTED
    command.reverted_at = timezone.now()
    command.revert_cause = cause
    command.save(update_fields=["state", "reverted_at", "revert_cause"])
    said = reason or f"A later snapshot undid it: {cause.label}"
    audit.audit_log(
        actor=None,
        label="system",
        action="command.reverted",
        outcome=AuditOutcome.FAILED,
        host=command.host,
        model=command.model,
        command=command,
        detail={
            "kind": command.kind,
            "params": command.params,
            "cause": cause.value,
            "reason": f"{said}.",
            "snapshot_at": taken_at.isoformat() if taken_at else None,
        },
    )
