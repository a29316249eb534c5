"""A confirmed command that a later snapshot undid becomes reverted (issue 13.2, 13.4).

Through the interfaces: the agent's HTTP calls, the operator's pages.
"""

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.control import services
from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Change, HostModel
from tests.control.conftest import AMD, GPT
from tests.ingest.support import AgentClient, fingerprint_of

MODE = "jsonStringParse"
HOST_MODEL_PAGE = f"/hosts/{AMD}/models/{GPT}/"


@pytest.fixture
def shared(pi_fixtures: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        (pi_fixtures / "model-adaptation.json").read_bytes()
    )
    return document


@pytest.fixture
def amd(db: None, pi_fixtures: Path, shared: dict[str, Any]) -> AgentClient:
    agent = AgentClient.enroll("amd-box")
    assert agent.heartbeat(fingerprint_of(pi_fixtures / AMD)).status_code == 200
    assert agent.snapshot(json.dumps(shared).encode(), seq=1).status_code == 200
    return agent


def send(agent: AgentClient, document: dict[str, Any], seq: int) -> dict[str, Any]:
    response = agent.snapshot(json.dumps(document).encode(), seq=seq)
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def rules_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = document["hosts"][AMD][GPT]["profile"]["rules"]
    return rules


def without_rule(document: dict[str, Any]) -> dict[str, Any]:
    """The store as the agent's removal left it: the rule gone, a newer `at`."""
    edited = copy.deepcopy(document)
    entry = edited["hosts"][AMD][GPT]
    entry["profile"]["rules"] = [r for r in rules_of(edited) if r["mode"] != MODE]
    entry["at"] = "2026-08-19T00:00:00.000Z"
    return edited


def removal_applied(agent: AgentClient, operator: Any) -> Command:
    """The operator removes the rule; the agent pulls, applies and acks it."""
    command = services.command_create(
        actor=operator, host=AMD, model=GPT, kind="remove_rule", params={"mode": MODE}
    )
    headers = {"HTTP_AUTHORIZATION": f"Bearer {agent.token}"}
    pulled = Client().get("/api/v1/agent/commands?wait=0", **headers).json()
    assert [c["id"] for c in pulled["commands"]] == [str(command.pk)]
    ack = Client().post(
        f"/api/v1/agent/commands/{command.pk}/ack",
        json.dumps({"status": "applied", "result": {"removed": True, "via": "file"}}),
        content_type="application/json",
        **headers,
    )
    assert ack.status_code == 200
    return command


def page(user: Any, path: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def test_an_older_copy_written_back_reverts_the_removal(
    amd: AgentClient, shared: dict[str, Any], operator: Any, viewer: Any
) -> None:
    command = removal_applied(amd, operator)
    send(amd, without_rule(shared), seq=2)
    command.refresh_from_db()
    assert command.confirmed_at is not None
    # The history names the operator's removal and its command.
    removed = Change.objects.get(kind="rule_removed", mode=MODE)
    assert removed.command_id == command.pk
    history = page(viewer, HOST_MODEL_PAGE)
    assert "rule removed by an operator" in history
    assert f"/commands/{command.pk}/status/" in history

    # pi held its lock past the stale time and wrote its older copy back.
    answer = send(amd, shared, seq=3)
    assert (answer["status"], answer["reverted"]) == ("stored", 1)
    command.refresh_from_db()
    assert (command.state, command.revert_cause) == ("reverted", "overwritten")
    host_model = HostModel.objects.get(host__pi_id=AMD, model__key=GPT)
    assert MODE in [r["mode"] for r in host_model.entry["profile"]["rules"]]
    audit = AuditEntry.objects.get(action="command.reverted")
    assert audit.command_id == command.pk
    assert "the file was overwritten" in audit.summary

    shown = page(viewer, HOST_MODEL_PAGE)
    assert "reverted" in shown
    assert "the file was overwritten" in shown
    assert "Retry" not in shown  # a viewer may not act
    detail = page(operator, f"/commands/{command.pk}/status/")
    assert "the file was overwritten" in detail
    assert "Retry" in detail


def test_retry_removes_the_rule_shown_present_again(
    amd: AgentClient, shared: dict[str, Any], operator: Any
) -> None:
    command = removal_applied(amd, operator)
    send(amd, without_rule(shared), seq=2)
    send(amd, shared, seq=3)
    client = Client()
    client.force_login(operator)
    response = client.post(f"/commands/{command.pk}/retry/", follow=True)
    assert response.status_code == 200
    again = Command.objects.exclude(pk=command.pk).get()
    assert (again.kind, again.params, again.state) == (
        "remove_rule",
        {"mode": MODE},
        "pending",
    )
    assert "Queued again" in response.content.decode()
    retry = AuditEntry.objects.get(action="command.retry")
    assert retry.detail["retry_of"] == str(command.pk)
    # Retrying an open command is refused, with the reason on the page.
    refused = client.post(f"/commands/{again.pk}/retry/", follow=True)
    assert "only a reverted, failed or expired command" in refused.content.decode()


def test_pi_learning_the_rule_again_is_told_apart(
    amd: AgentClient, shared: dict[str, Any], operator: Any, viewer: Any
) -> None:
    command = removal_applied(amd, operator)
    removed = without_rule(shared)
    send(amd, removed, seq=2)
    relearned = copy.deepcopy(removed)
    old = next(r for r in rules_of(shared) if r["mode"] == MODE)
    fresh = {**old, "addedAt": "2026-08-20T00:00:00.000Z"}
    fresh["lastFiredAt"] = fresh["addedAt"]
    rules_of(relearned).append(fresh)
    relearned["hosts"][AMD][GPT]["at"] = "2026-08-20T00:00:00.000Z"
    send(amd, relearned, seq=3)
    command.refresh_from_db()
    assert (command.state, command.revert_cause) == ("reverted", "relearned")
    assert "pi learned the rule again" in page(viewer, HOST_MODEL_PAGE)


def test_a_late_stale_snapshot_reverts_nothing(
    amd: AgentClient, shared: dict[str, Any], operator: Any
) -> None:
    command = removal_applied(amd, operator)
    send(amd, without_rule(shared), seq=3)
    # The older send (seq 1's content, delivered late with seq 2) is stale.
    assert send(amd, shared, seq=2)["status"] == "stale"
    command.refresh_from_db()
    assert command.state == "applied"
    assert command.confirmed_at is not None


def test_nothing_to_remove_says_why(
    amd: AgentClient, shared: dict[str, Any], operator: Any, viewer: Any
) -> None:
    # The rule was last fired long ago: pi prunes it before the removal looks.
    dormant = copy.deepcopy(shared)
    for rule in rules_of(dormant):
        if rule["mode"] == MODE:
            rule["addedAt"] = rule["lastFiredAt"] = "2026-01-01T00:00:00.000Z"
    send(amd, dormant, seq=2)
    command = services.command_create(
        actor=operator, host=AMD, model=GPT, kind="remove_rule", params={"mode": MODE}
    )
    headers = {"HTTP_AUTHORIZATION": f"Bearer {amd.token}"}
    Client().get("/api/v1/agent/commands?wait=0", **headers)
    Client().post(
        f"/api/v1/agent/commands/{command.pk}/ack",
        json.dumps({"status": "applied", "result": {"removed": False, "via": "rpc"}}),
        content_type="application/json",
        **headers,
    )
    send(amd, without_rule(dormant), seq=3)
    shown = page(viewer, HOST_MODEL_PAGE)
    assert "nothing to remove" in shown
    assert "pi had already pruned it as expired" in shown
    detail = page(viewer, f"/commands/{command.pk}/status/")
    assert "badge-confirmed" not in detail
    assert "nothing to remove" in detail
    # pi's own pruning, not the operator's removal, in the history.
    gone = Change.objects.filter(mode=MODE).exclude(kind="rule_added")
    assert [c.kind for c in gone] == ["rule_retired"]
    ack = AuditEntry.objects.get(action="command.ack")
    assert "nothing to remove" in ack.summary


def test_an_ack_whose_write_did_not_survive_is_reverted_at_once(
    amd: AgentClient, shared: dict[str, Any], operator: Any, viewer: Any
) -> None:
    """After a stale-lock takeover pi wrote its older copy back: not "applied"."""
    command = services.command_create(
        actor=operator, host=AMD, model=GPT, kind="remove_rule", params={"mode": MODE}
    )
    headers = {"HTTP_AUTHORIZATION": f"Bearer {amd.token}"}
    Client().get("/api/v1/agent/commands?wait=0", **headers)
    lost = {
        "removed": True,
        "via": "file",
        "took_over_stale_lock": True,
        "write_survived": False,
    }
    ack = Client().post(
        f"/api/v1/agent/commands/{command.pk}/ack",
        json.dumps({"status": "applied", "result": lost, "detail": "removed"}),
        content_type="application/json",
        **headers,
    )
    assert ack.status_code == 200, ack.content
    assert ack.json()["state"] == "reverted"
    command.refresh_from_db()
    assert (command.state, command.revert_cause) == ("reverted", "overwritten")
    assert command.confirmed_at is None
    audit = AuditEntry.objects.get(action="command.reverted")
    assert audit.command_id == command.pk
    assert "pi wrote its older copy back over the change" in audit.summary
    # The agent repeating its ack changes nothing.
    again = Client().post(
        f"/api/v1/agent/commands/{command.pk}/ack",
        json.dumps({"status": "applied", "result": lost}),
        content_type="application/json",
        **headers,
    )
    assert (again.status_code, again.json()["state"]) == (200, "reverted")
    # The file still holds the rule: the next snapshot confirms nothing.
    send(amd, shared, seq=2)
    command.refresh_from_db()
    assert (command.state, command.confirmed_at) == ("reverted", None)

    shown = page(viewer, HOST_MODEL_PAGE)
    assert "pi wrote its older copy back over the change" in shown
    assert "Retry" not in shown  # a viewer may not act
    assert "Retry" in page(operator, HOST_MODEL_PAGE)
    detail = page(operator, f"/commands/{command.pk}/status/")
    assert "reverted" in detail
    assert "pi wrote its older copy back over the change" in detail
    assert "Retry" in detail
    assert (
        services.command_retry(actor=operator, command=command, ip_address=None).state
        == "pending"
    )
