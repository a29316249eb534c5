"""The audit log as CSV, streamed row by row (it can be long)."""

import csv
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

from pi_dashboard.audit.models import AuditEntry

CSV_HEADER = (
    "at",
    "actor",
    "action",
    "outcome",
    "host",
    "model",
    "command",
    "ip_address",
    "detail",
)
# Spreadsheets run cells that start with these as formulas (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class _Echo:
    def write(self, value: str) -> str:
        return value


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def audit_csv_lines(entries: Iterable[AuditEntry]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_HEADER)
    for entry in entries:
        yield writer.writerow(
            [
                _cell(value)
                for value in (
                    entry.at.isoformat(),
                    entry.actor_label,
                    entry.action,
                    entry.outcome,
                    entry.host.pi_id if entry.host else "",
                    entry.model.key if entry.model else "",
                    entry.command_id or "",
                    entry.ip_address or "",
                    orjson.dumps(entry.detail, option=orjson.OPT_SORT_KEYS).decode(),
                )
            ]
        )


def audit_csv_response(entries: QuerySet[AuditEntry]) -> StreamingHttpResponse:
    name = f"pi-dashboard-audit-{timezone.now():%Y%m%d-%H%M%S}.csv"
    response = StreamingHttpResponse(
        audit_csv_lines(entries.iterator(chunk_size=2000)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
