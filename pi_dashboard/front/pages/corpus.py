"""Read queries behind the failure-corpus page (issue 12 items 15-16).

pi writes a `tool_validation` corpus line for each call its validator bounced, with
the call's sanitised *shape* (paths and types, never values). Across hosts and models
the same shape recurs; grouping them says which failures pi cannot repair yet. A
shape counts as *fixed* when some validation event in the same selection, for the same
tool and failure modes, ended `repaired`: a repair mode exists and fired. Shapes
nothing fixed come first: they are the candidates for a new repair mode.
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from pi_dashboard.fleet.models import Host, Model
from pi_dashboard.ingest.models import CorpusKind, CorpusRecord, EventKind, EventRecord
from pi_dashboard.lib import jsonsafe

# Rows grouped per page load; beyond it the page says it looked at the newest only.
MAX_ROWS = 20_000
MAX_NEXT_ACTIONS = 3


@dataclass(frozen=True)
class Selection:
    since: datetime
    until: datetime | None = None
    model_key: str = ""
    host_id: str = ""


@dataclass
class Group:
    """Records that share a key; `trend` compares the selection's two halves."""

    key: tuple[Any, ...]
    count: int = 0
    first_at: datetime | None = None
    last_at: datetime | None = None
    hosts: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)
    early: int = 0
    late: int = 0
    is_fixed: bool = False
    texts: Counter[str] = field(default_factory=Counter)

    def add(self, row: CorpusRecord, midpoint: datetime, text: str = "") -> None:
        self.count += 1
        self.first_at = min(self.first_at or row.ts, row.ts)
        self.last_at = max(self.last_at or row.ts, row.ts)
        self.hosts.add(row.host.pi_id)
        if row.model is not None:
            self.models.add(row.model.key)
        if row.ts < midpoint:
            self.early += 1
        else:
            self.late += 1
        if text:
            self.texts[text] += 1

    @property
    def trend(self) -> str:
        if self.late > self.early:
            return "rising"
        return "falling" if self.late < self.early else "steady"

    @property
    def top_texts(self) -> list[tuple[str, int]]:
        return self.texts.most_common(MAX_NEXT_ACTIONS)


@dataclass
class Corpus:
    shapes: list[Group]
    execution: list[Group]
    provider: list[Group]
    rows: int
    is_truncated: bool


def corpus_queryset(selection: Selection) -> QuerySet[CorpusRecord]:
    """Corpus records of the selection, newest first."""
    rows = selected(CorpusRecord.objects.all(), selection)
    return rows.select_related("host", "model").order_by("-ts", "-id")


def selected(rows: QuerySet[Any], selection: Selection) -> QuerySet[Any]:
    """Corpus or event rows of the selection (both have ts, model and host)."""
    rows = rows.filter(ts__gte=selection.since)
    if selection.until is not None:
        rows = rows.filter(ts__lt=selection.until)
    if selection.model_key:
        rows = rows.filter(model__key=selection.model_key)
    if selection.host_id:
        rows = rows.filter(host__pi_id=selection.host_id)
    return rows


def shape_key(payload: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two bounces the same failure: tool, modes, keywords, shape."""
    shape = payload.get("shape") or []
    return (
        str(payload.get("tool", "")),
        tuple(sorted(str(m) for m in payload.get("failureModes") or [])),
        tuple(sorted(str(k) for k in payload.get("errorKeywords") or [])),
        tuple(
            sorted(
                "{path}: {receivedType} for {expectedType} ({keyword})".format(
                    path=item.get("path", "?"),
                    receivedType=item.get("receivedType", "?"),
                    expectedType=item.get("expectedType", "?"),
                    keyword=item.get("keyword", "?"),
                )
                for item in shape
                if isinstance(item, dict)
            )
        ),
    )


def repaired_modes(selection: Selection) -> set[tuple[str, tuple[str, ...]]]:
    """(tool, failure modes) pairs some validation in the selection repaired."""
    events = selected(
        EventRecord.objects.filter(kind=EventKind.VALIDATION, outcome="repaired"),
        selection,
    )
    pairs = set()
    for tool, payload in events.values_list("tool", "payload")[:MAX_ROWS]:
        modes = tuple(sorted(str(m) for m in payload.get("failureModes") or []))
        pairs.add((tool, modes))
    return pairs


def corpus_groups(selection: Selection, *, now: datetime) -> Corpus:
    rows = list(corpus_queryset(selection)[: MAX_ROWS + 1])
    is_truncated = len(rows) > MAX_ROWS
    rows = rows[:MAX_ROWS]
    # Trends compare the two halves of the time the records span (not of the
    # range asked for, which may start long before the first of them).
    start = rows[-1].ts if rows else selection.since
    end = rows[0].ts if rows else (selection.until or now)
    midpoint = start + (end - start) / 2
    shapes: dict[tuple[Any, ...], Group] = {}
    execution: dict[tuple[Any, ...], Group] = {}
    provider: dict[tuple[Any, ...], Group] = {}
    for row in rows:
        payload = jsonsafe.faithful(row.payload, row.original)
        if row.kind == CorpusKind.TOOL_VALIDATION:
            key = shape_key(payload)
            shapes.setdefault(key, Group(key)).add(row, midpoint)
        elif row.kind == CorpusKind.TOOL_EXECUTION:
            key = (row.failure_code or "(none)", row.phase)
            text = str(payload.get("nextAction") or "")
            execution.setdefault(key, Group(key)).add(row, midpoint, text)
        else:
            key = (row.reason or "(none)",)
            text = str(payload.get("message") or payload.get("error") or "")
            provider.setdefault(key, Group(key)).add(row, midpoint, text[:300])
    fixed = repaired_modes(selection)
    for group in shapes.values():
        group.is_fixed = (group.key[0], group.key[1]) in fixed
    return Corpus(
        shapes=sorted(shapes.values(), key=lambda g: (g.is_fixed, -g.count)),
        execution=_by_count(execution.values()),
        provider=_by_count(provider.values()),
        rows=len(rows),
        is_truncated=is_truncated,
    )


def _by_count(groups: Iterable[Group]) -> list[Group]:
    return sorted(groups, key=lambda g: -g.count)


def corpus_filter_options() -> dict[str, list[str]]:
    """Models and hosts that have corpus lines, for the filter menus."""
    return {
        "models": list(
            Model.objects.filter(corpus__isnull=False)
            .distinct()
            .order_by("key")
            .values_list("key", flat=True)
        ),
        "hosts": list(
            Host.objects.filter(corpus__isnull=False)
            .distinct()
            .order_by("pi_id")
            .values_list("pi_id", flat=True)
        ),
    }
