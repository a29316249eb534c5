"""The audit export survives entries stored from hostile input (issue 9 item 6)."""

import csv
import io
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.audit.models import AuditEntry
from tests.control.conftest import AMD, GPT, fleet, make_operator_token, store

pytestmark = pytest.mark.django_db
__all__ = ["fleet", "store"]  # fixtures shared with the control tests


def call(method: str, path: str, token: str, body: bytes = b"") -> Any:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if method == "GET":
        return Client().get(path, **headers)
    return Client().generic(
        method, path, body, content_type="application/json", **headers
    )


def test_audit_export_survives_a_hostile_entry(
    operator: Any, fleet: Any, viewer: Any
) -> None:
    op_token = make_operator_token(operator)
    # Refused (params remove_rule does not take), and audited with what was sent.
    hostile = (
        b'{"host":"' + AMD.encode() + b'","model":"' + GPT.encode() + b'",'
        b'"kind":"remove_rule","params":{"mode":"m","n":18446744073709551616,'
        b'"big":' + b"9" * 90 + b',"neg":-18446744073709551616}}'
    )
    response = call("POST", "/api/v1/commands", op_token, hostile)
    assert 400 <= response.status_code < 500, response.content[:300]
    assert AuditEntry.objects.filter(outcome="refused").count() == 1
    # An entry as an older server stored it: jsonb holds integers orjson refuses.
    AuditEntry.objects.create(
        action="command.create",
        outcome="refused",
        detail={"n": 18446744073709551616, "text": "fine"},
    )
    export = call("GET", "/api/v1/audit.csv", make_operator_token(viewer))
    assert export.status_code == 200
    text = b"".join(export.streaming_content).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) - 1 == AuditEntry.objects.count() == 2  # complete, not cut
    assert any("18446744073709551616" in row[8] for row in rows[1:])
