"""Line batches: per-line results, unsafe strings, limits, auth, overload."""

import gzip
import json
from collections import Counter
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.ingest import limits
from pi_dashboard.ingest.models import (
    CorpusRecord,
    DailyRollup,
    EventRecord,
    Rollup,
    SessionStats,
)
from tests.ingest.support import AgentClient

FINGERPRINT = {
    "id": "apple-m2-pro-12c-32g",
    "cpu": "Apple M2 Pro",
    "cores": 12,
    "totalMemGb": 32,
}
SESSION = "01981a2e-7c4b-7f3a-9d2e-5b8c1f0a4e21"


def event(n: int, **extra: Any) -> dict[str, Any]:
    record = {
        "kind": "tool_execution_failure",
        "version": 1,
        "recordId": f"{SESSION}:{n}",
        "ts": f"2026-07-14T16:{n % 60:02d}:33.410Z",
        "sessionId": SESSION,
        "provider": "openrouter",
        "model": "deepseek/deepseek-v3.2",
        "tool": "bash",
        "state": "failed",
        "phase": "timeout",
        "failureCode": "timeout",
        "nextAction": "Operation timed out.",
    }
    return {**record, **extra}


def line(record: Any) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode()


@pytest.fixture
def agent(db: None) -> AgentClient:
    agent = AgentClient.enroll()
    assert agent.heartbeat(FINGERPRINT).status_code == 200
    return agent


@pytest.fixture
def reader(viewer: Any) -> Client:
    client = Client()
    client.force_login(viewer)
    return client


def test_mixed_batch_stores_good_lines_and_names_each_bad_one(
    agent: AgentClient, reader: Client, settings: Any
) -> None:
    settings.PI_INGEST_MAX_LINE_BYTES = 4096
    # Written by hand: json.dumps would not produce the raw escaped lone surrogate.
    surrogate = (
        b'{"kind":"tool_execution_failure","version":1,"recordId":"s:1",'
        b'"ts":"2026-07-14T16:45:33.410Z","sessionId":"s","tool":"bash",'
        b'"state":"failed","phase":"execution","failureCode":"error",'
        b'"diagnostic":"cut here \\ud83d","nextAction":"Retry."}'
    )
    nul = line(event(7, diagnostic="nul \u0000 inside"))
    body = (
        b"\n".join(
            [
                line(event(1)),  # 1 good
                b'{"kind": "tool_execution_failure", "versi',  # 2 malformed JSON
                line(event(2, version=2)),  # 3 schema violation
                b"",  # (blank: no result)
                surrogate,  # 5 lone surrogate: stored
                line(event(3, tool="x" * 5000)),  # 6 oversized line
                b"[1, 2]",  # 7 not an object
                nul,  # 8 NUL: stored
                line(
                    {"kind": "mystery", "ts": "2026-07-14T00:00:00Z"}
                ),  # 9 unknown kind
                line(event(4, ts="yesterday")),  # 10 bad timestamp
                line(event(1)),  # 11 same content as line 1
            ]
        )
        + b"\n"
    )
    response = agent.post("events", body)
    assert response.status_code == 200
    result = response.json()
    assert (result["stored"], result["duplicate"], result["rejected"]) == (3, 1, 6)
    by_line = {r["line"]: r for r in result["results"]}
    assert sorted(by_line) == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11]
    assert by_line[1] == {"line": 1, "status": "stored"}
    assert by_line[2]["code"] == "malformed_json"
    assert "Not valid JSON" in by_line[2]["reason"]
    assert by_line[3]["code"] == "schema_violation"
    assert "$.version" in by_line[3]["reason"]
    assert by_line[5]["status"] == "stored"
    assert by_line[6]["code"] == "line_too_large"
    assert by_line[7]["code"] == "not_an_object"
    assert by_line[8]["status"] == "stored"
    assert by_line[9]["code"] == "unknown_kind"
    assert "mystery" in by_line[9]["reason"]
    assert by_line[10]["code"] == "invalid_timestamp"
    assert by_line[11]["status"] == "duplicate"

    # The lone surrogate and the NUL read back exactly as pi wrote them.
    response = reader.get("/api/v1/events", {"tool": "bash", "limit": "10"})
    assert response.status_code == 200
    assert b"\\ud83d" in response.content
    records = {
        item["record"]["recordId"]: item["record"] for item in response.json()["items"]
    }
    assert records["s:1"]["diagnostic"] == "cut here \ud83d"
    assert records[f"{SESSION}:7"]["diagnostic"] == "nul \u0000 inside"
    stored = EventRecord.objects.get(record_id="s:1")
    assert stored.payload["diagnostic"] == "cut here \ufffd"
    assert stored.original


def test_rollups_count_only_new_lines(agent: AgentClient) -> None:
    body = b"\n".join(line(event(n)) for n in range(5))
    assert agent.post("events", body).json()["stored"] == 5
    assert agent.post("events", body).json()["duplicate"] == 5
    cell = Rollup.objects.get(dimension="outcome", key="execution:failed")
    assert cell.count == 5
    assert cell.model is not None
    assert cell.model.key == "openrouter/deepseek/deepseek-v3.2"
    assert cell.model.provider == "openrouter"
    assert cell.model.model_id == "deepseek/deepseek-v3.2"


def test_a_partial_resend_stores_only_the_new_lines(agent: AgentClient) -> None:
    # Tried as all-new first, refused by the unique index, written again skipping
    # the stored lines: nothing of the refused attempt may remain or count.
    first = agent.post("events", b"\n".join(line(event(n)) for n in (1, 3)))
    assert first.json()["stored"] == 2
    body = b"\n".join(line(event(n)) for n in range(5))
    answer = agent.post("events", body).json()
    assert [r["status"] for r in answer["results"]] == [
        "stored",
        "duplicate",
        "stored",
        "duplicate",
        "stored",
    ]
    assert EventRecord.objects.count() == 5
    cell = Rollup.objects.get(dimension="outcome", key="execution:failed")
    assert cell.count == 5


def test_daily_rollups_are_the_sum_of_their_hours(agent: AgentClient) -> None:
    # Lines on both sides of a UTC midnight, then the same lines again plus new ones:
    # each day's outcome row holds exactly its hours' counts, re-sent lines counted
    # nowhere; other dimensions have no daily level.
    stamps = ["2026-07-14T22:10:00Z", "2026-07-14T23:59:59.999Z", "2026-07-15T00:00Z"]
    first = [line(event(n, ts=stamps[n % 3])) for n in range(7)]
    assert agent.post("events", b"\n".join(first)).json()["stored"] == 7
    again = first + [line(event(n, ts=stamps[2])) for n in range(7, 9)]
    assert agent.post("events", b"\n".join(again)).json()["stored"] == 2

    days = {
        (r.bucket.isoformat(), r.dimension, r.key): r.count
        for r in DailyRollup.objects.all()
    }
    hours: Counter[tuple[str, str, str]] = Counter()
    for r in Rollup.objects.filter(dimension="outcome"):
        hours[(r.bucket.strftime("%Y-%m-%dT00:00:00+00:00"), r.dimension, r.key)] += (
            r.count
        )
    assert days == dict(hours)
    assert days[("2026-07-14T00:00:00+00:00", "outcome", "execution:failed")] == 5
    assert days[("2026-07-15T00:00:00+00:00", "outcome", "execution:failed")] == 4
    models = set(DailyRollup.objects.values_list("model__key", flat=True))
    assert models == {"openrouter/deepseek/deepseek-v3.2"}


def test_gzip_body_is_accepted(agent: AgentClient) -> None:
    body = gzip.compress(b"\n".join(line(event(n)) for n in range(3)))
    response = agent.post("events", body, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 200
    assert response.json()["stored"] == 3


def test_oversize_bodies_get_json_413(agent: AgentClient, settings: Any) -> None:
    settings.PI_INGEST_MAX_BYTES = 10_000
    big = b"\n".join(line(event(n)) for n in range(100))
    response = agent.post("events", big)
    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "too_large"
    bomb = gzip.compress(b" " * 5_000_000 + b"\n")  # small on the wire, huge inflated
    response = agent.post("events", bomb, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"
    assert EventRecord.objects.count() == 0


def test_more_than_the_line_limit_is_413(agent: AgentClient, settings: Any) -> None:
    settings.PI_INGEST_MAX_LINES = 10
    response = agent.post("events", b"\n".join(line(event(n)) for n in range(11)))
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"


def test_body_django_refuses_is_json_413(agent: AgentClient, settings: Any) -> None:
    """An endpoint whose JSON body Django reads itself (a command ack) answers 413."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = agent.client.post(
        "/api/v1/agent/commands/00000000-0000-0000-0000-000000000000/ack",
        json.dumps({"status": "applied", "result": {}, "detail": "x" * 500}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {agent.token}",
    )
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"


def test_bad_gzip_is_a_clear_400(agent: AgentClient) -> None:
    response = agent.post("events", b"not gzip", HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400
    assert response.json()["code"] == "bad_encoding"


def test_overload_answers_429_with_retry_after(
    agent: AgentClient, settings: Any
) -> None:
    settings.PI_INGEST_MAX_CONCURRENT = 1
    with limits.ingest_slot():  # another request is running in this process
        response = agent.post("events", line(event(1)))
    assert response.status_code == 429
    assert response["Retry-After"] == str(limits.RETRY_AFTER_SECONDS)
    assert response.json()["code"] == "overloaded"
    assert agent.post("events", line(event(1))).status_code == 200


def test_unbound_agent_gets_409_and_bad_token_401(db: None) -> None:
    agent = AgentClient.enroll()
    response = agent.post("events", line(event(1)))
    assert response.status_code == 409
    assert response.json()["code"] == "agent_not_bound"
    agent.token = "pid_ag_not-a-real-token"
    response = agent.post("events", line(event(1)))
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"


def test_corpus_kinds_and_rollups(agent: AgentClient, reader: Client) -> None:
    rows = [
        {
            "ts": "2026-07-14T16:52:10.004Z",
            "provider": "openrouter",
            "modelId": "qwen/qwen3-coder",
            "reason": "rate_limit",
            "retryable": True,
            "message": "429 [REDACTED]",
        },
        {
            "kind": "tool_validation",
            "ts": "2026-07-14T16:42:10.021Z",
            "provider": "ollama",
            "modelId": "qwen2.5-coder:7b",
            "tool": "read",
            "failureModes": ["other"],
            "shape": [
                {
                    "path": "limit",
                    "expectedType": "number",
                    "receivedType": "object",
                    "keyword": "type",
                }
            ],
            "errorKeywords": ["type"],
        },
        {
            "kind": "tool_execution",
            "ts": "2026-07-14T16:45:33.410Z",
            "tool": "bash",
            "state": "rejected",
            "phase": "policy",
            "failureCode": "blocked",
            "nextAction": "No.",
        },
        {"kind": "tool_oops", "ts": "2026-07-14T16:45:33.410Z"},
        {"ts": "2026-07-14T16:45:33.410Z", "reason": "network"},
    ]
    result = agent.post("corpus", b"\n".join(line(r) for r in rows)).json()
    assert [r["status"] for r in result["results"]] == ["stored"] * 3 + ["rejected"] * 2
    assert result["results"][3]["code"] == "unknown_kind"
    assert "retryable" in result["results"][4]["reason"]
    assert set(CorpusRecord.objects.values_list("kind", flat=True)) == {
        "provider",
        "tool_validation",
        "tool_execution",
    }
    page = reader.get("/api/v1/corpus", {"reason": "rate_limit"}).json()
    assert [item["record"]["message"] for item in page["items"]] == ["429 [REDACTED]"]
    rollup = reader.get("/api/v1/rollups", {"dimension": "provider_reason"}).json()
    assert [(r["key"], r["count"]) for r in rollup["rows"]] == [("rate_limit", 1)]


def test_stats_keep_the_highest_sequence(agent: AgentClient) -> None:
    def stats(seq: int, repaired: int) -> bytes:
        return line(
            {
                "version": 1,
                "sessionId": SESSION,
                "lastRecordSequence": seq,
                "stats": {"clean": 0, "repaired": repaired, "bounced": 0},
            }
        )

    result = agent.post("stats", stats(5, 2) + b"\n" + stats(9, 4)).json()
    assert [r["status"] for r in result["results"]] == ["duplicate", "stored"]
    assert (
        agent.post("stats", stats(7, 3)).json()["results"][0]["status"] == "duplicate"
    )
    assert agent.post("stats", stats(12, 6)).json()["stored"] == 1
    kept = SessionStats.objects.get()
    assert kept.last_record_sequence == 12
    assert kept.document["stats"]["repaired"] == 6
    bad = line(
        {"version": 1, "sessionId": SESSION, "lastRecordSequence": -1, "stats": {}}
    )
    assert agent.post("stats", bad).json()["results"][0]["code"] == "schema_violation"


def test_event_pages_are_stable_and_filtered(
    agent: AgentClient, reader: Client
) -> None:
    agent.post("events", b"\n".join(line(event(n)) for n in range(25)))
    seen: list[int] = []
    cursor = ""
    while True:
        params = {
            "limit": "10",
            "phase": "timeout",
            **({"cursor": cursor} if cursor else {}),
        }
        page = reader.get("/api/v1/events", params).json()
        seen += [item["id"] for item in page["items"]]
        if not page["next_cursor"]:
            break
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == 25
    assert reader.get("/api/v1/events", {"phase": "policy"}).json()["items"] == []
    bad = reader.get("/api/v1/events", {"cursor": "garbage!"})
    # One code for a bad cursor, whichever list it was given to.
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_cursor")


def test_reads_need_a_login(db: None) -> None:
    assert Client().get("/api/v1/events").status_code == 401
    assert Client().get("/api/v1/hosts").status_code == 401
