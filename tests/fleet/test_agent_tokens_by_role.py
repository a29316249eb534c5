"""Agent tokens are the admin role's, not only Django superusers' (UI and API)."""

from typing import Any

import pytest
from django.test import Client

from pi_dashboard.accounts import services as account_services
from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.fleet.models import Agent
from tests.fleet.test_agent_tokens import admin_issue, whoami

pytestmark = pytest.mark.django_db


def bearer(user: Any) -> dict[str, str]:
    _, secret = account_services.api_token_issue(actor=user, user=user, name="t")
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def test_admin_role_without_superuser_or_staff_uses_the_admin_ui(
    admin_user: Any,
) -> None:
    assert not admin_user.is_superuser
    assert not admin_user.is_staff
    client = Client()
    client.force_login(admin_user)
    token = admin_issue(client, "from-role-admin")
    assert whoami(token).status_code == 200
    agent = Agent.objects.get(name="from-role-admin")
    revoked = client.post(
        "/admin/fleet/agent/",
        {"action": "revoke_tokens", "_selected_action": [agent.pk]},
    )
    assert revoked.status_code == 302
    assert whoami(token).status_code == 401


def test_operator_is_refused_the_agent_admin(operator: Any) -> None:
    operator.is_staff = True
    operator.save()
    client = Client()
    client.force_login(operator)
    assert client.get("/admin/fleet/agent/").status_code == 403
    assert client.post("/admin/fleet/agent/add/", {"name": "x"}).status_code == 403
    assert not Agent.objects.exists()


def test_admin_role_issues_lists_and_revokes_over_the_api(admin_user: Any) -> None:
    client = Client()
    auth = bearer(admin_user)
    issued = client.post(
        "/api/v1/agents", {"name": "ci-runner"}, content_type="application/json", **auth
    )
    assert issued.status_code == 201, issued.content
    body = issued.json()
    assert body["token"].startswith("pid_ag_")
    assert body["token"].startswith(body["token_prefix"])
    assert whoami(body["token"]).status_code == 200
    listed = client.get("/api/v1/agents", **auth).json()
    assert [a["name"] for a in listed] == ["ci-runner"]
    assert "token" not in listed[0]
    revoked = client.post(f"/api/v1/agents/{body['id']}/revoke", **auth)
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert whoami(body["token"]).status_code == 401
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"agent_token.issue", "agent_token.revoke"} <= actions


def test_operator_gets_403_and_is_audited(operator: Any) -> None:
    agent_id = "6f1c1c2e-0000-4000-8000-000000000000"
    client = Client()
    auth = bearer(operator)
    issued = client.post(
        "/api/v1/agents", {"name": "x"}, content_type="application/json", **auth
    )
    assert issued.status_code == 403
    assert issued.json()["code"] == "forbidden"
    assert client.post(f"/api/v1/agents/{agent_id}/revoke", **auth).status_code == 403
    assert not Agent.objects.exists()
    assert AuditEntry.objects.filter(
        action="api:issue_agent_token", outcome=AuditOutcome.REFUSED
    ).exists()


def test_anonymous_gets_401_with_www_authenticate() -> None:
    response = Client(enforce_csrf_checks=True).post(
        "/api/v1/agents", {"name": "x"}, content_type="application/json"
    )
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_unknown_agent_is_404_and_blank_name_400(admin_user: Any) -> None:
    client = Client()
    auth = bearer(admin_user)
    missing = client.post(
        "/api/v1/agents/6f1c1c2e-0000-4000-8000-000000000000/revoke", **auth
    )
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found"
    blank = client.post(
        "/api/v1/agents", {"name": "  "}, content_type="application/json", **auth
    )
    assert blank.status_code == 400
    assert blank.json()["code"] == "invalid_name"
