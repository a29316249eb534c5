"""Writes to the fleet: agent tokens, heartbeats, and current state per host × model."""

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from pi_dashboard.audit.audit import audit_log
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.fleet import adaptation
from pi_dashboard.fleet.adaptation import StoreEntry
from pi_dashboard.fleet.auth import AGENT_TOKEN_PREFIX
from pi_dashboard.fleet.models import Agent, Change, Host, HostModel, Model
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import Conflict
from pi_dashboard.lib.isotime import parse_iso
from pi_dashboard.lib.tokens import token_display_prefix, token_generate, token_hash

MAX_HOST_ID = 200  # Host.pi_id
MAX_CORES = 2**31 - 1  # Host.cores (an integer column); pi allows up to 2**53 - 1
MAX_MODEL_KEY = 600  # Model.key


# --- agents and their tokens --------------------------------------------------------


@transaction.atomic
def agent_issue(*, name: str, actor: str) -> tuple[Agent, str]:
    """A new agent and its secret token (shown once; only its hash is kept)."""
    secret = token_generate(AGENT_TOKEN_PREFIX)
    agent = Agent.objects.create(
        name=name,
        token_prefix=token_display_prefix(secret),
        token_hash=token_hash(secret),
    )
    _audit(agent, "agent_token.issue", actor)
    return agent, secret


@transaction.atomic
def agent_rotate(*, agent: Agent, actor: str) -> str:
    """Replace the agent's token (the old one stops working) and un-revoke it."""
    secret = token_generate(AGENT_TOKEN_PREFIX)
    agent.token_prefix = token_display_prefix(secret)
    agent.token_hash = token_hash(secret)
    agent.revoked_at = None
    agent.save(update_fields=["token_prefix", "token_hash", "revoked_at"])
    _audit(agent, "agent_token.rotate", actor)
    return secret


@transaction.atomic
def agent_revoke(*, agent: Agent, actor: str) -> None:
    if agent.revoked_at is None:
        agent.revoked_at = timezone.now()
        agent.save(update_fields=["revoked_at"])
    _audit(agent, "agent_token.revoke", actor)


def _audit(agent: Agent, action: str, actor: str) -> None:
    audit_log(
        actor=None,
        label=actor,
        action=action,
        outcome=AuditOutcome.OK,
        host=agent.host,
        detail={"agent_id": str(agent.pk), "agent": agent.name},
    )


# Last contact is read as "3 s ago" or "2 min ago"; writing it on every batch and
# poll would cost two row updates and a commit each time.
CONTACT_RESOLUTION = timedelta(seconds=10)


def agent_contact(*, agent: Agent) -> None:
    """Note that the agent, and the pi host it is bound to, were heard from now.

    `agent` is the row the token lookup just read, its host joined: when both times
    are within CONTACT_RESOLUTION, nothing is written.
    """
    now = timezone.now()
    horizon = now - CONTACT_RESOLUTION
    host = agent.host
    rows: list[Agent | Host] = [agent] if host is None else [agent, host]
    if all(row.last_contact_at and row.last_contact_at >= horizon for row in rows):
        return
    stale = Q(last_contact_at__isnull=True) | Q(last_contact_at__lt=horizon)
    with transaction.atomic():
        # Host first, then agent: the order the heartbeat and snapshots lock them in.
        if host is not None:
            Host.objects.filter(stale, pk=host.pk).update(last_contact_at=now)
        Agent.objects.filter(stale, pk=agent.pk).update(last_contact_at=now)


class HostMismatch(Conflict):
    code = "host_mismatch"


def agent_heartbeat(*, agent: Agent, beat: dict[str, Any]) -> Host:
    """Bind the agent to the pi host it runs on and record its report.

    `beat` is a heartbeat body already valid against the `heartbeat` schema. An agent
    binds at its first heartbeat; one naming another host is refused until an admin
    rebinds it (`agent_rebind`), so a token can never speak for another host.
    """
    claimed = beat["host"]["id"]
    bound = agent.host
    if bound is None or bound.pi_id == claimed:
        return _agent_heartbeat(agent=agent, beat=beat)
    # Refused every time, audited once per new claim: agents beat every 30 s.
    if agent.claimed_host_id != claimed:
        Agent.objects.filter(pk=agent.pk).update(claimed_host_id=claimed)
        audit_log(
            actor=None,
            label=f"agent:{agent.name}",
            action="agent.heartbeat",
            outcome=AuditOutcome.REFUSED,
            host=bound,
            detail={
                "agent_id": str(agent.pk),
                "agent": agent.name,
                "claimed": claimed,
                "code": HostMismatch.code,
                "reason": _mismatch_reason(agent, claimed),
            },
        )
    raise HostMismatch(_mismatch_reason(agent, claimed))


def _mismatch_reason(agent: Agent, claimed: str) -> str:
    bound = agent.host.pi_id if agent.host is not None else ""
    return (
        f"Agent {agent.name} is bound to pi host {bound}, not {claimed}; an admin "
        "must rebind it (admin page or `manage.py agent_token rebind`) before it "
        "may speak for another host."
    )


@transaction.atomic
def agent_rebind(*, agent: Agent, actor: str) -> None:
    """Release the agent's host binding: its next heartbeat binds it again.

    For a machine whose pi id changed (a RAM or vCPU change), or a token moved.
    """
    was = agent.host
    agent.host = None
    agent.claimed_host_id = ""
    # A reinstalled agent counts its snapshots from 1 again.
    agent.snapshot_seq = None
    agent.snapshot_epoch = ""
    agent.snapshot_epochs_past = []
    agent.save(
        update_fields=[
            "host",
            "claimed_host_id",
            "snapshot_seq",
            "snapshot_epoch",
            "snapshot_epochs_past",
        ]
    )
    audit_log(
        actor=None,
        label=actor,
        action="agent_token.rebind",
        outcome=AuditOutcome.OK,
        host=was,
        detail={
            "agent_id": str(agent.pk),
            "agent": agent.name,
            "was": was.pi_id if was is not None else None,
        },
    )


@transaction.atomic
def _agent_heartbeat(*, agent: Agent, beat: dict[str, Any]) -> Host:
    fingerprint = beat["host"]
    now = timezone.now()
    host, _ = Host.objects.get_or_create(pi_id=fingerprint["id"])
    host.cpu = fingerprint["cpu"]
    host.cores = int(fingerprint["cores"])
    host.total_mem_gb = float(fingerprint["totalMemGb"])
    host.last_contact_at = now
    host.save(update_fields=["cpu", "cores", "total_mem_gb", "last_contact_at"])
    agent.host = host
    agent.hostname = beat["hostname"]
    agent.agent_version = beat.get("agent_version") or ""
    agent.pi_version = beat.get("pi_version") or ""
    agent.state_dir = beat.get("state_dir") or ""
    agent.lag = beat.get("lag") or {}
    agent.store = beat.get("store") or {}
    agent.capabilities = beat.get("capabilities") or {}
    agent.ingest = beat.get("ingest") or {}
    agent.claimed_host_id = ""
    agent.last_contact_at = now
    agent.save()
    return host


# --- current state, one snapshot entry at a time -------------------------------------
# Snapshot ingest (ingest.snapshots) decides which entries apply and in what order;
# these functions make one entry current and say what changed. One lock order
# everywhere: the host row (NO KEY UPDATE, so that inserts referring to it never
# wait), then its host × model rows by ascending id. Command creation takes the same.


def host_lock(*, host_id: int) -> Host:
    """The host row, locked first in the one lock order."""
    return Host.objects.select_for_update(no_key=True).get(pk=host_id)


def host_models_locked(*, host: Host, model_ids: list[int]) -> dict[int, HostModel]:
    """The host's current rows for these models, locked by ascending id."""
    rows = (
        HostModel.objects.select_for_update()
        .filter(host=host, model_id__in=model_ids)
        .order_by("id")
    )
    return {row.model_id: row for row in rows}


@dataclass
class EntryApplied:
    host_model: HostModel
    previous: dict[str, Any] | None  # the entry it replaced; None when new
    changes: int


def host_model_apply(
    *,
    host: Host,
    model: Model,
    current: HostModel | None,
    item: StoreEntry,
    removed_by: Mapping[str, uuid.UUID],
) -> EntryApplied:
    """Make `item` the current entry of host × model, with history rows.

    The caller holds the locks (host_lock, host_models_locked) and has decided that
    `item` is the truth, whatever its `at`. `removed_by`: see entry_changes.
    """
    _host_update(host, item)
    previous = _faithful_entry(current) if current is not None else None
    if current is not None and previous == item.entry:
        return EntryApplied(current, previous, 0)
    current = current or HostModel(host=host, model=model)
    _host_model_fill(current, item)
    current.save()
    specs = adaptation.entry_changes(previous, item.entry, removed_by=removed_by)
    Change.objects.bulk_create(
        Change(
            host_model=current,
            kind=s.kind,
            at=s.at,
            mode=jsonsafe.sanitise_text(s.mode)[:200],
            before=jsonsafe.sanitise(s.before),
            after=jsonsafe.sanitise(s.after),
            command_id=s.command_id,
        )
        for s in specs
    )
    return EntryApplied(current, previous, len(specs))


def _faithful_entry(host_model: HostModel) -> dict[str, Any]:
    entry: dict[str, Any] = jsonsafe.faithful(
        host_model.entry, host_model.entry_original
    )
    return entry


def models_ensure(keys: list[str]) -> dict[str, Model]:
    """Models by key, created when new. Inserted in key order with ON CONFLICT DO
    NOTHING so that concurrent first snapshots cannot deadlock on the unique key."""
    Model.objects.bulk_create(
        [
            # Split at the FIRST '/': the model id may hold more (docs/pi-host-data.md
            # §0.3).
            Model(
                key=key, provider=key.partition("/")[0], model_id=key.partition("/")[2]
            )
            for key in keys
        ],
        ignore_conflicts=True,
    )
    return {model.key: model for model in Model.objects.filter(key__in=keys)}


def _host_update(host: Host, item: StoreEntry) -> None:
    fingerprint = item.entry["host"]
    host.cpu = fingerprint["cpu"][:300]
    host.cores = int(fingerprint["cores"])
    host.total_mem_gb = float(fingerprint["totalMemGb"])
    if item.at is not None and (
        host.last_snapshot_at is None or item.at > host.last_snapshot_at
    ):
        host.last_snapshot_at = item.at
    host.save(update_fields=["cpu", "cores", "total_mem_gb", "last_snapshot_at"])


def _host_model_fill(host_model: HostModel, item: StoreEntry) -> None:
    """The entry and the columns derived from it (for filtering and sorting in SQL)."""
    profile = item.entry["profile"]
    probe = profile.get("toolProbe") or {}
    protocol = profile.get("protocol")
    is_safe = not jsonsafe.contains_unsafe(item.entry)
    host_model.entry = item.entry if is_safe else jsonsafe.sanitise(item.entry)
    host_model.entry_original = "" if is_safe else jsonsafe.escaped(item.entry)
    host_model.entry_at = item.at
    host_model.probe_status = str(probe.get("status", ""))[:16]
    host_model.probe_grade = str(probe.get("nativeGrade", ""))[:16]
    host_model.probe_variant = str(probe.get("variant", ""))[:64]
    host_model.probed_at = _time(probe.get("probedAt"))
    # Legacy records without a status are calibrated (docs/pi-host-data.md §1.5.2).
    is_failed = protocol is not None and protocol.get("status") == "failed"
    host_model.protocol_status = (
        "" if protocol is None else "failed" if is_failed else "calibrated"
    )
    host_model.protocol_variant = (
        "" if protocol is None or is_failed else str(protocol.get("variant", ""))[:64]
    )
    host_model.rule_count = len(profile.get("rules", []))


def _time(value: Any) -> datetime | None:
    return parse_iso(value)
