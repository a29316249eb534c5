"""Snapshot ingest: an agent's `model-adaptation.json`, applied to its own host.

The owning agent's newest snapshot, by its own send order (`X-Snapshot-Seq`), is the
truth for the host it is bound to, whatever the entries' `at` say: a restored backup
or an older copy pi wrote back over a lost update must show as it is. A snapshot
with a lower sequence number than one already applied is stale and changes nothing;
without a number (older agents), arrival order decides. Other hosts' buckets in a
shared store are ignored and counted: an agent speaks only for its own host.

fleet makes each entry current; control then confirms, or marks reverted, the
commands on that host × model, all in one transaction.
"""

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.control import services as control_services
from pi_dashboard.fleet import adaptation
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.adaptation import StoreEntry
from pi_dashboard.fleet.models import Agent, Host
from pi_dashboard.ingest import services, snapshot_order
from pi_dashboard.ingest.models import Snapshot
from pi_dashboard.lib import jsonsafe, retry
from pi_dashboard.lib.errors import DomainError

STORED, DUPLICATE, STALE = "stored", "duplicate", "stale"


class InvalidSnapshot(DomainError):
    status = 400
    code = "invalid_store"


@dataclass
class SnapshotResult:
    status: str  # stored | duplicate | stale
    hosts: int = 0  # 1 when the store holds the agent's own host, else 0
    models: int = 0
    changes: int = 0
    reverted: int = 0
    ignored_hosts: int = 0  # other hosts' buckets, never applied
    dropped: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Document:
    entries: list[StoreEntry]  # the agent's own host's, storable
    content: dict[str, Any]
    digest: bytes
    original: str
    taken_at: Any


def snapshot_ingest(
    *, agent: Agent, body: bytes, seq: int | None, epoch: str | None = None
) -> SnapshotResult:
    """Apply a `model-adaptation.json` to the agent's own host (see the module);
    `seq` and `epoch` place it in the agent's send order (ingest.snapshot_order)."""
    host = services.agent_bound_host(agent)
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
    own = host.pi_id
    entries = sorted(
        (item for item in parsed.entries if item.host_id == own), key=lambda e: e.key
    )
    times = [item.at for item in entries if item.at is not None]
    doc = _Document(
        entries=entries,
        content=document if is_safe else jsonsafe.sanitise(document),
        digest=digest,
        original="" if is_safe else jsonsafe.escaped(document),
        taken_at=max(times, default=None),
    )
    result = retry.retry_on_conflict(
        partial(
            _snapshot_apply,
            agent=agent,
            host_id=host.pk,
            doc=doc,
            seq=seq,
            epoch=epoch,
        )
    )
    result.hosts = 1 if own in document["hosts"] else 0
    result.ignored_hosts = sum(1 for bucket in document["hosts"] if bucket != own)
    result.dropped = [
        {"host": d.host, "model": d.model, "reason": d.reason}
        for d in parsed.dropped
        if d.host == own
    ]
    return result


def _drop_unstorable(parsed: adaptation.ParsedStore) -> None:
    """Entries whose host id or model key cannot fit our columns are reported."""
    kept = []
    for item in parsed.entries:
        # Ids and keys are columns: a lone surrogate or NUL in them cannot be kept.
        item.host_id = jsonsafe.sanitise_text(item.host_id)
        item.key = jsonsafe.sanitise_text(item.key)
        if (
            len(item.host_id) > fleet_services.MAX_HOST_ID
            or len(item.key) > fleet_services.MAX_MODEL_KEY
        ):
            reason = "host id or model key is too long to store"
            parsed.dropped.append(adaptation.Dropped(item.host_id, item.key, reason))
        elif item.entry.get("host", {}).get("cores", 0) > fleet_services.MAX_CORES:
            reason = (
                f"host.cores is over {fleet_services.MAX_CORES}, too large to store"
            )
            parsed.dropped.append(adaptation.Dropped(item.host_id, item.key, reason))
        else:
            kept.append(item)
    parsed.entries = kept


@transaction.atomic
def _snapshot_apply(
    *, agent: Agent, host_id: int, doc: _Document, seq: int | None, epoch: str | None
) -> SnapshotResult:
    # The host lock serialises this agent's snapshots, so the order checks hold.
    host = fleet_services.host_lock(host_id=host_id)
    result = SnapshotResult(status=STORED, models=len(doc.entries))
    seq_now, epoch_now, past = Agent.objects.values_list(
        "snapshot_seq", "snapshot_epoch", "snapshot_epochs_past"
    ).get(pk=agent.pk)
    stored = snapshot_order.StoredOrder(
        seq=seq_now, epoch=epoch_now, past=past if isinstance(past, list) else []
    )
    placed = snapshot_order.snapshot_place(stored, seq=seq, epoch=epoch)
    if placed.stale:
        result.status = STALE
        return result
    newest = (
        Snapshot.objects.filter(agent=agent)
        .order_by("-received_at", "-id")
        .values_list("content_hash", flat=True)
        .first()
    )
    if newest is not None and bytes(newest) == doc.digest:
        result.status = DUPLICATE
    else:
        _entries_apply(host=host, entries=doc.entries, result=result)
    _snapshot_record(agent=agent, doc=doc, seq=seq)
    if placed.updates:
        Agent.objects.filter(pk=agent.pk).update(**placed.updates)
    if placed.restarted:
        _order_restarted_audit(agent=agent, host=host, stored=stored, placed=placed)
    return result


def _order_restarted_audit(
    *,
    agent: Agent,
    host: Host,
    stored: snapshot_order.StoredOrder,
    placed: snapshot_order.Placed,
) -> None:
    epoch, seq = placed.updates["snapshot_epoch"], placed.updates["snapshot_seq"]
    audit.audit_log(
        actor=None,
        label=f"agent:{agent.name}",
        action="agent.snapshot_order_restarted",
        outcome=AuditOutcome.OK,
        host=host,
        detail={
            "agent_id": str(agent.pk),
            "epoch": epoch,
            "seq": seq,
            "was_epoch": stored.epoch,
            "was_seq": stored.seq,
            "reason": (
                f"Snapshot order restarted: agent {agent.name} counts its snapshots "
                f"from {seq} in a new epoch {epoch} (it was at {stored.seq}"
                + (f" in epoch {stored.epoch}" if stored.epoch else "")
                + "), as after a reinstall; its newest snapshot is the truth."
            ),
        },
    )


def _entries_apply(
    *, host: Host, entries: list[StoreEntry], result: SnapshotResult
) -> None:
    models = fleet_services.models_ensure([item.key for item in entries])
    model_ids = [models[item.key].pk for item in entries]
    current = fleet_services.host_models_locked(host=host, model_ids=model_ids)
    removals = control_services.removals_in_flight(host=host, model_ids=model_ids)
    for item in entries:
        model = models[item.key]
        applied = fleet_services.host_model_apply(
            host=host,
            model=model,
            current=current.get(model.pk),
            item=item,
            removed_by=removals.get(model.pk, {}),
        )
        result.changes += applied.changes
        taken_at = item.at or timezone.now()
        control_services.commands_confirm_from_snapshot(
            host=host, model=model, entry=item.entry, taken_at=taken_at
        )
        result.reverted += control_services.commands_revert_from_snapshot(
            host=host, model=model, entry=item.entry, taken_at=taken_at
        )


def _snapshot_record(*, agent: Agent, doc: _Document, seq: int | None) -> None:
    """Keep the document; content seen before (a file written back) moves to now."""
    Snapshot.objects.bulk_create(
        [
            Snapshot(
                agent=agent,
                content_hash=doc.digest,
                taken_at=doc.taken_at,
                received_at=timezone.now(),
                seq=seq,
                document=doc.content,
                original=doc.original,
            )
        ],
        update_conflicts=True,
        unique_fields=["content_hash"],
        update_fields=["agent", "taken_at", "received_at", "seq"],
    )
