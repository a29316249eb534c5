"""“Probe now…” on the host page for a model pi's store does not hold yet (13.5).

pi probes any model its models.json knows. The host page offers a model field
(suggesting the models the agent reports from models.json, then those the dashboard
knows), validated as pi's `provider/modelId`, only where the host's agent can probe.
"""

import json
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Agent, Host
from tests.fleet.test_pages import AMD, XEON, login, seed_fleet
from tests.ingest.support import AgentClient, fingerprint_of

NEW = "ollama/qwen3-coder-next:80b"
HOST_PAGE = f"/hosts/{AMD}/"
ACTION = "/actions/probe-model/"


@pytest.fixture
def fleet(db: None, pi_fixtures: Any) -> Any:
    made = seed_fleet(pi_fixtures)
    agent = Agent.objects.get(name="amd-agent")
    agent.capabilities = {**agent.capabilities, "models": [NEW]}
    agent.save()
    return made


def test_the_host_page_offers_any_model_and_the_probe_is_queued(
    client: Client, operator: Any, fleet: Any
) -> None:
    body = login(client, operator).get(HOST_PAGE).content.decode()
    assert 'id="probe-model"' in body
    assert "Probe a model on this host" in body
    assert f'<option value="{NEW}">' in body  # reported from pi's models.json
    assert '<option value="openai/gpt-5.1">' in body  # known to the dashboard

    confirm = client.get(ACTION, {"host": AMD, "model": NEW})
    assert confirm.status_code == 200
    text = confirm.content.decode()
    assert f"Probe {NEW} on this host?" in text
    assert "whether or not pi&#x27;s store holds it yet" in text

    done = client.post(ACTION, {"host": AMD, "model": NEW}, follow=True)
    assert done.status_code == 200
    command = Command.objects.get()
    assert (command.kind, command.model.key, command.host.pi_id) == (
        "probe",
        NEW,
        AMD,
    )
    assert f"Sent 1 command: probe on host on {AMD}" in done.content.decode()
    created = AuditEntry.objects.get(action="command.create")
    assert (created.outcome, created.actor_label) == (AuditOutcome.OK, "otto-operator")


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("", "Which model?"),
        ("qwen3-coder", "provider/modelId"),
        ("ollama/", "provider/modelId"),
        ("/qwen", "provider/modelId"),
        ("ollama/qwen 3", "provider/modelId"),
        ("o/" + "x" * 700, "at most 600 characters"),
    ],
)
def test_a_model_not_named_as_pi_names_it_is_400(
    client: Client, operator: Any, fleet: Any, model: str, said: str
) -> None:
    response = login(client, operator).post(ACTION, {"host": AMD, "model": model})
    assert response.status_code == 400
    assert said in response.content.decode()
    assert not Command.objects.exists()


def test_not_offered_where_the_agent_cannot_probe(
    client: Client, operator: Any, viewer: Any, fleet: Any
) -> None:
    Agent.objects.create(
        name="xeon-agent",
        token_prefix="p",
        token_hash="h-xeon",
        host=Host.objects.get(pi_id=XEON),
        capabilities={"probe": False, "rpc": False, "why": "no pi_command"},
    )
    body = login(client, operator).get(f"/hosts/{XEON}/").content.decode()
    assert 'id="probe-model"' not in body
    assert "No “Probe now”: The host&#x27;s agent cannot run pi" in body
    # Posted anyway (an old page): refused with the reason, audited, nothing queued.
    refused = client.post(ACTION, {"host": XEON, "model": NEW}, follow=True)
    assert f"No model &#x27;{NEW}&#x27; is known to this dashboard" in (
        refused.content.decode()
    )
    assert not Command.objects.exists()
    assert AuditEntry.objects.get(action="command.create").outcome == (
        AuditOutcome.REFUSED
    )
    # A viewer sees no form at all.
    client.force_login(viewer)
    assert 'id="probe-model"' not in client.get(HOST_PAGE).content.decode()


def test_the_models_an_agent_reports_are_suggested(
    client: Client, operator: Any, pi_fixtures: Any
) -> None:
    """Through the heartbeat: `capabilities.models` (pi's models.json) is stored."""
    agent = AgentClient.enroll("amd-box")
    beat = {
        "hostname": "box",
        "host": fingerprint_of(pi_fixtures / AMD),
        "agent_version": "0.1.0",
        "capabilities": {"probe": True, "rpc": True, "why": "", "models": [NEW]},
    }
    response = Client().post(
        "/api/v1/agent/heartbeat",
        json.dumps(beat),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {agent.token}",
    )
    assert response.status_code == 200, response.content
    body = login(client, operator).get(HOST_PAGE).content.decode()
    assert f'<option value="{NEW}">' in body
