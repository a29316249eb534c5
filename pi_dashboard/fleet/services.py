"""Writes to the fleet: agent tokens, heartbeats, and adaptation-store snapshots."""

from dataclasses import dataclass, field
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
from pi_dashboard.ingest.models import Snapshot
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.isotime import parse_iso
from pi_dashboard.lib.tokens import token_display_prefix, token_generate, token_hash

MAX_HOST_ID = 200  # Host.pi_id
MAX_MODEL_KEY = 600  # Model.key


class InvalidSnapshot(DomainError):
    status = 400
    code = "invalid_store"


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
        Agent.objects.filter(stale, pk=agent.pk).update(last_contact_at=now)
        if host is not None:
            Host.objects.filter(stale, pk=host.pk).update(last_contact_at=now)


@transaction.atomic
def agent_heartbeat(*, agent: Agent, beat: dict[str, Any]) -> Host:
    """Bind the agent to the pi host it runs on and record its report.

    `beat` is a heartbeat body already valid against the `heartbeat` schema.
    """
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
    agent.last_contact_at = now
    agent.save()
    return host


# --- snapshots of model-adaptation.json ---------------------------------------------


@dataclass
class SnapshotResult:
    status: str  # stored | duplicate | stale
    hosts: int = 0
    models: int = 0
    changes: int = 0
    dropped: list[dict[str, Any]] = field(default_factory=list)


def snapshot_ingest(*, agent: Agent, body: bytes) -> SnapshotResult:
    """Apply a `model-adaptation.json` (every host bucket in it) to current state.

    Never rolls back: an entry whose `at` is older than the stored one is ignored, and
    a snapshot with nothing newer is "stale". Entries pi would drop are reported.
    """
    try:
        document, is_safe = jsonsafe.loads(body)
    except jsonsafe.JSONLineError as exc:
        raise InvalidSnapshot(f"The snapshot is not valid JSON: {exc}.") from exc
    digest = jsonsafe.content_hash(document)
    try:
        parsed = adaptation.store_parse(document)
    except adaptation.InvalidStore as exc:
        raise InvalidSnapshot(str(exc)) from exc
    _drop_unstorable(parsed)
    original = "" if is_safe else jsonsafe.escaped(document)
    if not is_safe:
        document = jsonsafe.sanitise(document)
    result = _snapshot_apply(agent, parsed, document, digest, original)
    result.dropped = [
        {"host": d.host, "model": d.model, "reason": d.reason} for d in parsed.dropped
    ]
    return result


def _drop_unstorable(parsed: adaptation.ParsedStore) -> None:
    """Entries whose host id or model key cannot fit our columns are reported."""
    kept = []
    for item in parsed.entries:
        # Ids and keys are columns: a lone surrogate or NUL in them cannot be kept.
        item.host_id = jsonsafe.sanitise_text(item.host_id)
        item.key = jsonsafe.sanitise_text(item.key)
        if len(item.host_id) > MAX_HOST_ID or len(item.key) > MAX_MODEL_KEY:
            reason = "host id or model key is too long to store"
            parsed.dropped.append(adaptation.Dropped(item.host_id, item.key, reason))
        else:
            kept.append(item)
    parsed.entries = kept


@transaction.atomic
def _snapshot_apply(
    agent: Agent,
    parsed: adaptation.ParsedStore,
    document: dict[str, Any],
    digest: bytes,
    original: str,
) -> SnapshotResult:
    models = _models_ensure(sorted({entry.key for entry in parsed.entries}))
    hosts = _hosts_locked(sorted({entry.host_id for entry in parsed.entries}))
    result = SnapshotResult(
        status="stored", hosts=len(hosts), models=len(parsed.entries)
    )
    if Snapshot.objects.filter(content_hash=digest).exists():
        result.status = "duplicate"
        return result
    fresh = stale = 0
    for entry in parsed.entries:
        outcome = _entry_apply(hosts[entry.host_id], models[entry.key], entry)
        if outcome is None:
            stale += 1
        else:
            fresh += 1
            result.changes += outcome
    if stale and not fresh:
        result.status = "stale"
        return result
    times = [entry.at for entry in parsed.entries if entry.at is not None]
    Snapshot.objects.create(
        agent=agent,
        content_hash=digest,
        taken_at=max(times, default=None),
        document=document,
        original=original,
    )
    return result


def _hosts_locked(pi_ids: list[str]) -> dict[str, Host]:
    """Hosts by pi id, created when new, locked in id order (one snapshot at a time)."""
    Host.objects.bulk_create([Host(pi_id=p) for p in pi_ids], ignore_conflicts=True)
    locked = Host.objects.select_for_update().filter(pi_id__in=pi_ids).order_by("pi_id")
    return {host.pi_id: host for host in locked}


def _entry_apply(host: Host, model: Model, item: StoreEntry) -> int | None:
    """Apply one entry; None when it is older than what is stored, else changes made."""
    current = (
        HostModel.objects.select_for_update().filter(host=host, model=model).first()
    )
    stored_at = current.entry_at if current is not None else None
    if stored_at is not None and (item.at is None or item.at < stored_at):
        return None
    _host_update(host, item)
    count = 0
    if current is None or _faithful_entry(current) != item.entry:
        old = _faithful_entry(current) if current is not None else None
        current = current or HostModel(host=host, model=model)
        _host_model_fill(current, item)
        current.save()
        specs = adaptation.entry_changes(old, item.entry)
        Change.objects.bulk_create(
            Change(
                host_model=current,
                kind=s.kind,
                at=s.at,
                mode=jsonsafe.sanitise_text(s.mode)[:200],
                before=jsonsafe.sanitise(s.before),
                after=jsonsafe.sanitise(s.after),
            )
            for s in specs
        )
        count = len(specs)
    from pi_dashboard.control import services as control_services

    control_services.commands_confirm_from_snapshot(
        host=host, model=model, entry=item.entry, taken_at=item.at or timezone.now()
    )
    return count


def _faithful_entry(host_model: HostModel) -> dict[str, Any]:
    entry: dict[str, Any] = jsonsafe.faithful(
        host_model.entry, host_model.entry_original
    )
    return entry


def _models_ensure(keys: list[str]) -> dict[str, Model]:
    """Models by key, created when new. Inserted in key order with ON CONFLICT DO
    NOTHING so that concurrent first snapshots cannot deadlock on the unique key."""
    Model.objects.bulk_create(
        [
            # Split at the FIRST '/': the model id may hold more (reference §0.3).
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
    # Legacy records without a status are calibrated (reference §1.5.2).
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
