"""api_key_env: only admin-allowed variables, named only by admins, never leaked.

A real loopback listener records every byte a probe sends it, so "never delivered"
is checked on the wire, not on our own code paths.
"""

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.probes import services
from pi_dashboard.probes.models import Endpoint, ProbeRun, RunState, Trigger
from tests.probes.conftest import logged_in

pytestmark = pytest.mark.django_db

SECRET_KEY_VALUE = "django-secret-never-leaves-0123456789"
ALLOWED_VALUE = "pk-allowed-probe-key-42"


class Listener(ThreadingHTTPServer):
    """Accepts anything and keeps the raw request lines, headers and bodies."""

    daemon_threads = True

    def __init__(self) -> None:
        self.received: list[str] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode(errors="replace")
                listener.received.append(f"{self.requestline}\n{self.headers}{body}")
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error": {"message": "no"}}')

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def everything(self) -> str:
        return "\n".join(self.received)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _worker_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_SECRET_KEY", SECRET_KEY_VALUE)
    monkeypatch.setenv("PI_PROBE_KEY_LOCAL", ALLOWED_VALUE)


def body(listener: Listener, **extra: Any) -> dict[str, Any]:
    return {
        "name": "leaky",
        "base_url": listener.base_url,
        "server_model": "m",
        "model_key": "openai/m",
        "timeout_seconds": 2,
        **extra,
    }


def probe(endpoint: Endpoint) -> ProbeRun:
    slot = f"s{ProbeRun.objects.count()}"
    run = ProbeRun.objects.create(endpoint=endpoint, slot=slot, trigger=Trigger.API)
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    run.refresh_from_db()
    return run


def assert_never_delivered(listener: Listener) -> None:
    wire = listener.everything()
    assert SECRET_KEY_VALUE not in wire
    assert os.environ["DATABASE_URL"] not in wire


@pytest.mark.parametrize("name", ["DJANGO_SECRET_KEY", "DATABASE_URL", "PATH"])
def test_a_variable_nobody_allowed_is_refused_on_save(
    admin_user: Any, listener: Listener, name: str
) -> None:
    response = logged_in(admin_user).post(
        "/api/v1/endpoints",
        body(listener, api_key_env=name),
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "api_key_env_not_allowed"
    assert "PI_PROBE_KEY_ENV_ALLOWED" in response.json()["detail"]
    assert not Endpoint.objects.exists()


def test_an_operator_cannot_name_a_variable_and_nothing_is_sent(
    operator: Any, listener: Listener
) -> None:
    client = logged_in(operator)
    for name in ("DJANGO_SECRET_KEY", "DATABASE_URL", "PI_PROBE_KEY_LOCAL"):
        response = client.post(
            "/api/v1/endpoints",
            body(listener, api_key_env=name),
            content_type="application/json",
        )
        assert response.status_code in {400, 403}, response.content
    assert response.json()["code"] == "api_key_env_admin_only"
    assert not Endpoint.objects.exists()
    refused = AuditEntry.objects.filter(
        action="probes.endpoint.create", outcome=AuditOutcome.REFUSED
    )
    assert refused.count() == 3
    assert listener.received == []


def test_admin_sets_it_audited_and_operators_edit_the_rest(
    admin_user: Any, operator: Any, listener: Listener
) -> None:
    created = logged_in(admin_user).post(
        "/api/v1/endpoints",
        body(listener, api_key_env="PI_PROBE_KEY_LOCAL"),
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    entry = AuditEntry.objects.get(action="probes.endpoint.api_key_env")
    assert entry.actor == admin_user
    assert entry.detail["before"] == ""
    assert entry.detail["after"] == "PI_PROBE_KEY_LOCAL"

    url = f"/api/v1/endpoints/{created.json()['id']}"
    client = logged_in(operator)
    kept = client.put(
        url,
        body(listener, api_key_env="PI_PROBE_KEY_LOCAL", timeout_seconds=3),
        content_type="application/json",
    )
    assert kept.status_code == 200, kept.content
    assert kept.json()["timeout_seconds"] == 3
    changed = client.put(
        url,
        body(listener, api_key_env="PI_PROBE_KEY_OTHER"),
        content_type="application/json",
    )
    assert changed.status_code == 403
    assert changed.json()["code"] == "api_key_env_admin_only"
    cleared = client.put(url, body(listener), content_type="application/json")
    assert cleared.status_code == 403
    assert Endpoint.objects.get().api_key_env == "PI_PROBE_KEY_LOCAL"
    assert AuditEntry.objects.filter(action="probes.endpoint.api_key_env").count() == 1


def test_an_allowed_variable_is_sent_and_a_row_edited_to_another_is_refused_at_run(
    admin_user: Any, listener: Listener
) -> None:
    endpoint = services.endpoint_create(
        data=services.EndpointData(**body(listener, api_key_env="PI_PROBE_KEY_LOCAL")),
        user=admin_user,
    )
    probe(endpoint)
    # The listener hears the allowed key: the wire check below can fail.
    assert f"Bearer {ALLOWED_VALUE}" in listener.everything()

    for name in ("DJANGO_SECRET_KEY", "DATABASE_URL"):
        heard = len(listener.received)
        Endpoint.objects.filter(pk=endpoint.pk).update(api_key_env=name)
        run = probe(Endpoint.objects.get(pk=endpoint.pk))
        assert run.state == RunState.REFUSED
        assert f"The worker variable {name} may not be used" in run.error
        assert run.exchanges.count() == 0
        assert len(listener.received) == heard
    assert_never_delivered(listener)


def test_narrowing_the_setting_refuses_existing_endpoints_at_run(
    admin_user: Any, listener: Listener, settings: Any
) -> None:
    endpoint = services.endpoint_create(
        data=services.EndpointData(**body(listener, api_key_env="PI_PROBE_KEY_LOCAL")),
        user=admin_user,
    )
    settings.PI_PROBE_KEY_ENV_ALLOWED = ["PI_PROBE_KEY_OPENAI"]
    run = probe(endpoint)
    assert run.state == RunState.REFUSED
    assert "now: PI_PROBE_KEY_OPENAI" in run.error
    assert listener.received == []


def test_names_and_prefix_patterns_from_the_setting(
    admin_user: Any, listener: Listener, settings: Any
) -> None:
    settings.PI_PROBE_KEY_ENV_ALLOWED = ["OPENAI_API_KEY", "TEAM_A_*"]
    client = logged_in(admin_user)
    for i, (name, status) in enumerate(
        [
            ("OPENAI_API_KEY", 201),
            ("TEAM_A_KEY", 201),
            ("TEAM_A_", 400),  # a pattern needs something after the prefix
            ("OPENAI_API_KEY_2", 400),
            ("PI_PROBE_KEY_LOCAL", 400),  # the default is replaced, not extended
        ]
    ):
        response = client.post(
            "/api/v1/endpoints",
            body(listener, name=f"e{i}", api_key_env=name),
            content_type="application/json",
        )
        assert response.status_code == status, (name, response.content)


FORM = {
    "name": "form-endpoint",
    "server_model": "m",
    "model_key": "openai/m",
    "timeout_seconds": "2",
    "token_param": "max_completion_tokens",
    "trials": "1",
}


def test_form_operator_is_refused_and_admin_may(
    operator: Any, admin_user: Any, listener: Listener
) -> None:
    data = {**FORM, "base_url": listener.base_url, "api_key_env": "PI_PROBE_KEY_LOCAL"}
    refused = logged_in(operator).post("/probes/endpoints/new/", data)
    assert refused.status_code == 403
    assert "Only an admin may set or change the API key variable" in (
        refused.content.decode()
    )
    forbidden = logged_in(admin_user).post(
        "/probes/endpoints/new/", {**data, "api_key_env": "DJANGO_SECRET_KEY"}
    )
    assert forbidden.status_code == 400
    assert "may not be used as an API key" in forbidden.content.decode()
    assert not Endpoint.objects.exists()
    saved = logged_in(admin_user).post("/probes/endpoints/new/", data)
    assert saved.status_code == 302
    assert Endpoint.objects.get().api_key_env == "PI_PROBE_KEY_LOCAL"
    assert listener.received == []


def test_an_operator_probing_after_trying_to_switch_the_variable_sends_no_secret(
    admin_user: Any, operator: Any, listener: Listener
) -> None:
    endpoint = services.endpoint_create(
        data=services.EndpointData(**body(listener, api_key_env="PI_PROBE_KEY_LOCAL")),
        user=admin_user,
    )
    client = logged_in(operator)
    for name in ("DJANGO_SECRET_KEY", "DATABASE_URL"):
        response = client.put(
            f"/api/v1/endpoints/{endpoint.pk}",
            body(listener, api_key_env=name),
            content_type="application/json",
        )
        assert response.status_code == 400
    started = client.post(f"/api/v1/endpoints/{endpoint.pk}/probe")
    assert started.status_code == 202
    services.probe_run_execute(run_id=started.json()["id"], final_attempt=True)
    assert f"Bearer {ALLOWED_VALUE}" in listener.everything()
    assert_never_delivered(listener)
