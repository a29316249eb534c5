"""Hostile input at the ingest and query edges (issue 9 items 4, 5, 6): each gets a
specific 4xx, never a 500."""

import json
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.ingest.models import EventRecord
from tests.control.conftest import AMD, GPT, fleet, make_operator_token, store
from tests.ingest.support import AgentClient
from tests.ingest.test_batches import FINGERPRINT, event, line

pytestmark = pytest.mark.django_db
__all__ = ["fleet", "store"]  # fixtures shared with the control tests

DEEP_5K = b'{"kind":' + b"[" * 5_000 + b"]" * 5_000 + b"}"
DEEP_100K = b"[" * 100_000 + b"]" * 100_000
HUGE_INT = b'{"kind":"tool_execution_failure","n":' + b"7" * 5_000 + b"}"
HUGE_FLOAT = b'{"kind":"tool_execution_failure","n":1e400}'


@pytest.fixture
def agent(db: None) -> AgentClient:
    agent = AgentClient.enroll()
    assert agent.heartbeat(FINGERPRINT).status_code == 200
    return agent


@pytest.fixture
def op_token(operator: Any) -> str:
    return make_operator_token(operator)


@pytest.fixture
def call() -> Any:
    client = Client()

    def call(method: str, path: str, token: str, body: Any = None) -> Any:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
        if method == "GET":
            return client.get(path, **headers)
        data = body if isinstance(body, bytes) else json.dumps(body)
        return client.generic(
            method, path, data, content_type="application/json", **headers
        )

    return call


def _error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response.json()["code"] == code, response.content[:300]


def test_hostile_lines_get_their_own_code_and_the_rest_is_stored(
    agent: AgentClient,
) -> None:
    good = [line(event(n)) for n in range(1, 101)]
    body = b"\n".join([DEEP_5K, DEEP_100K, HUGE_INT, HUGE_FLOAT, *good]) + b"\n"
    response = agent.post("events", body)
    assert response.status_code == 200, response.content[:300]
    result = response.json()
    assert (result["stored"], result["rejected"]) == (100, 4)
    codes = {r["line"]: r.get("code") for r in result["results"]}
    assert [codes[n] for n in (1, 2, 3, 4)] == [
        "too_deep",
        "too_deep",
        "number_too_large",
        "number_too_large",
    ]
    assert EventRecord.objects.count() == 100


@pytest.mark.parametrize("body", [DEEP_100K, HUGE_INT], ids=["deep", "huge_int"])
def test_hostile_documents_are_400_everywhere(
    agent: AgentClient, call: Any, op_token: str, fleet: Any, body: bytes
) -> None:
    assert agent.snapshot(body).status_code == 400
    beat = agent.client.post(
        "/api/v1/agent/heartbeat",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {agent.token}",
    )
    assert beat.status_code == 400
    command = call("POST", "/api/v1/commands", op_token, body)
    _error(command, 400, "too_deep" if body is DEEP_100K else "number_too_large")


def test_ingest_without_a_json_content_type_is_415(agent: AgentClient) -> None:
    body = line(event(1)) + b"\n"
    for ctype in ("text/plain", "application/x-www-form-urlencoded", ""):
        response = agent.post("events", body, content_type=ctype)
        _error(response, 415, "unsupported_media_type")
    assert (
        agent.post("events", body, content_type="application/jsonl").status_code == 200
    )
    assert EventRecord.objects.count() == 1


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/hosts/a%00",
        "/api/v1/endpoints?tag=%00",
        "/api/v1/commands?host=%00",
        "/api/v1/probe-runs?state=%00",
        "/api/v1/events?host=%00",
        "/api/v1/audit?action=%00",
        "/api/v1/models/a%00",
        "/api/v1/corpus?tool=x%00y",
    ],
)
def test_nul_in_path_or_query_is_400(call: Any, op_token: str, path: str) -> None:
    _error(call("GET", path, op_token), 400, "nul_in_request")


def test_nul_in_a_page_query_is_400(operator: Any) -> None:
    client = Client()
    client.force_login(operator)
    response = client.get("/audit/?action=%00")
    assert response.status_code == 400
    assert b"NUL" in response.content


@pytest.mark.parametrize(
    "bad",
    ["nul \u0000 here", "cut \ud83d"],
    ids=["nul", "surrogate"],
)
def test_nul_or_surrogate_in_a_body_is_400(
    call: Any, op_token: str, fleet: Any, bad: str
) -> None:
    # json.dumps escapes both, as a hostile client would send them.
    body = {"host": AMD, "model": GPT, "kind": "remove_rule", "params": {"mode": bad}}
    _error(call("POST", "/api/v1/commands", op_token, body), 400, "unsafe_text")
    endpoint = {
        "name": bad,
        "base_url": "http://127.0.0.1:1/v1",
        "server_model": "m",
        "model_key": "ollama/m",
        "tags": [bad],
        "trials": 1,
    }
    _error(call("POST", "/api/v1/endpoints", op_token, endpoint), 400, "unsafe_text")


@pytest.mark.parametrize(
    "path", ["/api/v1/events", "/api/v1/corpus", "/api/v1/audit", "/api/v1/rollups"]
)
@pytest.mark.parametrize(
    "moment", ["2026-01-01T00:00:00+19:00", "0001-01-01T00:00:00+01:00"]
)
def test_time_offsets_out_of_range_are_422(
    call: Any, op_token: str, path: str, moment: str
) -> None:
    extra = "&dimension=tool" if path.endswith("rollups") else ""
    for name in ("since", "until"):
        query = f"?{name}={moment.replace('+', '%2B')}{extra}"
        _error(call("GET", path + query, op_token), 422, "invalid_request")
    ok = call("GET", f"{path}?since=2026-01-01T00:00:00%2B18:00{extra}", op_token)
    assert ok.status_code == 200, ok.content[:300]


def test_huge_cores_in_heartbeat_and_snapshot_are_refused_not_500(
    agent: AgentClient,
) -> None:
    huge = {**FINGERPRINT, "cores": 2**31}
    response = agent.heartbeat(huge)
    assert response.status_code == 400
    assert "cores" in response.json()["detail"]
    store = {
        "version": 1,
        "hosts": {
            FINGERPRINT["id"]: {
                "openai/gpt-5.1": {
                    "model": "openai/gpt-5.1",
                    "at": "2026-07-14T16:40:51.902Z",
                    "host": huge,
                    "profile": {"rules": [], "teachStats": {}},
                }
            }
        },
    }
    snapshot = agent.snapshot(json.dumps(store).encode())
    assert snapshot.status_code < 500, snapshot.content[:300]
    if snapshot.status_code == 200:
        assert "cores" in json.dumps(snapshot.json()["dropped"])
