"""Snapshot ingest: pi's load rules, the agent's send order, the derived history."""

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.fleet.models import Change, HostModel
from tests.ingest.support import AgentClient

HOST = {
    "id": "apple-m2-pro-12c-32g",
    "cpu": "Apple M2 Pro",
    "cores": 12,
    "totalMemGb": 32,
}
KEY = "openrouter/qwen/qwen3-coder"


def rule(mode: str, added: str, fired: str | None = None) -> dict[str, str]:
    return {
        "mode": mode,
        "text": f"{mode} rule.",
        "addedAt": added,
        "lastFiredAt": fired or added,
    }


def entry(at: str, **profile: Any) -> dict[str, Any]:
    base = {"rules": [], "teachStats": {}}
    return {"model": KEY, "at": at, "host": HOST, "profile": {**base, **profile}}


def store(*entries: dict[str, Any], key: str = KEY) -> bytes:
    bucket = {e["model"]: e for e in entries}
    return json.dumps({"version": 1, "hosts": {HOST["id"]: bucket}}).encode()


@pytest.fixture
def agent(db: None) -> AgentClient:
    agent = AgentClient.enroll()
    assert agent.heartbeat(HOST).status_code == 200
    return agent


def kinds(**filters: Any) -> list[tuple[str, str]]:
    rows = Change.objects.filter(**filters).order_by("at", "id")
    return [(c.kind, c.mode) for c in rows]


def test_the_agents_newest_snapshot_is_the_truth(
    agent: AgentClient, viewer: Any
) -> None:
    new = store(
        entry(
            "2026-08-02T00:00:00.000Z",
            rules=[rule("numberFromString", "2026-08-01T00:00:00.000Z")],
        )
    )
    old = store(entry("2026-07-01T00:00:00.000Z"))
    reader = Client()
    reader.force_login(viewer)

    def modes() -> list[str]:
        state = reader.get(f"/api/v1/hosts/{HOST['id']}/models/{KEY}").json()
        return [r["mode"] for r in state["rules"]]

    assert agent.snapshot(new, seq=1).json()["status"] == "stored"
    assert modes() == ["numberFromString"]
    # A restored backup: older `at`, but sent after: it is what the file holds now.
    assert agent.snapshot(old, seq=3).json()["status"] == "stored"
    assert modes() == []
    # A late delivery of an earlier send changes nothing.
    late = agent.snapshot(new, seq=2)
    assert late.status_code == 200
    assert late.json()["status"] == "stale"
    assert modes() == []
    assert agent.snapshot(old, seq=3).json()["status"] == "duplicate"
    # Without a sequence number (an older agent), arrival order decides.
    assert agent.snapshot(new).json()["status"] == "stored"
    assert modes() == ["numberFromString"]
    state = reader.get(f"/api/v1/hosts/{HOST['id']}/models/{KEY}").json()
    assert state["entry_at"].startswith("2026-08-02")
    assert state["model"] == KEY


@pytest.mark.parametrize("seq", ["-1", "1.5", "x", "9223372036854775808", "١"])
def test_a_bad_sequence_number_is_400(agent: AgentClient, seq: str) -> None:
    response = agent.snapshot(store(entry("2026-07-01T00:00:00.000Z")), seq=seq)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_seq"
    assert not HostModel.objects.exists()


def test_history_of_rules_probe_and_calibration(agent: AgentClient) -> None:
    t0 = "2026-07-01T00:00:00.000Z"
    first = entry(
        t0,
        rules=[
            rule("a", t0),
            rule("b", t0),
            rule("c", "2026-05-01T00:00:00.000Z"),
            rule("d", t0),
        ],
        toolProbe={
            "version": 1,
            "status": "native",
            "probedAt": t0,
            "nativeGrade": "task",
        },
        protocol={
            "version": 1,
            "variant": "tool-tag",
            "calibratedAt": t0,
        },  # legacy: no status
        teachStats={
            "a": {"taught": 1, "recurrenceBefore": 3, "recurrenceAfter": 0},
            "d": {"taught": 1, "recurrenceBefore": 3, "recurrenceAfter": 3},
            "z": {"taught": 0, "recurrenceBefore": 1, "recurrenceAfter": 0},
        },
    )
    assert agent.snapshot(store(first)).json()["status"] == "stored"
    hm = HostModel.objects.get()
    assert (hm.protocol_status, hm.protocol_variant, hm.rule_count) == (
        "calibrated",
        "tool-tag",
        4,
    )
    assert ("model_seen", "") in kinds()
    assert ("calibration_set", "") in kinds()

    t1 = "2026-07-05T00:00:00.000Z"
    second = copy.deepcopy(first)
    second["at"] = t1
    second["profile"]["rules"] = [
        rule("a", t0, t1)
    ]  # a re-fired; b removed; c expired; d efficacy
    second["profile"]["toolProbe"] = {
        "version": 1,
        "status": "text-protocol",
        "variant": "tool-call",
        "probedAt": t1,
        "nativeGrade": "echo-only",
    }
    second["profile"]["protocol"] = {
        "version": 1,
        "status": "failed",
        "attemptedAt": t1,
        "variantsTried": ["tool-tag"],
    }
    del second["profile"]["teachStats"]["z"]
    response = agent.snapshot(store(second)).json()
    assert response["status"] == "stored"
    assert response["changes"] == 8
    changes = set(kinds(at__gte=datetime(2026, 7, 2, tzinfo=UTC)))
    assert {
        ("rule_refired", "a"),
        ("rule_removed", "b"),
        ("rule_retired", "c"),
        ("rule_ineffective", "d"),
    } <= changes
    assert {
        ("verdict_changed", ""),
        ("grade_changed", ""),
        ("calibration_replaced", ""),
        ("teach_stats_cleared", "z"),
    } <= changes
    hm.refresh_from_db()
    assert (hm.probe_status, hm.probe_grade, hm.probe_variant) == (
        "text-protocol",
        "echo-only",
        "tool-call",
    )
    assert (hm.protocol_status, hm.protocol_variant) == ("failed", "")

    third = copy.deepcopy(second)
    third["at"] = "2026-07-06T00:00:00.000Z"
    del third["profile"]["protocol"]
    agent.snapshot(store(third))
    assert kinds(kind="calibration_reset") == [("calibration_reset", "")]


def test_cap_eviction_is_told_apart(agent: AgentClient) -> None:
    t0, t1 = "2026-07-01T00:00:00.000Z", "2026-07-02T00:00:00.000Z"
    five = [rule(m, t0) for m in "abcde"]
    agent.snapshot(store(entry(t0, rules=five)))
    after = [rule(m, t0) for m in "bcde"] + [rule("f", t1)]
    agent.snapshot(store(entry(t1, rules=after)))
    assert ("rule_evicted", "a") in kinds()
    assert ("rule_added", "f") in kinds()


def test_entries_pi_would_drop_are_reported(agent: AgentClient) -> None:
    good = entry(
        "2026-07-01T00:00:00.000Z",
        rules=[rule("a", "2026-07-01T00:00:00.000Z"), {"mode": "b"}],
        toolProbe={"version": 1, "status": "native", "probedAt": "x", "variant": None},
    )
    wrong_model = {**entry("2026-07-01T00:00:00.000Z"), "model": "other/name"}
    wrong_host = {
        **entry("2026-07-01T00:00:00.000Z"),
        "host": {**HOST, "id": "elsewhere-1c-1g"},
    }
    document = {
        "version": 1,
        "hosts": {
            HOST["id"]: {
                KEY: good,
                "x/y": wrong_model,
                "p/q": {**wrong_host, "model": "p/q"},
            },
            "junk": 5,
        },
    }
    result = agent.snapshot(json.dumps(document).encode()).json()
    assert result["models"] == 1
    reasons = {(d["model"], d["reason"]) for d in result["dropped"]}
    assert ("x/y", "entry.model differs from its key") in reasons
    assert any(m == "p/q" and "differs from the bucket key" in r for m, r in reasons)
    # Another host's bucket, even a broken one, is not this agent's to report.
    assert result["ignored_hosts"] == 1
    assert {d["host"] for d in result["dropped"]} == {HOST["id"]}
    assert (KEY, "rules[1] is not a valid rule") in reasons
    assert (KEY, "profile.toolProbe is not valid") in reasons
    hm = HostModel.objects.get()
    assert hm.rule_count == 1
    assert hm.probe_status == ""


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "must be a JSON object"),
        (b'{"version": 2, "hosts": {}}', "version must be 1"),
        (b'{"version": 1, "hosts": []}', "`hosts` must be an object"),
    ],
)
def test_invalid_store_is_400(agent: AgentClient, body: bytes, fragment: str) -> None:
    response = agent.snapshot(body)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_store"
    assert fragment in response.json()["detail"]


def test_unsafe_strings_in_snapshot_read_back_faithfully(
    agent: AgentClient, viewer: Any
) -> None:
    t0 = "2026-07-01T00:00:00.000Z"
    body = store(
        entry(
            t0,
            toolProbe={
                "version": 1,
                "status": "none",
                "probedAt": t0,
                "diagnostic": "cut \ud83d",
            },
        )
    )
    assert b"\\ud83d" in body
    assert agent.snapshot(body).json()["status"] == "stored"
    reader = Client()
    reader.force_login(viewer)
    state = reader.get(f"/api/v1/hosts/{HOST['id']}/models/{KEY}").json()
    assert state["toolProbe"]["diagnostic"] == "cut \ud83d"
    history = reader.get(f"/api/v1/hosts/{HOST['id']}/models/{KEY}/history").json()
    assert {c["kind"] for c in history} >= {"model_seen", "verdict_changed"}
