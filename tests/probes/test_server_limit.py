"""Setting an endpoint's limit on concurrent probes, and what a busy server does.

Across worker processes: `test_server_limit_e2e.py`.
"""

from typing import Any

import pytest

from pi_dashboard.probes import dispatch, semaphore, services
from pi_dashboard.probes.models import ProbeRun, RunState, Trigger
from tests.probes.conftest import logged_in

pytestmark = pytest.mark.django_db

NEW = {
    "name": "llama box",
    "base_url": "http://127.0.0.1:1/v1",
    "server_model": "glm-4.6",
    "model_key": "llamacpp/glm-4.6",
}


def test_the_limit_is_set_and_shown_through_the_api(operator: Any) -> None:
    client = logged_in(operator)
    response = client.post(
        "/api/v1/endpoints",
        {**NEW, "max_concurrent_probes": 1},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["max_concurrent_probes"] == 1
    page = client.get(f"/probes/endpoints/{response.json()['id']}/").content.decode()
    assert "at most 1 probe at once on its server" in page


@pytest.mark.parametrize("value", [0, 1001])
def test_a_limit_out_of_range_is_a_clear_400(operator: Any, value: int) -> None:
    response = logged_in(operator).post(
        "/api/v1/endpoints",
        {**NEW, "max_concurrent_probes": value},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_max_concurrent_probes"


def test_endpoints_on_one_server_share_its_semaphore() -> None:
    key = semaphore.server_key
    assert key("http://LLAMA.lan:8080/v1") == key("http://llama.lan:8080/")
    assert key("https://api.example.com/v1") == key("https://api.example.com:443/x")
    assert key("http://llama.lan:8080/v1") != key("http://llama.lan:8081/v1")


def test_a_busy_server_defers_the_run_without_claiming_it(make_endpoint: Any) -> None:
    endpoint = make_endpoint("native-correct", max_concurrent_probes=1)
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger=Trigger.API)
    key, cap = dispatch.server_limit(endpoint) or ("", 0)
    assert cap == 1
    assert semaphore.acquire("another-run", cap=1, lease_seconds=30, key=key)
    try:
        said = services.probe_run_execute(
            run_id=run.pk, final_attempt=True, server=(key, cap)
        )
        run.refresh_from_db()
        assert said == "deferred: server busy"
        assert (run.state, run.attempts) == (RunState.PENDING, 0)
        # A pending run waiting for its server is not a lost message to re-send.
        ProbeRun.objects.filter(pk=run.pk).update(
            created_at=run.created_at.replace(year=2000)
        )
        assert services.runs_sweep()["resent"] == 0
    finally:
        semaphore.release("another-run", key=key)
    said = services.probe_run_execute(
        run_id=run.pk, final_attempt=True, server=(key, cap)
    )
    assert said == "native"
