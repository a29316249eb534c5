"""Agents page (issue 12 item 5): a token shown once, inside its enroll line."""

import re

import pytest
from django.test import Client

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.fleet.models import Agent


def agent_for_token(secret: str) -> str | None:
    """The agent id the API's whoami answers for the token (None when refused)."""
    response = Client().get(
        "/api/v1/agent/whoami", HTTP_AUTHORIZATION=f"Bearer {secret}"
    )
    return response.json()["agent_id"] if response.status_code == 200 else None


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_admin_issues_a_token_and_sees_the_enroll_line_once(admin_user) -> None:
    client = logged_in(admin_user)
    assert "Agents and their tokens" in client.get("/").content.decode()
    response = client.post("/agents/", {"name": "build-07"})
    body = response.content.decode()
    assert response.status_code == 200
    line = re.search(
        r"pi-dashboard-agent enroll --server http://testserver "
        r"--token (pid_ag_[A-Za-z0-9_-]+)<",
        body,
    )
    assert line is not None, body
    secret = line.group(1)
    agent = Agent.objects.get(name="build-07")
    assert agent_for_token(secret) == str(agent.pk)
    assert 'data-copy="enroll-line"' in body
    # Shown once: the list afterwards has the agent, never the secret.
    again = client.get("/agents/").content.decode()
    assert "build-07" in again
    assert secret not in again
    assert AuditEntry.objects.filter(
        action="agent_token.issue", actor_label=admin_user.username
    ).exists()


def test_admin_rotates_and_revokes(admin_user) -> None:
    client = logged_in(admin_user)
    client.post("/agents/", {"name": "box"})
    agent = Agent.objects.get(name="box")
    rotated = client.post(f"/agents/{agent.pk}/rotate/").content.decode()
    secret = re.search(r"--token (pid_ag_[A-Za-z0-9_-]+)<", rotated).group(1)
    assert agent_for_token(secret) == str(agent.pk)
    response = client.post(f"/agents/{agent.pk}/revoke/", follow=True)
    assert "is revoked" in response.content.decode()
    assert agent_for_token(secret) is None


@pytest.mark.parametrize("name", ["", " ", "x" * 201])
def test_bad_name_is_a_form_error(admin_user, name) -> None:
    response = logged_in(admin_user).post("/agents/", {"name": name})
    assert response.status_code == 400
    assert not Agent.objects.exists()


def test_operator_may_not_issue(operator) -> None:
    client = logged_in(operator)
    assert client.get("/agents/").status_code == 403
    assert client.post("/agents/", {"name": "x"}).status_code == 403
    assert not Agent.objects.exists()
    assert 'href="/agents/"' not in client.get("/").content.decode()
