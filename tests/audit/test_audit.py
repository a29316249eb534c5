"""audit_log stores hostile detail safely (issue 9 item 6)."""

from typing import Any

import pytest

from pi_dashboard.audit import audit

pytestmark = pytest.mark.django_db


def test_audit_stores_hostile_detail_safely(operator: Any) -> None:
    entry = audit.audit_log(
        actor=operator,
        action="test.hostile",
        outcome="refused",
        detail={"n": 2**70, "s": "a\u0000b\ud83d", "f": float("nan")},
    )
    entry.refresh_from_db()
    assert entry.detail == {"n": str(2**70), "s": "a\ufffdb\ufffd", "f": "nan"}
