"""Commands: creation, the one-click actions, expiry and confirmation (#3, #4).

State machine: pending → delivered → applied | failed; pending/delivered → expired.
Every call is audited. A refused call raises a DomainError and is audited as refused
*after* its transaction rolled back (`audit.refusals_audited` wraps the transaction).
What happens to a command after it was created (delivery, ack, expiry,
confirmation) is in `control.lifecycle`, re-exported here so that every caller
writes `services.<name>`.
"""

from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.control import effects, reverts, selectors, wakeup
from pi_dashboard.control.lifecycle import (
    command_ack,
    commands_confirm_from_snapshot,
    commands_expire,
    commands_pull,
)
from pi_dashboard.control.models import (
    Command,
    CommandKind,
    CommandState,
)
from pi_dashboard.control.reverts import commands_revert_from_snapshot
from pi_dashboard.control.selectors import removals_in_flight
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Host, HostModel, Model
from pi_dashboard.lib import retry
from pi_dashboard.lib.errors import Conflict, DomainError

__all__ = [
    "action_probe_on_host",
    "action_remove_rule",
    "action_remove_rule_everywhere",
    "action_reset_protocol",
    "command_ack",
    "command_create",
    "command_retry",
    "commands_confirm_from_snapshot",
    "commands_expire",
    "commands_pull",
    "commands_revert_from_snapshot",
    "removals_in_flight",
]

# Parameters each kind takes (all required). The agent contract: docs/protocol.md.
KIND_PARAMS: dict[str, tuple[str, ...]] = {
    CommandKind.REMOVE_RULE: ("mode",),
    CommandKind.FORGET_MODE: ("mode",),
    CommandKind.RESET_PROTOCOL: (),
    CommandKind.PROBE: (),
}
MAX_MODE_LENGTH = 200


def command_create(
    *,
    actor: User | None,
    host: Host | str,
    model: Model | str,
    kind: str,
    params: dict[str, Any],
    ip_address: str | None = None,
) -> Command:
    """Queue `kind` for the agent of `host` on `model`, or return the same open one.

    `host` is a Host or a pi host id, `model` a Model or a model key.
    """
    host_obj = (
        host if isinstance(host, Host) else Host.objects.filter(pi_id=host).first()
    )
    model_obj = (
        model if isinstance(model, Model) else Model.objects.filter(key=model).first()
    )
    with audit.refusals_audited(
        actor=actor,
        action="command.create",
        host=host_obj,
        model=model_obj,
        detail={"host": str(host), "model": str(model), "kind": kind, "params": params},
        ip_address=ip_address,
    ):
        if host_obj is None:
            raise DomainError(
                f"No pi host {host!r} has reported to this dashboard.",
                code="unknown_host",
            )
        if (
            model_obj is None
            and kind == CommandKind.PROBE
            and _host_can_probe(host_obj)
        ):
            model_obj = _model_for_probe(str(model))
        if model_obj is None:
            raise DomainError(
                f"No model {model!r} is known to this dashboard.", code="unknown_model"
            )
        return retry.retry_on_conflict(
            partial(
                _command_create,
                actor=actor,
                host=host_obj,
                model=model_obj,
                kind=kind,
                params=params,
                ip_address=ip_address,
            )
        )


@transaction.atomic
def _command_create(
    *,
    actor: User | None,
    host: Host,
    model: Model,
    kind: str,
    params: dict[str, Any],
    ip_address: str | None,
) -> Command:
    clean = _clean_params(kind=kind, params=params)
    # The one lock order (fleet.services): the host, then its host × model row. The
    # latter serialises concurrent creations: two clicks cannot both pass the
    # duplicate check.
    fleet_services.host_lock(host_id=host.pk)
    host_model = (
        HostModel.objects.select_for_update().filter(host=host, model=model).first()
    )
    if host_model is None and not (kind == CommandKind.PROBE and _host_can_probe(host)):
        raise DomainError(
            f"Host {host.pi_id} has no entry for model {model.key}: "
            "its pi has stored nothing for that model.",
            code="unknown_host_model",
        )
    # A probe may name a model the host's store has never held (13.5).
    entry = host_model.entry if host_model is not None else {}
    if host_model is not None:
        _check_applicable(kind=kind, params=clean, host_model=host_model)
    existing = (
        selectors.command_open_for_host(host_id=host.pk)
        .filter(model=model, kind=kind, params=clean)
        .first()
    )
    if existing is not None:
        _audit_created(actor=actor, command=existing, ip_address=ip_address, dup=True)
        return existing
    command = Command.objects.create(
        host=host,
        model=model,
        kind=kind,
        params=clean,
        created_by=actor,
        expires_at=timezone.now() + timedelta(seconds=settings.PI_COMMAND_TTL_SECONDS),
        baseline={
            **effects.baseline(kind, entry),
            **reverts.baseline(kind, clean, entry),
        },
    )
    _audit_created(actor=actor, command=command, ip_address=ip_address, dup=False)
    transaction.on_commit(partial(wakeup.notify, host_id=host.pk))
    return command


def _host_can_probe(host: Host) -> bool:
    """The host's agent reports it can run pi's tool_probe: pi then probes any model
    its models.json knows, stored or not (pi answers for those it does not know)."""
    return any(
        isinstance(agent.capabilities, dict) and agent.capabilities.get("probe") is True
        for agent in host.agents.filter(revoked_at__isnull=True)
    )


def _model_for_probe(key: str) -> Model | None:
    """The Model for pi's key `provider/modelId`, created for a probe; None when the
    key is not one pi could have."""
    provider, _, model_id = key.partition("/")
    if not provider or not model_id or len(key) > 600 or len(provider) > 200:
        return None
    model, _ = Model.objects.get_or_create(
        key=key, defaults={"provider": provider, "model_id": model_id}
    )
    return model


def _audit_created(
    *, actor: User | None, command: Command, ip_address: str | None, dup: bool
) -> None:
    detail: dict[str, Any] = {"kind": command.kind, "params": command.params}
    if dup:
        # The same command was still open: nothing new was queued.
        detail["duplicate_of"] = str(command.pk)
    audit.audit_log(
        actor=actor,
        host=command.host,
        model=command.model,
        ip_address=ip_address,
        action="command.create",
        outcome=AuditOutcome.OK,
        command=command,
        detail=detail,
    )


def _clean_params(*, kind: str, params: dict[str, Any]) -> dict[str, Any]:
    if kind not in KIND_PARAMS:
        raise DomainError(
            f"Unknown command kind {kind!r}; use one of {', '.join(KIND_PARAMS)}.",
            code="invalid_kind",
        )
    if not isinstance(params, dict):
        raise DomainError("params must be a JSON object.", code="invalid_params")
    needed = KIND_PARAMS[kind]
    extra = sorted(set(params) - set(needed))
    if extra:
        raise DomainError(
            f"{kind} takes no parameter {', '.join(extra)}"
            + (f" (only {', '.join(needed)})." if needed else "."),
            code="invalid_params",
        )
    mode = params.get("mode")
    if "mode" in needed and (
        not isinstance(mode, str) or not mode.strip() or len(mode) > MAX_MODE_LENGTH
    ):
        raise DomainError(
            f"{kind} needs params.mode: the repair mode name, e.g. numberFromString.",
            code="invalid_params",
        )
    return {key: params[key] for key in needed}


def _check_applicable(
    *, kind: str, params: dict[str, Any], host_model: HostModel
) -> None:
    """Refuse a command that cannot do anything on the host's current entry."""
    where = f"host {host_model.host.pi_id} for {host_model.model.key}"
    if kind == CommandKind.REMOVE_RULE:
        modes = effects.rule_modes(host_model.entry)
        if params["mode"] not in modes:
            have = f"its rules are {', '.join(modes)}" if modes else "it has no rules"
            raise DomainError(
                f"There is no {params['mode']} rule on {where}; {have}.",
                code="rule_not_present",
            )
    if kind == CommandKind.RESET_PROTOCOL and not effects.has_protocol(
        host_model.entry
    ):
        raise DomainError(
            f"There is no text-protocol calibration on {where}; nothing to reset.",
            code="no_protocol",
        )


def action_remove_rule(
    *,
    actor: User,
    host_model: HostModel,
    mode: str,
    forget: bool,
    ip_address: str | None,
) -> list[Command]:
    """Remove one rule; with `forget`, also clear the mode's teach statistics.

    Without forgetting, pi re-adds the rule at the next recurrence
    (docs/pi-host-pitfalls.md §26).
    """
    kinds = [CommandKind.REMOVE_RULE] + ([CommandKind.FORGET_MODE] if forget else [])
    return _action(
        actor=actor,
        action="action.remove_rule",
        host_model=host_model,
        kinds=kinds,
        params={"mode": mode},
        ip_address=ip_address,
    )


def action_reset_protocol(
    *, actor: User, host_model: HostModel, reprobe: bool, ip_address: str | None
) -> list[Command]:
    """Reset the text-protocol calibration; with `reprobe`, probe again right after.

    pi does not recalibrate by itself after a reset (docs/pi-host-pitfalls.md §2).
    """
    kinds = [CommandKind.RESET_PROTOCOL] + ([CommandKind.PROBE] if reprobe else [])
    return _action(
        actor=actor,
        action="action.reset_protocol",
        host_model=host_model,
        kinds=kinds,
        params={},
        ip_address=ip_address,
    )


def action_probe_on_host(
    *, actor: User, host_model: HostModel, ip_address: str | None
) -> list[Command]:
    """Probe the model through pi on its host (RPC tool_probe with that model)."""
    return _action(
        actor=actor,
        action="action.probe",
        host_model=host_model,
        kinds=[CommandKind.PROBE],
        params={},
        ip_address=ip_address,
    )


def action_probe_model(
    *, actor: User, host: Host, model_key: str, ip_address: str | None
) -> list[Command]:
    """Probe any model on the host, stored there or not: pi probes every model its
    models.json knows (13.5). Refused (audited) where the agent cannot probe."""
    return [
        command_create(
            actor=actor,
            host=host,
            model=model_key,
            kind=CommandKind.PROBE,
            params={},
            ip_address=ip_address,
        )
    ]


def _action(
    *,
    actor: User,
    action: str,
    host_model: HostModel,
    kinds: list[CommandKind],
    params: dict[str, Any],
    ip_address: str | None,
) -> list[Command]:
    """Create `kinds` in order, all or none; each is audited as a command.create."""

    @transaction.atomic
    def create_all() -> list[Command]:
        return [
            command_create(
                actor=actor,
                host=host_model.host,
                model=host_model.model,
                kind=kind,
                params=params if KIND_PARAMS[kind] else {},
                ip_address=ip_address,
            )
            for kind in kinds
        ]

    with audit.refusals_audited(
        actor=actor,
        action=action,
        host=host_model.host,
        model=host_model.model,
        detail={"kinds": list(kinds), "params": params},
        ip_address=ip_address,
    ):
        return retry.retry_on_conflict(create_all)


def action_remove_rule_everywhere(
    *, actor: User, model: Model, mode: str, ip_address: str | None
) -> list[Command]:
    """Remove the `mode` rule on every host of `model` that has it."""
    with audit.refusals_audited(
        actor=actor,
        action="action.remove_rule_everywhere",
        model=model,
        detail={"mode": mode},
        ip_address=ip_address,
    ):
        return retry.retry_on_conflict(
            partial(
                _remove_rule_everywhere,
                actor=actor,
                model=model,
                mode=mode,
                ip_address=ip_address,
            )
        )


@transaction.atomic
def _remove_rule_everywhere(
    *, actor: User, model: Model, mode: str, ip_address: str | None
) -> list[Command]:
    host_models = list(
        HostModel.objects.select_related("host", "model")
        .filter(model=model, entry__profile__rules__contains=[{"mode": mode}])
        .order_by("host__pi_id")
    )
    if not host_models:
        raise DomainError(
            f"No host has a {mode} rule for {model.key}.", code="rule_not_present"
        )
    # Every host locked up front, ids ascending: the one lock order across hosts.
    for host_id in sorted(hm.host_id for hm in host_models):
        fleet_services.host_lock(host_id=host_id)
    return [
        command_create(
            actor=actor,
            host=hm.host,
            model=model,
            kind=CommandKind.REMOVE_RULE,
            params={"mode": mode},
            ip_address=ip_address,
        )
        for hm in host_models
    ]


# Commands worth doing again: their effect never came, or was undone.
RETRYABLE_STATES = (CommandState.REVERTED, CommandState.FAILED, CommandState.EXPIRED)


def command_retry(*, actor: User, command: Command, ip_address: str | None) -> Command:
    """Queue the same kind and parameters again, as a new command (audited)."""
    with audit.refusals_audited(
        actor=actor,
        action="command.retry",
        host=command.host,
        model=command.model,
        detail={"kind": command.kind, "params": command.params, "of": str(command.pk)},
        ip_address=ip_address,
    ):
        if command.state not in RETRYABLE_STATES:
            raise Conflict(
                f"Command {command.pk} is {command.state}: only a reverted, failed or "
                "expired command is retried.",
                code="not_retryable",
            )
        again = command_create(
            actor=actor,
            host=command.host,
            model=command.model,
            kind=command.kind,
            params=command.params,
            ip_address=ip_address,
        )
        audit.audit_log(
            actor=actor,
            action="command.retry",
            outcome=AuditOutcome.OK,
            host=command.host,
            model=command.model,
            command=again,
            detail={
                "kind": command.kind,
                "params": command.params,
                "retry_of": str(command.pk),
            },
            ip_address=ip_address,
        )
        return again
