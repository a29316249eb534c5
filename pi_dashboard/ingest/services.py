"""Ingest of JSON Lines batches from agents: event log, failure corpus, stats files.

Each batch is checked line by line outside any transaction (CPU work only), then
written in one transaction: new rows and the rollup counts of exactly those rows.
Dedupe is by content (SHA-256 of the canonical JSON, per host), so re-sent, reordered
and rotated lines never count twice (docs/pi-host-pitfalls.md §19, §22).
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Agent, Host
from pi_dashboard.ingest import lines, records, retention, store
from pi_dashboard.ingest.lines import Accepted, Rejection
from pi_dashboard.ingest.records import Prepared
from pi_dashboard.lib.errors import Conflict

STORED, DUPLICATE, REJECTED = "stored", "duplicate", "rejected"
EXPIRED_REASON = (
    "Older than the server's retention horizon ({horizon}): not stored, and not "
    "counted again; the raw line may have been deleted."
)


@dataclass
class BatchResult:
    stored: int = 0
    duplicate: int = 0
    rejected: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)


def agent_bound_host(agent: Agent) -> Host:
    """The pi host the agent reported in its heartbeat; lines are attributed to it."""
    if agent.host is None:
        raise Conflict(
            "Send a heartbeat first: the agent is not bound to a pi host yet.",
            code="agent_not_bound",
        )
    return agent.host


def events_ingest(*, agent: Agent, body: bytes) -> BatchResult:
    """Store the new lines of a `tool-recovery-events.jsonl` batch."""
    return _rows_ingest(
        agent=agent,
        body=body,
        classify=records.event_classify,
        prepare=records.event_prepare,
        insert=store.events_insert,
        table=retention.EVENTS,
    )


def corpus_ingest(*, agent: Agent, body: bytes) -> BatchResult:
    """Store the new lines of a `failure-corpus.jsonl` batch."""
    return _rows_ingest(
        agent=agent,
        body=body,
        classify=records.corpus_classify,
        prepare=records.corpus_prepare,
        insert=store.corpus_insert,
        table=retention.CORPUS,
    )


Insert = Callable[..., set[bytes]]  # store.events_insert / corpus_insert


def _rows_ingest(
    *,
    agent: Agent,
    body: bytes,
    classify: lines.Classifier,
    prepare: Callable[[Accepted], Prepared | Rejection],
    insert: Insert,
    table: str,
) -> BatchResult:
    host = agent_bound_host(agent)
    accepted, rejected = lines.lines_check(body, classify)
    statuses: dict[int, str] = {}
    unique: list[Prepared] = []
    seen: set[bytes] = set()
    for record in accepted:
        prepared = prepare(record)
        if isinstance(prepared, Rejection):
            rejected.append(prepared)
        elif prepared.digest in seen:
            statuses[prepared.line] = DUPLICATE  # the same content twice in one batch
        else:
            seen.add(prepared.digest)
            unique.append(prepared)
    try:
        with transaction.atomic():
            kept, expired, new = _rows_store(host, unique, insert, table, all_new=True)
    except store.AlreadyStored:
        # A re-send: write again, skipping what is stored (rolled back meanwhile).
        with transaction.atomic():
            kept, expired, new = _rows_store(host, unique, insert, table, all_new=False)
    for prepared in kept:
        statuses[prepared.line] = STORED if prepared.digest in new else DUPLICATE
    # After the commit: concurrent batches of one agent all touch the same two rows,
    # and holding those row locks until commit would serialise them.
    fleet_services.agent_contact(agent=agent)
    return batch_result(statuses, rejected, expired)


def _rows_store(
    host: Host, unique: list[Prepared], insert: Insert, table: str, *, all_new: bool
) -> tuple[list[Prepared], list[Rejection], set[bytes]]:
    """Write the rows and their rollup counts (in the caller's transaction).

    Returns the rows within retention, those older (not written), and the hashes of
    the rows that were new.
    """
    kept, expired = _expired_split(unique, table)
    model_ids = store.models_ensure(p.model_key for p in kept if p.model_key)
    for prepared in kept:
        prepared.row[0] = model_ids.get(prepared.model_key or "")
    new = insert(host.pk, [tuple(p.row) for p in kept], all_new=all_new)
    stored = (prepared for prepared in kept if prepared.digest in new)
    store.rollups_add(host.pk, records.rollup_counts(stored))
    return kept, expired, new


def _expired_split(
    unique: list[Prepared], table: str
) -> tuple[list[Prepared], list[Rejection]]:
    """Lines older than the table's retention mark are not stored (see retention)."""
    horizon = retention.mark_read(table=table)
    if horizon is None:
        return unique, []
    kept: list[Prepared] = []
    expired: list[Rejection] = []
    reason = EXPIRED_REASON.format(horizon=horizon.isoformat())
    for prepared in unique:
        if prepared.ts < horizon:
            expired.append(Rejection(prepared.line, "expired", reason))
        else:
            kept.append(prepared)
    return kept, expired


def stats_ingest(*, agent: Agent, body: bytes) -> BatchResult:
    """Keep, per session, the stats file with the highest lastRecordSequence."""
    host = agent_bound_host(agent)
    accepted, rejected = lines.lines_check(body, records.stats_classify)
    statuses: dict[int, str] = {}
    best: dict[str, tuple[int, tuple[str, int, str, str]]] = {}
    for record in accepted:
        row = records.stats_row(record)
        if isinstance(row, Rejection):
            rejected.append(row)
            continue
        previous = best.get(row[0])
        if previous is None or row[1] > previous[1][1]:
            if previous is not None:
                statuses[previous[0]] = DUPLICATE
            best[row[0]] = (record.line, row)
        else:
            statuses[record.line] = DUPLICATE
    with transaction.atomic():
        updated = store.stats_upsert(host.pk, [row for _, row in best.values()])
    fleet_services.agent_contact(agent=agent)
    for session_id, (line, _) in best.items():
        statuses[line] = STORED if session_id in updated else DUPLICATE
    return batch_result(statuses, rejected)


def batch_result(
    statuses: dict[int, str],
    rejected: list[Rejection],
    expired: list[Rejection] | None = None,
) -> BatchResult:
    """One result per non-blank line, in line order; `expired` lines are duplicates."""
    result = BatchResult()
    entries: dict[int, dict[str, Any]] = {
        line: {"line": line, "status": status} for line, status in statuses.items()
    }
    for old in expired or ():
        entries[old.line] = {
            "line": old.line,
            "status": DUPLICATE,
            "code": old.code,
            "reason": old.reason,
        }
    for rejection in rejected:
        entries[rejection.line] = {
            "line": rejection.line,
            "status": REJECTED,
            "code": rejection.code,
            "reason": rejection.reason,
        }
    result.results = [entries[line] for line in sorted(entries)]
    tally = Counter(entry["status"] for entry in result.results)
    result.stored, result.duplicate = tally[STORED], tally[DUPLICATE]
    result.rejected = tally[REJECTED]
    return result
