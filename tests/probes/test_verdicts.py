"""Every scripted behaviour yields the verdict pi would record, streaming and not.

The probe runs through the service the Celery task calls, against a real HTTP server
on loopback, and the stored result is compared with pi's `toolProbe` / `protocol`.
"""

from typing import Any

import pytest

from pi_dashboard.probes import services
from pi_dashboard.probes.algorithm import ABSENT_DIAGNOSTIC, ECHO_ONLY_DIAGNOSTIC
from pi_dashboard.probes.models import ProbeRun, RunState, Trigger
from tests.probes.conftest import API_KEY

LADDER_FAILED = (
    " Text protocol variants failed: tool-tag, tool-call, fenced-json, function-xml"
)
TEXT = ("text-protocol", "absent", ABSENT_DIAGNOSTIC)
# Per behaviour: verdict, nativeGrade, variant, diagnostic, completions.
EXPECTED: dict[str, tuple[str, str, str, str, int]] = {
    "native-correct": ("native", "task", "", "", 1),
    "native-echo-only": (
        "none",
        "echo-only",
        "",
        ECHO_ONLY_DIAGNOSTIC + LADDER_FAILED,
        6,
    ),
    "native-wrong-args": ("none", "absent", "", ABSENT_DIAGNOSTIC + LADDER_FAILED, 6),
    "text-tool-tag": (*TEXT[:2], "tool-tag", TEXT[2], 4),
    "text-tool-call": (*TEXT[:2], "tool-call", TEXT[2], 5),
    "text-fenced-json": (*TEXT[:2], "fenced-json", TEXT[2], 6),
    "text-function-xml": (*TEXT[:2], "function-xml", TEXT[2], 7),
    # A trailing comma: pi keeps the raw body, so no rung passes (issue 13 item 6).
    "text-sloppy-json": ("none", "absent", "", ABSENT_DIAGNOSTIC + LADDER_FAILED, 6),
    "envelope-in-reasoning_content": (*TEXT[:2], "tool-tag", TEXT[2], 4),
    "garbage": ("none", "absent", "", ABSENT_DIAGNOSTIC + LADDER_FAILED, 6),
    "empty": ("none", "absent", "", ABSENT_DIAGNOSTIC + LADDER_FAILED, 6),
}
# pi records `none` for these; they answered nothing, so the run fails without a
# verdict (issue 13 item 7; tests/probes/test_dead_server.py).
NO_ANSWER = ("http-500", "slow", "redirect")


def run_probe(endpoint: Any) -> ProbeRun:
    run = ProbeRun.objects.create(endpoint=endpoint, slot="test", trigger=Trigger.API)
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    run.refresh_from_db()
    return run


@pytest.mark.django_db
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("behaviour", list(EXPECTED))
def test_behaviour_gives_pis_verdict(
    make_endpoint: Any, behaviour: str, stream: bool
) -> None:
    timeout = 0.4 if behaviour == "slow" else 2.0
    run = run_probe(make_endpoint(behaviour, stream=stream, timeout_seconds=timeout))
    verdict, grade, variant, diagnostic, completions = EXPECTED[behaviour]

    assert run.state == RunState.DONE
    probe = dict(run.tool_probe or {})
    probed_at = probe.pop("probedAt")
    assert probed_at.endswith("Z")
    assert len(probed_at) == 24
    expected_probe: dict[str, Any] = {"version": 1, "status": verdict}
    if variant:
        expected_probe["variant"] = variant
    expected_probe["nativeGrade"] = grade
    if diagnostic:
        expected_probe["diagnostic"] = diagnostic
    assert probe == expected_probe
    if verdict == "text-protocol":
        assert run.protocol == {
            "version": 1,
            "status": "calibrated",
            "variant": variant,
            "calibratedAt": probed_at,
        }
    else:
        assert run.protocol is None
    assert run.completions == completions == run.exchanges.count()
    assert run.endpoint.last_verdict == verdict


@pytest.mark.django_db
def test_transcripts_are_redacted_and_in_order(make_endpoint: Any) -> None:
    endpoint = make_endpoint(
        "text-tool-call", headers={"X-Api-Key": "hdr-secret-value", "X-Team": "blue"}
    )
    run = run_probe(endpoint)
    kinds = [(e.kind, e.passed) for e in run.exchanges.all()]
    assert kinds == [
        ("read-task", False),
        ("echo", False),
        ("text-protocol:tool-tag", False),
        ("text-protocol:tool-call", True),
        ("text-protocol:tool-call", True),
    ]
    first = run.exchanges.first()
    assert first is not None
    headers = first.request["headers"]
    assert headers["Authorization"] == "[REDACTED]"
    assert headers["X-Api-Key"] == "[REDACTED]"
    assert headers["X-Team"] == "blue"
    blob = str([(e.request, e.response) for e in run.exchanges.all()])
    assert API_KEY not in blob
    assert "hdr-secret-value" not in blob
    body = run.exchanges.get(seq=3).request["body"]
    assert body["messages"][1]["content"][0]["text"].startswith(
        "Text tool protocol calibration trial. "
        'Call echo, data exactly "pi-calibration-1".'
    )
    assert body["max_completion_tokens"] == 256
    assert "tools" not in body


@pytest.mark.django_db
def test_request_shape_follows_pi(make_endpoint: Any, model_server: Any) -> None:
    endpoint = make_endpoint("native-correct", stream=True, token_param="max_tokens")
    run_probe(endpoint)
    sent = model_server.requests[-1]
    body = sent["body"]
    assert sent["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 768
    assert body["temperature"] == 0
    assert body["tools"][0]["function"]["name"] == "read"
    assert body["tools"][0]["function"]["strict"] is False
    assert "tool_choice" not in body


@pytest.mark.django_db
def test_k_trials_need_k_of_k(make_endpoint: Any) -> None:
    # `drifting` answers natively on every other read trial: k=2 can never pass it.
    run = run_probe(make_endpoint("drifting", trials=2, server_model="drifting#k-test"))
    assert run.verdict != "native"
    assert run.exchanges.filter(kind="read-task").count() >= 1


@pytest.mark.django_db
def test_missing_key_variable_is_pis_thrown_diagnostic(make_endpoint: Any) -> None:
    endpoint = make_endpoint(
        "native-correct", api_key="", api_key_env="PI_PROBE_KEY_TEST_NO_SUCH"
    )
    run = run_probe(endpoint)
    assert run.tool_probe is not None
    assert run.tool_probe["status"] == "none"
    assert run.tool_probe["nativeGrade"] == "absent"
    assert run.tool_probe["diagnostic"] == (
        "No API key: environment variable PI_PROBE_KEY_TEST_NO_SUCH is not set on "
        "the worker."
    )
    assert run.completions == 0
