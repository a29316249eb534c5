"""Ingest endpoints (agent token), the published JSON Schemas, and record reads."""

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

import orjson
from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import Field, Query, Router, Schema

from pi_dashboard.accounts.auth import operator_auth, require_role
from pi_dashboard.accounts.models import Role
from pi_dashboard.fleet.auth import agent_auth
from pi_dashboard.ingest import (
    contracts,
    limits,
    lines,
    selectors,
    services,
    snapshots,
)
from pi_dashboard.ingest.gcpause import gc_paused
from pi_dashboard.ingest.models import CorpusRecord, Dimension, EventRecord
from pi_dashboard.lib import counters
from pi_dashboard.lib.errors import DomainError, NotFound
from pi_dashboard.lib.schemas import ApiDateTime, ErrorOut

router = Router(tags=["ingest"])


class LineResultOut(Schema):
    line: int
    status: Literal["stored", "duplicate", "rejected"]
    code: str | None = None
    reason: str | None = None


class BatchOut(Schema):
    stored: int
    duplicate: int
    rejected: int
    results: list[LineResultOut]


class DroppedOut(Schema):
    host: str
    model: str | None
    reason: str


class SnapshotOut(Schema):
    status: Literal["stored", "duplicate", "stale"]
    hosts: int = Field(description="1 when the store holds the agent's own host.")
    models: int
    changes: int
    reverted: int = Field(0, description="Confirmed commands this snapshot undid.")
    ignored_hosts: int = Field(
        0, description="Other hosts' buckets: an agent speaks only for its own host."
    )
    dropped: list[DroppedOut] = []


MAX_SEQ = 2**63 - 1  # Snapshot.seq is a bigint
SNAPSHOT_EPOCH = re.compile(r"[A-Za-z0-9_-]{1,64}")  # fits Agent.snapshot_epoch


class InvalidSeq(DomainError):
    code = "invalid_seq"


def _snapshot_seq(request: HttpRequest) -> int | None:
    """The agent's X-Snapshot-Seq (its own send order), or None when absent."""
    raw = request.headers.get("X-Snapshot-Seq")
    if raw is None:
        return None
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or int(text) > MAX_SEQ:
        raise InvalidSeq(
            f"X-Snapshot-Seq must be a whole number from 0 to {MAX_SEQ}, "
            f"not {raw[:40]!r}."
        )
    return int(text)


class InvalidEpoch(DomainError):
    code = "invalid_epoch"


def _snapshot_epoch(request: HttpRequest, seq: int | None) -> str | None:
    """The agent's X-Snapshot-Epoch (which count `seq` is in), or None when absent."""
    raw = request.headers.get("X-Snapshot-Epoch")
    if raw is None:
        return None
    text = raw.strip()
    if not SNAPSHOT_EPOCH.fullmatch(text):
        raise InvalidEpoch(
            "X-Snapshot-Epoch must be 1 to 64 characters of A-Z, a-z, 0-9, _ or -, "
            f"not {raw[:40]!r}."
        )
    if seq is None:
        raise InvalidEpoch("X-Snapshot-Epoch needs an X-Snapshot-Seq to go with it.")
    return text


def _overloaded(exc: limits.Overloaded) -> HttpResponse:
    response = JsonResponse({"detail": exc.detail, "code": exc.code}, status=429)
    response["Retry-After"] = str(limits.RETRY_AFTER_SECONDS)
    return response


LINE_ERRORS = {
    400: ErrorOut,
    401: ErrorOut,
    409: ErrorOut,
    413: ErrorOut,
    415: ErrorOut,
    429: ErrorOut,
}
NDJSON_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        "description": "JSON Lines exactly as pi wrote them; gzip allowed.",
    }
}
# The three line endpoints differ only in the path and the service they call.
LINES_OPERATION: dict[str, Any] = {
    "auth": agent_auth,
    "response": {200: BatchOut, **LINE_ERRORS},
    "openapi_extra": NDJSON_BODY,
    "exclude_none": True,
}


def _lines_endpoint(
    request: HttpRequest, ingest: Callable[..., services.BatchResult]
) -> Any:
    try:
        with limits.ingest_slot(), gc_paused():
            body = lines.request_body(request)
            result = ingest(agent=request.agent, body=body)  # type: ignore[attr-defined]
            counters.ingest_batch(
                kind=request.path.rstrip("/").rsplit("/", 1)[-1],
                stored=result.stored,
                duplicate=result.duplicate,
                rejected=result.rejected,
            )
            # Serialised directly: validating 1,000 result objects through the
            # response schema costs as much as storing them. BatchOut's shape.
            answer = orjson.dumps(
                {
                    "stored": result.stored,
                    "duplicate": result.duplicate,
                    "rejected": result.rejected,
                    "results": result.results,
                }
            )
    except limits.Overloaded as exc:
        return _overloaded(exc)
    return HttpResponse(answer, content_type="application/json")


@router.post("/ingest/events", **LINES_OPERATION)
def ingest_events(request: HttpRequest) -> Any:
    """Store lines of tool-recovery-events.jsonl; one result per line."""
    return _lines_endpoint(request, services.events_ingest)


@router.post("/ingest/corpus", **LINES_OPERATION)
def ingest_corpus(request: HttpRequest) -> Any:
    """Store lines of failure-corpus.jsonl; one result per line."""
    return _lines_endpoint(request, services.corpus_ingest)


@router.post("/ingest/stats", **LINES_OPERATION)
def ingest_stats(request: HttpRequest) -> Any:
    """Store tool-recovery-stats files, one document per line; newest per session."""
    return _lines_endpoint(request, services.stats_ingest)


@router.post(
    "/ingest/snapshot",
    auth=agent_auth,
    response={200: SnapshotOut, **LINE_ERRORS},
    openapi_extra={
        "parameters": [
            {
                "in": "header",
                "name": "X-Snapshot-Seq",
                "required": False,
                "schema": {"type": "integer", "minimum": 0, "maximum": MAX_SEQ},
                "description": "The agent's send order: +1 per snapshot, kept on "
                "re-sends. The highest is the host's truth; lower ones are stale.",
            },
            {
                "in": "header",
                "name": "X-Snapshot-Epoch",
                "required": False,
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                "description": "Which count X-Snapshot-Seq is in: random, created "
                "with the agent's counter. A new epoch (an agent reinstalled, its "
                "counter back at 1) is accepted as a new order and audited as "
                "'snapshot order restarted'; a late snapshot of an epoch the agent "
                "left is stale. Needs X-Snapshot-Seq. Without it, the number alone.",
            },
        ],
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
            "description": "model-adaptation.json exactly as pi wrote it.",
        },
    },
)
def ingest_snapshot(request: HttpRequest) -> Any:
    """Make the agent's newest snapshot its own host's state (other hosts ignored)."""
    seq = _snapshot_seq(request)
    epoch = _snapshot_epoch(request, seq)
    try:
        with limits.ingest_slot():
            services.agent_bound_host(request.agent)  # type: ignore[attr-defined]
            return snapshots.snapshot_ingest(
                agent=request.agent,  # type: ignore[attr-defined]
                body=lines.request_body(request),
                seq=seq,
                epoch=epoch,
            )
    except limits.Overloaded as exc:
        return _overloaded(exc)


# --- the published contracts --------------------------------------------------------


class SchemaRefOut(Schema):
    name: str
    title: str
    url: str


class SchemaIndexOut(Schema):
    schemas: list[SchemaRefOut]


@router.get("/schemas/", response={200: SchemaIndexOut}, tags=["schemas"])
def list_schemas(request: HttpRequest) -> Any:
    """List the JSON Schemas (draft 2020-12) of every record kind ingest accepts."""
    return {
        "schemas": [
            {
                "name": name,
                "title": contracts.schema_document(name).get("title", name),
                "url": request.build_absolute_uri(f"/api/v1/schemas/{name}"),
            }
            for name in contracts.SCHEMA_NAMES
        ]
    }


@router.get(
    "/schemas/{name}", response={200: dict[str, Any], 404: ErrorOut}, tags=["schemas"]
)
def get_schema(request: HttpRequest, name: str) -> Any:
    """Return one JSON Schema document by name."""
    if name not in contracts.SCHEMA_NAMES:
        raise NotFound(f"No schema named {name!r}.")
    return contracts.schema_document(name)


# --- operator reads of shipped records ----------------------------------------------


class RecordQuery(Schema):
    host: str | None = None
    model: str | None = None
    kind: str | None = None
    outcome: str | None = None
    phase: str | None = None
    failure_code: str | None = None
    tool: str | None = None
    since: ApiDateTime | None = None
    until: ApiDateTime | None = None
    cursor: str | None = None
    limit: int = Field(100, ge=1, le=1000)


class CorpusQuery(RecordQuery):
    reason: str | None = None


class RecordOut(Schema):
    id: int
    host: str
    model: str | None
    kind: str
    ts: datetime
    tool: str
    outcome: str
    phase: str
    failure_code: str
    record: dict[str, Any]


class RecordPageOut(Schema):
    items: list[RecordOut]
    next_cursor: str | None


READ_ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 422: ErrorOut}


def _record_out(row: EventRecord | CorpusRecord) -> dict[str, Any]:
    return {
        "id": row.pk,
        "host": row.host.pi_id,
        "model": row.model.key if row.model is not None else None,
        "kind": row.kind,
        "ts": row.ts,
        "tool": row.tool,
        "outcome": row.outcome if isinstance(row, EventRecord) else row.state,
        "phase": row.phase,
        "failure_code": row.failure_code,
        "record": selectors.record_faithful(row),
    }


def _filters(query: RecordQuery) -> selectors.RecordFilters:
    data = query.dict(exclude={"cursor", "limit"})
    return selectors.RecordFilters(**data)


@router.get("/events", auth=operator_auth, response={200: RecordPageOut, **READ_ERRORS})
def list_events(request: HttpRequest, query: Query[RecordQuery]) -> Any:
    """List event-log records, newest first, filtered; follow next_cursor for more."""
    require_role(request, Role.VIEWER, action="api:list_events")
    rows, cursor = selectors.event_page(
        filters=_filters(query), cursor=query.cursor, limit=query.limit
    )
    return {"items": [_record_out(row) for row in rows], "next_cursor": cursor}


@router.get("/corpus", auth=operator_auth, response={200: RecordPageOut, **READ_ERRORS})
def list_corpus(request: HttpRequest, query: Query[CorpusQuery]) -> Any:
    """List failure-corpus records, newest first (outcome filters the state)."""
    require_role(request, Role.VIEWER, action="api:list_corpus")
    rows, cursor = selectors.corpus_page(
        filters=_filters(query), cursor=query.cursor, limit=query.limit
    )
    return {"items": [_record_out(row) for row in rows], "next_cursor": cursor}


class RollupQuery(Schema):
    dimension: Dimension
    host: str | None = None
    model: str | None = None
    since: ApiDateTime | None = None
    until: ApiDateTime | None = None
    bucket: Literal["hour", "day"] = "hour"


class RollupRowOut(Schema):
    bucket: datetime
    key: str
    count: int


class RollupSeriesOut(Schema):
    dimension: str
    bucket: str
    rows: list[RollupRowOut]


@router.get(
    "/rollups", auth=operator_auth, response={200: RollupSeriesOut, **READ_ERRORS}
)
def list_rollups(request: HttpRequest, query: Query[RollupQuery]) -> Any:
    """Count records per hour or day and key of one dimension (chart series)."""
    require_role(request, Role.VIEWER, action="api:list_rollups")
    rows = selectors.rollup_series(
        dimension=query.dimension,
        host=query.host,
        model=query.model,
        since=query.since,
        until=query.until,
        bucket=query.bucket,
    )
    return {"dimension": query.dimension, "bucket": query.bucket, "rows": rows}
