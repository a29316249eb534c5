"""The probes API: CRUD, probing now, runs with transcripts; roles and audit."""

from typing import Any

import pytest

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.probes import crypto, services
from pi_dashboard.probes.models import Endpoint, ProbeRun
from tests.probes.conftest import API_KEY, logged_in

pytestmark = pytest.mark.django_db

NEW = {
    "name": "local qwen",
    "base_url": "http://127.0.0.1:1/v1",
    "server_model": "qwen2.5-coder:7b",
    "model_key": "ollama/qwen2.5-coder:7b",
    "api_key": "sk-live-abcdefghijkl",
    "headers": {"X-Org": "team-a"},
    "tags": ["local", "gpu"],
    "trials": 2,
}


def test_operator_creates_and_the_key_is_never_shown(operator: Any) -> None:
    client = logged_in(operator)
    response = client.post("/api/v1/endpoints", NEW, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["has_api_key"] is True
    assert body["header_names"] == ["X-Org"]
    assert body["provider"] == "ollama"
    assert body["tags"] == ["gpu", "local"]
    assert "sk-live" not in response.content.decode()
    endpoint = Endpoint.objects.get()
    assert "sk-live" not in endpoint.api_key_encrypted
    assert crypto.decrypt(endpoint.api_key_encrypted) == "sk-live-abcdefghijkl"
    entry = AuditEntry.objects.get(action="probes.endpoint.create")
    assert entry.outcome == AuditOutcome.OK
    assert entry.actor == operator


def test_update_keeps_omitted_secrets(operator: Any) -> None:
    client = logged_in(operator)
    created = client.post(
        "/api/v1/endpoints", NEW, content_type="application/json"
    ).json()
    change = {k: v for k, v in NEW.items() if k not in {"api_key", "headers"}}
    change["timeout_seconds"] = 5
    response = client.put(
        f"/api/v1/endpoints/{created['id']}", change, content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["timeout_seconds"] == 5
    endpoint = Endpoint.objects.get()
    assert crypto.decrypt(endpoint.api_key_encrypted) == "sk-live-abcdefghijkl"
    assert crypto.decrypt_json(endpoint.headers_encrypted) == {"X-Org": "team-a"}


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"model_key": "no-slash"}, "invalid_model_key"),
        ({"base_url": "file:///etc/passwd"}, "invalid_url"),
        ({"trials": 0}, "invalid_trials"),
        ({"headers": {"Host": "evil"}}, "invalid_header"),
    ],
)
def test_bad_input_is_a_clear_400_and_audited(
    operator: Any, change: dict[str, Any], code: str
) -> None:
    response = logged_in(operator).post(
        "/api/v1/endpoints", {**NEW, **change}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert AuditEntry.objects.filter(outcome=AuditOutcome.REFUSED).exists()


def test_wrong_types_are_a_422_not_a_500(operator: Any) -> None:
    response = logged_in(operator).post(
        "/api/v1/endpoints", {**NEW, "trials": "many"}, content_type="application/json"
    )
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"


def test_viewer_reads_but_cannot_change(viewer: Any, make_endpoint: Any) -> None:
    endpoint = make_endpoint("native-correct")
    client = logged_in(viewer)
    assert client.get("/api/v1/endpoints").json()[0]["name"] == endpoint.name
    response = client.post(f"/api/v1/endpoints/{endpoint.pk}/probe")
    assert response.status_code == 403
    assert response.json()["code"] == "forbidden"
    assert client.delete(f"/api/v1/endpoints/{endpoint.pk}").status_code == 403
    assert AuditEntry.objects.filter(outcome=AuditOutcome.REFUSED).count() == 2
    assert ProbeRun.objects.count() == 0


def test_anonymous_gets_401(make_endpoint: Any, client: Any) -> None:
    assert client.get("/api/v1/endpoints").status_code == 401


def test_probe_then_read_run_with_transcript(operator: Any, make_endpoint: Any) -> None:
    endpoint = make_endpoint("text-tool-tag")
    client = logged_in(operator)
    response = client.post(f"/api/v1/endpoints/{endpoint.pk}/probe")
    assert response.status_code == 202
    run_id = response.json()["id"]
    assert response.json()["state"] == "pending"
    # In tests on_commit hooks do not fire; run the task's service as the worker would.
    services.probe_run_execute(run_id=run_id, final_attempt=True)
    detail = client.get(f"/api/v1/probe-runs/{run_id}").json()
    assert detail["verdict"] == "text-protocol"
    assert list(detail["tool_probe"]) == [
        "version",
        "status",
        "probedAt",
        "variant",
        "nativeGrade",
        "diagnostic",
    ]
    assert detail["protocol"]["variant"] == "tool-tag"
    assert [e["kind"] for e in detail["exchanges"]][:2] == ["read-task", "echo"]
    assert API_KEY not in str(detail)
    listed = client.get(f"/api/v1/probe-runs?endpoint_id={endpoint.pk}").json()
    assert [r["id"] for r in listed] == [run_id]
    assert AuditEntry.objects.get(action="probes.probe").detail["run"] == run_id


def test_unknown_ids_are_404(viewer: Any) -> None:
    client = logged_in(viewer)
    assert client.get("/api/v1/endpoints/999").status_code == 404
    assert client.get("/api/v1/probe-runs/999").json()["code"] == "not_found"
