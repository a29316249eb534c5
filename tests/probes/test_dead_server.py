"""A server that answers nothing is a failed run with its cause, never a verdict.

pi records `none` for such a server (issue 13 item 7); a monitor that did the same
would report drift every time a server went down. Real servers on loopback: the
scripted one (timeouts, 404 `model_not_found`, HTTP 500) and a socket that hangs on
its first request and then stops accepting.
"""

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse

from pi_dashboard.probes import services
from pi_dashboard.probes.models import Drift, Endpoint, ProbeRun, RunState, Trigger
from tests.probes.conftest import logged_in


def run_probe(endpoint: Endpoint) -> ProbeRun:
    run = ProbeRun.objects.create(
        endpoint=endpoint, slot=f"s{ProbeRun.objects.count()}", trigger=Trigger.API
    )
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    run.refresh_from_db()
    return run


def assert_no_verdict(run: ProbeRun) -> None:
    assert run.state == RunState.FAILED
    assert (run.verdict, run.native_grade, run.tool_probe) == ("", "", None)
    assert run.error.startswith("The server answered none of the")


class HangThenRefuse:
    """Accepts one connection, never answers it, and stops accepting at once."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.done = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        self.listener.close()  # later connections are refused
        conn.recv(65536)
        self.done.wait(30)
        conn.close()


@pytest.fixture
def hang_then_refuse() -> Iterator[HangThenRefuse]:
    server = HangThenRefuse()
    yield server
    server.done.set()


@pytest.mark.django_db
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_every_trial_timing_out_fails_the_run(make_endpoint: Any, stream: bool) -> None:
    run = run_probe(make_endpoint("slow", stream=stream, timeout_seconds=0.4))
    assert_no_verdict(run)
    assert "ReadTimeout" in run.error
    assert "(×6)" in run.error  # pi's six requests were all sent, as pi sends them
    assert run.completions == run.exchanges.count() == 6
    assert run.endpoint.last_verdict == ""


@pytest.mark.django_db
def test_model_not_found_fails_and_warns_about_the_listed_models(
    make_endpoint: Any, viewer: Any
) -> None:
    run = run_probe(make_endpoint("no-such-model"))
    assert_no_verdict(run)
    assert "HTTP 404 model_not_found: The model `no-such-model` does not exist" in (
        run.error
    )
    assert "server_model 'no-such-model' is not among them" in run.warning
    assert "native-correct" in run.warning
    shown = logged_in(viewer).get(f"/api/v1/probe-runs/{run.pk}").json()
    assert (shown["state"], shown["verdict"]) == ("failed", "")
    assert shown["warning"] == run.warning
    assert shown["exchanges"][0]["response"]["answered"] is False


@pytest.mark.django_db
def test_http_500_on_every_request_fails_the_run(make_endpoint: Any) -> None:
    run = run_probe(make_endpoint("http-500"))
    assert_no_verdict(run)
    assert "HTTP 500" in run.error
    assert run.warning == ""  # the server lists http-500: nothing to warn about


@pytest.mark.django_db
def test_a_dead_server_is_never_drift(make_endpoint: Any) -> None:
    endpoint = make_endpoint("native-correct")
    assert run_probe(endpoint).verdict == "native"
    Endpoint.objects.filter(pk=endpoint.pk).update(
        server_model="slow", timeout_seconds=0.4
    )
    assert_no_verdict(run_probe(Endpoint.objects.get(pk=endpoint.pk)))
    endpoint.refresh_from_db()
    assert endpoint.last_verdict == "native"
    assert not Drift.objects.filter(endpoint=endpoint).exists()
    # When it answers again with the same verdict, that is no drift either.
    Endpoint.objects.filter(pk=endpoint.pk).update(server_model="native-correct")
    assert run_probe(Endpoint.objects.get(pk=endpoint.pk)).verdict == "native"
    assert not Drift.objects.filter(endpoint=endpoint).exists()


@pytest.mark.django_db
def test_a_server_that_stops_accepting_after_a_hang_keeps_the_hung_exchange(
    make_endpoint: Any, hang_then_refuse: HangThenRefuse, viewer: Any
) -> None:
    endpoint = make_endpoint(
        "native-correct",
        name="hangs",
        base_url=f"http://127.0.0.1:{hang_then_refuse.port}/v1",
        timeout_seconds=0.5,
    )
    run = run_probe(endpoint)
    assert run.state == RunState.FAILED
    assert run.verdict == ""
    assert "Cannot connect" in run.error
    hung, refused = run.exchanges.all()
    assert hung.kind == "read-task"
    assert "ReadTimeout" in hung.response["error"]
    assert "Cannot connect" in refused.response["error"]

    page = logged_in(viewer).get(reverse("probes:run", args=[run.pk])).content.decode()
    assert "No requests were sent" not in page
    assert "ReadTimeout" in page
    assert "1. read-task" in page
