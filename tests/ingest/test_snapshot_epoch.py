"""Snapshot order survives an agent reinstall (issue 13 item 2, X-Snapshot-Epoch).

A reinstalled agent (state file wiped) counts from 1 again in a new epoch: the
server takes the new order as the truth and audits it; a late snapshot of the
epoch it left stays stale. Through the HTTP API, read back as a user reads it.
"""

from typing import Any

import pytest
from django.test import Client

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.fleet.models import HostModel
from tests.fleet.test_snapshot import HOST, KEY, entry, rule, store
from tests.ingest.support import AgentClient

OLD, NEW = "0123456789abcdef", "fedcba9876543210"
WITH_RULE = store(
    entry(
        "2026-08-02T00:00:00.000Z",
        rules=[rule("numberFromString", "2026-08-01T00:00:00.000Z")],
    )
)
WITHOUT = store(entry("2026-08-03T00:00:00.000Z"))


@pytest.fixture
def agent(db: None) -> AgentClient:
    agent = AgentClient.enroll()
    assert agent.heartbeat(HOST).status_code == 200
    return agent


def modes(viewer: Any) -> list[str]:
    reader = Client()
    reader.force_login(viewer)
    state = reader.get(f"/api/v1/hosts/{HOST['id']}/models/{KEY}").json()
    return [r["mode"] for r in state["rules"]]


def status(response: Any) -> str:
    assert response.status_code == 200, response.content
    answer: str = response.json()["status"]
    return answer


def test_a_reinstalled_agents_new_epoch_is_accepted_and_audited(
    agent: AgentClient, viewer: Any
) -> None:
    assert status(agent.snapshot(WITHOUT, seq=40, epoch=OLD)) == "stored"
    assert status(agent.snapshot(WITH_RULE, seq=41, epoch=OLD)) == "stored"
    assert modes(viewer) == ["numberFromString"]
    assert not AuditEntry.objects.filter(action__contains="order").exists()
    # Reinstalled: counting from 1 in a new epoch; what it sends is the file now.
    assert status(agent.snapshot(WITHOUT, seq=1, epoch=NEW)) == "stored"
    assert modes(viewer) == []
    restarted = AuditEntry.objects.get(action="agent.snapshot_order_restarted")
    assert "Snapshot order restarted" in restarted.summary
    assert (restarted.detail["was_seq"], restarted.detail["seq"]) == (41, 1)
    assert restarted.host is not None
    assert restarted.host.pi_id == HOST["id"]
    # The new order goes on as before: a lower number in it is stale.
    assert status(agent.snapshot(WITH_RULE, seq=3, epoch=NEW)) == "stored"
    assert status(agent.snapshot(WITHOUT, seq=2, epoch=NEW)) == "stale"
    assert modes(viewer) == ["numberFromString"]
    # The audit page names it.
    admin_page = Client()
    admin_page.force_login(viewer)
    shown = admin_page.get("/audit/").content.decode()
    assert "Snapshot order restarted" in shown


def test_a_late_snapshot_of_the_old_epoch_is_stale(
    agent: AgentClient, viewer: Any
) -> None:
    assert status(agent.snapshot(WITH_RULE, seq=7, epoch=OLD)) == "stored"
    assert status(agent.snapshot(WITHOUT, seq=1, epoch=NEW)) == "stored"
    # A send of the old install, delivered late (a retried request): stale, even
    # with a number above the new epoch's.
    assert status(agent.snapshot(WITH_RULE, seq=8, epoch=OLD)) == "stale"
    assert modes(viewer) == []
    assert (
        AuditEntry.objects.filter(action="agent.snapshot_order_restarted").count() == 1
    )


def test_without_an_epoch_the_number_alone_decides(
    agent: AgentClient, viewer: Any
) -> None:
    assert status(agent.snapshot(WITH_RULE, seq=5)) == "stored"
    assert status(agent.snapshot(WITHOUT, seq=1)) == "stale"
    assert modes(viewer) == ["numberFromString"]
    # The agent upgraded to send epochs, still counting up: no restart is audited.
    assert status(agent.snapshot(WITHOUT, seq=6, epoch=NEW)) == "stored"
    assert modes(viewer) == []
    assert not AuditEntry.objects.filter(action__contains="order").exists()


@pytest.mark.parametrize(
    ("epoch", "seq"),
    [("", 1), ("x" * 65, 1), ("ab cd", 1), ("é", 1), (OLD, None)],
)
def test_a_bad_epoch_is_400(agent: AgentClient, epoch: str, seq: int | None) -> None:
    response = agent.snapshot(WITH_RULE, seq=seq, epoch=epoch)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_epoch"
    assert not HostModel.objects.exists()
