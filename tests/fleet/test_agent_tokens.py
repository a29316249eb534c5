"""Agent tokens: the management command, the admin, whoami and heartbeat."""

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.fleet.models import Agent, Host
from pi_dashboard.lib.tokens import token_hash

FINGERPRINT = {
    "id": "apple-m2-pro-12c-32g",
    "cpu": "Apple M2 Pro",
    "cores": 12,
    "totalMemGb": 32,
}


def run(*args: str) -> str:
    out = StringIO()
    call_command("agent_token", *args, stdout=out)
    return out.getvalue()


def token_in(output: str) -> str:
    return next(
        line.split()[1] for line in output.splitlines() if line.startswith("token ")
    )


def whoami(token: str) -> Any:
    return Client().get("/api/v1/agent/whoami", HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.mark.django_db
def test_issue_rotate_revoke_list() -> None:
    token = token_in(run("issue", "build-box"))
    assert token.startswith("pid_ag_")
    agent = Agent.objects.get(name="build-box")
    assert agent.token_hash == token_hash(token)
    assert token not in agent.token_hash
    response = whoami(token)
    assert response.status_code == 200
    assert response.json()["name"] == "build-box"
    assert response.json()["host"] is None

    new_token = token_in(run("rotate", "build-box"))
    assert whoami(token).status_code == 401
    assert whoami(new_token).status_code == 200

    run("revoke", str(agent.pk))
    assert whoami(new_token).status_code == 401
    listing = run("list")
    assert "build-box" in listing
    assert "revoked" in listing
    assert new_token not in listing
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"agent_token.issue", "agent_token.rotate", "agent_token.revoke"} <= actions


@pytest.mark.django_db
def test_heartbeat_binds_the_agent_to_its_host() -> None:
    token = token_in(run("issue", "mac"))
    body = {
        "hostname": "mac-mini",
        "host": FINGERPRINT,
        "agent_version": "0.1.0",
        "pi_version": None,
        "state_dir": "/Users/u/.pi/agent/state",
        "lag": {"events_bytes_behind": 10},
    }
    response = Client().post(
        "/api/v1/agent/heartbeat",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 200
    assert response.json()["host"] == FINGERPRINT["id"]
    agent = Agent.objects.get(name="mac")
    assert agent.host is not None
    assert agent.hostname == "mac-mini"
    assert agent.lag["events_bytes_behind"] == 10
    host = Host.objects.get(pi_id=FINGERPRINT["id"])
    assert (host.cpu, host.cores, host.total_mem_gb) == ("Apple M2 Pro", 12, 32.0)
    assert whoami(token).json()["host"] == FINGERPRINT["id"]
    bad = Client().post(
        "/api/v1/agent/heartbeat",
        json.dumps({"hostname": "x", "host": {"id": ""}}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_heartbeat"


@pytest.mark.django_db
def test_admin_issues_rotates_and_revokes(admin_user: Any) -> None:
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    response = client.post(
        "/admin/fleet/agent/add/", {"name": "from-admin"}, follow=True
    )
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    token = next(m.split(": ")[-1] for m in shown if "shown once" in m)
    assert whoami(token).status_code == 200
    agent = Agent.objects.get(name="from-admin")
    response = client.post(
        "/admin/fleet/agent/",
        {"action": "rotate_tokens", "_selected_action": [agent.pk]},
        follow=True,
    )
    new_token = next(
        str(m).split(": ")[-1]
        for m in response.context["messages"]
        if "New token" in str(m)
    )
    assert whoami(token).status_code == 401
    assert whoami(new_token).status_code == 200
    client.post(
        "/admin/fleet/agent/",
        {"action": "revoke_tokens", "_selected_action": [agent.pk]},
    )
    assert whoami(new_token).status_code == 401
