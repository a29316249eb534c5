"""The heartbeat's reports (store, capabilities, ingest) and host binding."""

import json
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.fleet.models import Agent
from tests.ingest.support import AgentClient

FINGERPRINT = {
    "id": "amd-ryzen-16c-64g",
    "cpu": "AMD Ryzen",
    "cores": 16,
    "totalMemGb": 64,
}
REPORTS = {
    "store": {
        "status": "unreadable",
        "reason": "version is 2, pi reads only 1",
        "host_ids": ["intel-i7-8c-16g"],
    },
    "capabilities": {
        "probe": False,
        "rpc": True,
        "why": "no pi_command in the agent config",
    },
    "ingest": {
        "rejected_lines": 2,
        "quarantined_lines": 1,
        "spool_dropped": 0,
        "last_problem": "line 7 nested too deep",
        "last_problem_at": "2026-12-01T20:00:00Z",
    },
}


def beat(agent: AgentClient, fingerprint: dict[str, Any], **extra: Any) -> Any:
    body = {"hostname": "box", "host": fingerprint, **extra}
    return agent.client.post(
        "/api/v1/agent/heartbeat",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {agent.token}",
    )


@pytest.mark.django_db
def test_heartbeat_stores_the_agents_reports() -> None:
    agent = AgentClient.enroll("reports")
    assert beat(agent, FINGERPRINT, **REPORTS).status_code == 200
    stored = Agent.objects.get(pk=agent.agent.pk)
    assert stored.store == REPORTS["store"]
    assert stored.capabilities == REPORTS["capabilities"]
    assert stored.ingest == REPORTS["ingest"]
    # An old agent omits them: the last reports are replaced by nothing known.
    assert beat(agent, FINGERPRINT).status_code == 200
    stored.refresh_from_db()
    assert (stored.store, stored.capabilities, stored.ingest) == ({}, {}, {})


@pytest.mark.django_db
@pytest.mark.parametrize(
    "store",
    [
        {"status": "broken"},
        {"status": "ok", "reason": "x" * 501},
        {"status": "ok", "host_ids": ["h"] * 101},
        {"reason": "no status"},
    ],
)
def test_heartbeat_refuses_a_malformed_store_report(store: dict[str, Any]) -> None:
    agent = AgentClient.enroll("bad-report")
    response = beat(agent, FINGERPRINT, store=store)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_heartbeat"
    assert Client().get("/api/v1/schemas/heartbeat").json()["properties"]["store"]


def host_page(user: Any) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/hosts/{FINGERPRINT['id']}/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
def test_an_unreadable_store_is_urgent_on_the_host_page(viewer: Any) -> None:
    agent = AgentClient.enroll("broken-store")
    assert beat(agent, FINGERPRINT, **REPORTS).status_code == 200
    shown = host_page(viewer)
    assert "Urgent:" in shown
    assert "version is 2, pi reads only 1" in shown
    assert "replace every other host&#x27;s data" in shown
    client = Client()
    client.force_login(viewer)
    api = client.get(f"/api/v1/hosts/{FINGERPRINT['id']}").json()
    assert api["agents"][0]["store"]["status"] == "unreadable"
    assert api["agents"][0]["capabilities"]["rpc"] is True
    assert api["agents"][0]["ingest"]["quarantined_lines"] == 1


@pytest.mark.django_db
def test_a_store_of_other_machines_says_whose_buckets_it_holds(viewer: Any) -> None:
    agent = AgentClient.enroll("copied-store")
    store = {"status": "ok", "host_ids": ["intel-i7-8c-16g", "apple-m1-8c-16g"]}
    assert beat(agent, FINGERPRINT, store=store).status_code == 200
    shown = host_page(viewer)
    assert "0 models because the store&#x27;s buckets belong to" in shown
    assert "intel-i7-8c-16g, apple-m1-8c-16g" in shown
    assert f"this machine&#x27;s pi host id is {FINGERPRINT['id']}" in shown
    # Its own bucket among them: nothing to say.
    store["host_ids"].append(FINGERPRINT["id"])
    assert beat(agent, FINGERPRINT, store=store).status_code == 200
    assert "0 models because" not in host_page(viewer)
    assert "Urgent:" not in host_page(viewer)
