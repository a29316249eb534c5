"""An agent speaks for one pi host: the cross-host attacks of issue 9.2."""

import copy
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from pi_dashboard.control import services as control_services
from pi_dashboard.control.models import AuditEntry, AuditOutcome
from pi_dashboard.fleet.models import Agent, HostModel
from tests.ingest.support import AgentClient, fingerprint_of

AMD = "amd-ryzen-9-7950x-16-core-processor-32c-64g"
XEON = "intel-r-xeon-r-gold-6338-cpu-2-00ghz-128c-512g"
GLM = "llamacpp/glm-4.6"


@pytest.fixture
def shared(pi_fixtures: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        (pi_fixtures / "model-adaptation.json").read_bytes()
    )
    return document


@pytest.fixture
def agents(db: None, pi_fixtures: Path, shared: dict[str, Any]) -> dict[str, Any]:
    """An agent on the AMD host and one on the Xeon, each having shipped its store."""
    found = {}
    for host_id in (AMD, XEON):
        agent = AgentClient.enroll(f"agent-{host_id[:5]}")
        assert agent.heartbeat(fingerprint_of(pi_fixtures / host_id)).status_code == 200
        assert agent.snapshot(json.dumps(shared).encode()).status_code == 200
        found[host_id] = agent
    return found


def xeon_rules() -> list[str]:
    row = HostModel.objects.get(host__pi_id=XEON, model__key=GLM)
    return [rule["mode"] for rule in row.entry["profile"]["rules"]]


def test_heartbeat_naming_another_host_is_refused_and_audited(
    agents: dict[str, Any], pi_fixtures: Path, operator: Any
) -> None:
    amd = agents[AMD]
    xeon_fp = fingerprint_of(pi_fixtures / XEON)
    for _ in range(2):
        response = amd.heartbeat(xeon_fp)
        assert response.status_code == 409
        assert response.json()["code"] == "host_mismatch"
        assert "rebind" in response.json()["detail"]
    stored = Agent.objects.select_related("host").get(pk=amd.agent.pk)
    assert stored.host is not None
    assert stored.host.pi_id == AMD
    assert stored.claimed_host_id == XEON
    refusals = AuditEntry.objects.filter(
        action="agent.heartbeat", outcome=AuditOutcome.REFUSED
    )
    # Audited once per new claim, not every 30 s.
    assert [e.detail["claimed"] for e in refusals] == [XEON]

    # The Xeon's commands stay out of the AMD agent's reach: not pulled, not acked.
    command = control_services.command_create(
        actor=operator,
        host=XEON,
        model=GLM,
        kind="remove_rule",
        params={"mode": "numberFromString"},
    )
    headers = {"HTTP_AUTHORIZATION": f"Bearer {amd.token}"}
    pulled = Client().get("/api/v1/agent/commands?wait=0", **headers).json()
    assert pulled["commands"] == []
    ack = Client().post(
        f"/api/v1/agent/commands/{command.pk}/ack",
        json.dumps({"status": "applied", "result": {"removed": True}}),
        content_type="application/json",
        **headers,
    )
    assert ack.status_code == 404
    command.refresh_from_db()
    assert command.state == "pending"


def test_snapshot_updates_only_the_bound_hosts_bucket(
    agents: dict[str, Any], shared: dict[str, Any]
) -> None:
    assert len(xeon_rules()) == 3
    forged = copy.deepcopy(shared)
    forged["hosts"][XEON][GLM]["profile"]["rules"] = []
    response = agents[AMD].snapshot(json.dumps(forged).encode(), seq=10)
    assert response.status_code == 200
    body = response.json()
    assert (body["hosts"], body["ignored_hosts"]) == (1, 2)
    assert len(xeon_rules()) == 3
    # Its own host's bucket is applied as usual.
    forged["hosts"][AMD][GLM]["profile"]["rules"] = []
    agents[AMD].snapshot(json.dumps(forged).encode(), seq=11)
    assert HostModel.objects.get(host__pi_id=AMD, model__key=GLM).rule_count == 0
    assert len(xeon_rules()) == 3


def test_an_admin_rebinds_through_the_command(
    agents: dict[str, Any], pi_fixtures: Path
) -> None:
    amd = agents[AMD]
    xeon_fp = fingerprint_of(pi_fixtures / XEON)
    assert amd.heartbeat(xeon_fp).status_code == 409
    out = StringIO()
    call_command("agent_token", "list", stdout=out)
    assert f"claims {XEON}" in out.getvalue()
    call_command("agent_token", "rebind", amd.agent.name, stdout=out)
    assert f"from host {AMD}" in out.getvalue()
    assert amd.heartbeat(xeon_fp).status_code == 200
    stored = Agent.objects.select_related("host").get(pk=amd.agent.pk)
    assert stored.host is not None
    assert (stored.host.pi_id, stored.claimed_host_id) == (XEON, "")
    entry = AuditEntry.objects.get(action="agent_token.rebind")
    assert (entry.detail["was"], entry.actor_label) == (AMD, "manage.py agent_token")


def test_an_admin_rebinds_in_the_admin(
    agents: dict[str, Any], pi_fixtures: Path, admin_user: Any
) -> None:
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    amd = agents[AMD]
    xeon_fp = fingerprint_of(pi_fixtures / XEON)
    assert amd.heartbeat(xeon_fp).status_code == 409
    client = Client()
    client.force_login(admin_user)
    listing = client.get("/admin/fleet/agent/")
    assert XEON in listing.content.decode()
    response = client.post(
        "/admin/fleet/agent/",
        {"action": "rebind_hosts", "_selected_action": [amd.agent.pk]},
        follow=True,
    )
    assert "binds to the pi host its next heartbeat names" in response.content.decode()
    assert amd.heartbeat(xeon_fp).status_code == 200
    assert AuditEntry.objects.get(action="agent_token.rebind").actor_label == (
        f"admin:{admin_user.username}"
    )
