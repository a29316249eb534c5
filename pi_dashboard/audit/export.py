"""The audit log as CSV, streamed row by row (it can be long)."""

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.lib import jsonsafe

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
    # Rows written before the audit sanitised its input may still hold what UTF-8
    # cannot encode; one such cell must not cut the download short.
    text = "" if value is None else jsonsafe.sanitise_text(str(value))
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
                    # canonical: orjson refuses integers past 64 bits, jsonb holds them.
                    jsonsafe.canonical(entry.detail).decode("ascii"),
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
