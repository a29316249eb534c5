"""Outbound safety: where a probe may connect, and what a refused run shows."""

from typing import Any

import pytest

from pi_dashboard.probes import outbound, services
from pi_dashboard.probes.models import ProbeRun, RunState, Trigger


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/v1", "cloud metadata address"),
        ("http://[fd00:ec2::254]/v1", "cloud metadata address"),
        ("http://[::ffff:169.254.169.254]/v1", "cloud metadata address"),
        ("http://100.100.100.200/v1", "cloud metadata address"),
        ("http://metadata.google.internal/v1", "cloud metadata name"),
        ("http://169.254.10.1:8080/v1", "link-local"),
        ("http://[fe80::1]/v1", "link-local"),
        ("http://0.0.0.0/v1", "not a routable"),
        ("ftp://example.com/v1", "Only http and https"),
        ("http://user:pw@example.com/v1", "Credentials in the URL"),
    ],
)
def test_always_refused_even_when_private_allowed(url: str, reason: str) -> None:
    with pytest.raises(outbound.OutboundRefused) as exc:
        outbound.destination_check(url, allow_private=True)
    assert reason in exc.value.detail


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://10.1.2.3/v1",
        "http://[::1]/v1",
        "http://192.168.1.5/v1",
        "http://[fd12::1]/v1",
        "http://100.64.1.1/v1",
    ],
)
def test_private_needs_the_setting(url: str) -> None:
    with pytest.raises(outbound.OutboundRefused, match="PI_PROBES_ALLOW_PRIVATE"):
        outbound.destination_check(url, allow_private=False)
    assert outbound.destination_check(url, allow_private=True).port


def test_a_name_is_resolved_once_and_the_address_is_used() -> None:
    dest = outbound.destination_check(
        "http://localhost:9/v1?api-version=2", allow_private=True
    )
    assert dest.ip.is_loopback
    assert dest.host_header == "localhost:9"
    assert dest.url("/chat/completions") == (
        f"http://{'[' + str(dest.ip) + ']' if dest.ip.version == 6 else dest.ip}:9"
        "/v1/chat/completions?api-version=2"
    )
    assert dest.display_url("/x") == "http://localhost:9/v1/x"


def test_public_address_is_allowed_without_the_setting() -> None:
    dest = outbound.destination_check("https://93.184.215.14/v1", allow_private=False)
    assert dest.port == 443
    assert dest.host_header == "93.184.215.14"


@pytest.mark.django_db
def test_refused_run_says_why(make_endpoint: Any, settings: Any) -> None:
    settings.PI_PROBES_ALLOW_PRIVATE = False
    endpoint = make_endpoint("native-correct")
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger=Trigger.API)
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    run.refresh_from_db()
    assert run.state == RunState.REFUSED
    assert "private or loopback" in run.error
    assert run.verdict == ""
    assert run.exchanges.count() == 0


@pytest.mark.django_db
def test_connects_to_checked_address_with_the_name_as_host(
    make_endpoint: Any, model_server: Any
) -> None:
    port = model_server.server_address[1]
    endpoint = make_endpoint("native-correct", base_url=f"http://localhost:{port}/v1")
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger=Trigger.API)
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    run.refresh_from_db()
    assert run.verdict == "native"
    assert model_server.requests[-1]["headers"]["Host"] == f"localhost:{port}"
    exchange = run.exchanges.get()
    assert exchange.request["url"] == f"http://localhost:{port}/v1/chat/completions"
    assert exchange.request["connected_to"] in {"127.0.0.1", "::1"}


@pytest.mark.django_db
def test_redirects_are_never_followed(make_endpoint: Any, model_server: Any) -> None:
    endpoint = make_endpoint("redirect")
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger=Trigger.API)
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    run.refresh_from_db()
    assert (run.state, run.verdict) == ("failed", "")  # it answered nothing
    first = run.exchanges.first()
    assert first is not None
    assert (
        "redirect to http://169.254.169.254/latest/meta-data/ not followed"
        in (first.response["error"])
    )
    assert not any("meta-data" in r["path"] for r in model_server.requests)
