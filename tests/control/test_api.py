"""The control API through HTTP: agent and operator tokens, sessions, roles, audit."""

import csv
import io
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from pi_dashboard.accounts.models import ApiToken
from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.control.models import Command, CommandState
from pi_dashboard.fleet.models import Agent
from tests.control.conftest import AMD, GLM, GPT, XEON, make_operator_token

pytestmark = pytest.mark.django_db

REMOVE = {
    "host": AMD,
    "model": GPT,
    "kind": "remove_rule",
    "params": {"mode": "jsonStringParse"},
}


@pytest.fixture
def op_token(operator):
    return make_operator_token(operator)


def test_operator_token_creates_a_command(api, fleet, op_token):
    response = api("POST", "/commands", op_token, REMOVE)
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {
        "id", "host", "model", "kind", "params", "state", "created_at",
        "expires_at", "delivered_at", "finished_at", "result", "error",
        "confirmed_at", "created_by",
    }  # fmt: skip
    assert (body["host"], body["model"], body["state"]) == (AMD, GPT, "pending")
    assert body["created_by"] == "otto-operator"
    assert api("GET", f"/commands/{body['id']}", op_token).json() == body


def test_bad_command_gets_a_clear_400(api, fleet, op_token):
    response = api("POST", "/commands", op_token, {**REMOVE, "params": {}})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_params"
    assert "params.mode" in response.json()["detail"]
    response = api("POST", "/commands", op_token, {"host": AMD})
    assert response.status_code == 422


def test_viewer_may_read_but_not_create(api, fleet, viewer, op_token):
    token = make_operator_token(viewer)
    response = api("POST", "/commands", token, REMOVE)
    assert response.status_code == 403
    assert response.json()["code"] == "forbidden"
    refused = AuditEntry.objects.get(outcome="refused")
    assert (refused.actor_label, refused.action) == (
        "vera-viewer",
        "api:create_command",
    )
    assert not Command.objects.exists()
    api("POST", "/commands", op_token, REMOVE)
    listed = api("GET", f"/commands?host={AMD}&state=pending", token)
    assert listed.status_code == 200
    assert [c["kind"] for c in listed.json()["commands"]] == ["remove_rule"]
    assert api("GET", f"/commands?host={XEON}", token).json() == {"commands": []}


def test_revoked_unknown_and_missing_tokens_are_401(api, fleet, operator, op_token):
    ApiToken.objects.update(revoked_at=timezone.now())
    for token in (op_token, "pid_op_nonsense", None, "pid_ag_nonsense"):
        response = api("POST", "/commands", token, REMOVE)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"


def test_outsider_session_is_401(fleet, outsider):
    client = Client()
    client.force_login(outsider)
    assert client.get("/api/v1/commands").status_code == 401


def test_session_needs_csrf_for_post(fleet, operator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post("/api/v1/commands", REMOVE, content_type="application/json")
    assert response.status_code == 403
    assert not Command.objects.exists()
    client.get("/commands/")  # a page sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/api/v1/commands",
        REMOVE,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 201


def test_unknown_command_is_404(api, fleet, op_token):
    response = api("GET", "/commands/6f1c1c2e-0000-4000-8000-000000000000", op_token)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


# --- agent side -----------------------------------------------------------


def test_agent_pull_and_ack_round_trip(api, fleet, op_token, amd_agent, xeon_agent):
    command_id = api("POST", "/commands", op_token, REMOVE).json()["id"]
    assert api("GET", "/agent/commands", xeon_agent[1]).json() == {"commands": []}
    pulled = api("GET", "/agent/commands?wait=0", amd_agent[1]).json()["commands"]
    assert pulled == [
        {
            "id": command_id,
            "kind": "remove_rule",
            "model": GPT,
            "params": {"mode": "jsonStringParse"},
            "created_at": pulled[0]["created_at"],
            "expires_at": pulled[0]["expires_at"],
        }
    ]
    ack = {"status": "applied", "result": {"removed": True, "via": "file"}}
    path = f"/agent/commands/{command_id}/ack"
    assert api("POST", path, xeon_agent[1], ack).status_code == 404
    response = api("POST", path, amd_agent[1], ack)
    assert response.json() == {"id": command_id, "state": "applied"}
    assert api("POST", path, amd_agent[1], ack).status_code == 200
    shown = api("GET", f"/commands/{command_id}", op_token).json()
    assert shown["result"] == {"removed": True, "via": "file"}
    assert shown["state"] == "applied"


def test_ack_of_expired_command_is_409(api, fleet, op_token, amd_agent):
    command_id = api("POST", "/commands", op_token, REMOVE).json()["id"]
    Command.objects.update(expires_at=timezone.now() - timedelta(seconds=5))
    response = api(
        "POST", f"/agent/commands/{command_id}/ack", amd_agent[1], {"status": "applied"}
    )
    assert response.status_code == 409
    assert response.json()["code"] == "expired"
    assert Command.objects.get().state == CommandState.EXPIRED


def test_ack_with_bad_status_is_422(api, fleet, op_token, amd_agent):
    command_id = api("POST", "/commands", op_token, REMOVE).json()["id"]
    path = f"/agent/commands/{command_id}/ack"
    assert api("POST", path, amd_agent[1], {"status": "done"}).status_code == 422


def test_agent_auth_rules(api, fleet, amd_agent, op_token):
    assert api("GET", "/agent/commands?wait=26", amd_agent[1]).status_code == 422
    assert api("GET", "/agent/commands", op_token).status_code == 401
    Agent.objects.update(revoked_at=timezone.now())
    response = api("GET", "/agent/commands", amd_agent[1])
    assert (response.status_code, response.json()["code"]) == (401, "unauthorized")


def test_unbound_agent_gets_409(api, db):
    from tests.control.conftest import make_agent

    _, token = make_agent("new", None)
    response = api("GET", "/agent/commands", token)
    assert (response.status_code, response.json()["code"]) == (409, "agent_not_bound")


# --- audit ----------------------------------------------------------------


def test_audit_filters_and_cursor(api, fleet, op_token, viewer):
    for mode in ("jsonStringParse", "numberFromString", "nullOptionalDrop"):
        api("POST", "/commands", op_token, {**REMOVE, "params": {"mode": mode}})
    api("POST", "/commands", op_token, {**REMOVE, "host": XEON, "model": GLM})
    token = make_operator_token(viewer)
    page = api("GET", f"/audit?host={AMD}&limit=2", token).json()
    assert [e["detail"]["params"]["mode"] for e in page["entries"]] == [
        "nullOptionalDrop",
        "numberFromString",
    ]
    older = api("GET", f"/audit?host={AMD}&limit=2&cursor={page['next_cursor']}", token)
    assert [e["detail"]["params"]["mode"] for e in older.json()["entries"]] == [
        "jsonStringParse"
    ]
    assert older.json()["next_cursor"] is None
    refused = api("GET", "/audit?outcome=refused", token).json()["entries"]
    assert [(e["host"], e["model"]) for e in refused] == [(XEON, GLM)]
    assert refused[0]["detail"]["code"] == "rule_not_present"
    assert api("GET", "/audit?actor=nobody", token).json()["entries"] == []
    bad = api("GET", "/audit?cursor=garbage!", token)
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_cursor")
    since = (timezone.now() + timedelta(hours=1)).isoformat().replace("+", "%2B")
    assert api("GET", f"/audit?since={since}", token).json()["entries"] == []


def test_audit_csv_export(api, fleet, op_token, viewer):
    api("POST", "/commands", op_token, REMOVE)
    AuditEntry.objects.create(
        actor_label="=HYPERLINK(evil)", action="command.create", outcome="refused"
    )
    response = api("GET", "/audit.csv", make_operator_token(viewer))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:6] == ["at", "actor", "action", "outcome", "host", "model"]
    assert rows[1][1] == "'=HYPERLINK(evil)"  # never a live formula
    assert rows[2][1:6] == ["otto-operator", "command.create", "ok", AMD, GPT]
    assert '"mode": "jsonStringParse"' in rows[2][8] or "jsonStringParse" in rows[2][8]
    filtered = api("GET", "/audit.csv?outcome=ok", make_operator_token(viewer, "b"))
    assert len(list(csv.reader(io.StringIO(
        b"".join(filtered.streaming_content).decode()
    )))) == 2  # fmt: skip
