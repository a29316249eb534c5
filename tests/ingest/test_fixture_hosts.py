"""Acceptance (issue #2): each fixture host ingested over HTTP reads back exactly.

Everything `toolhealth.store-only.txt` shows is found through the operator API; the
counts match the fixture README; re-sending, reordering and rotating change nothing.
"""

import json
import math
import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.fleet import toolhealth
from pi_dashboard.fleet.models import Change, Host
from pi_dashboard.ingest.models import Rollup, SessionStats
from pi_dashboard.lib.isotime import parse_iso
from tests.conftest import PI_FIXTURES
from tests.ingest.support import (
    AgentClient,
    file_lines,
    fingerprint_of,
    readme_facts,
    stats_lines,
    toolhealth_facts,
)

NOW = datetime(2026, 8, 18, 17, 30, tzinfo=UTC)  # the README's "now"
HOSTS = (
    sorted(p.name for p in PI_FIXTURES.iterdir() if p.is_dir())
    if PI_FIXTURES.is_dir()
    else []
)


def days_ago(stamp: str) -> str:
    moment = parse_iso(stamp)
    assert moment is not None, stamp
    return f"{math.floor((NOW - moment).total_seconds() / 86400)}d ago"


def ingest_host(agent: AgentClient, host_dir: Path) -> None:
    response = agent.heartbeat(fingerprint_of(host_dir))
    assert response.status_code == 200, response.content
    assert response.json()["host"] == host_dir.name
    response = agent.snapshot((host_dir / "model-adaptation.json").read_bytes())
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "stored"
    for path, lines in (
        ("events", file_lines(host_dir / "tool-recovery-events.jsonl")),
        ("corpus", file_lines(host_dir / "failure-corpus.jsonl")),
        ("stats", stats_lines(host_dir)),
    ):
        results = agent.lines(path, lines)
        assert sum(r["stored"] for r in results) == len(lines), path
        assert all(r["rejected"] == 0 for r in results), path


def all_pages(client: Client, path: str, **params: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = ""
    while True:
        query = {**params, "limit": "1000", **({"cursor": cursor} if cursor else {})}
        response = client.get(path, query)
        assert response.status_code == 200, response.content
        page = response.json()
        items += page["items"]
        if not page["next_cursor"]:
            return items
        cursor = page["next_cursor"]


def rollup_totals(client: Client, host: str, dimension: str) -> dict[str, int]:
    response = client.get(
        "/api/v1/rollups", {"dimension": dimension, "host": host, "bucket": "day"}
    )
    assert response.status_code == 200, response.content
    totals: Counter[str] = Counter()
    for row in response.json()["rows"]:
        totals[row["key"]] += row["count"]
    return dict(totals)


def assert_state_matches_toolhealth(client: Client, host_dir: Path) -> None:
    expected = toolhealth_facts((host_dir / "toolhealth.store-only.txt").read_text())
    host = client.get(f"/api/v1/hosts/{host_dir.name}").json()
    assert sorted(m["model"] for m in host["models"]) == sorted(expected)
    for key, facts in expected.items():
        response = client.get(f"/api/v1/hosts/{host_dir.name}/models/{key}")
        assert response.status_code == 200, (key, response.content)
        state = response.json()
        probe = state["toolProbe"]
        shown = f"v{probe['version']} {probe['status']}"
        shown += f" ({probe['variant']})" if probe.get("variant") else ""
        shown += f" native={probe['nativeGrade']}" if probe.get("nativeGrade") else ""
        assert f"{shown} {days_ago(probe['probedAt'])}" == facts["probe"], key
        assert probe.get("diagnostic") == facts.get("diagnostic"), key
        protocol = state["protocol"]
        if facts["protocol"] == "none":
            assert protocol is None, key
            assert state["protocol_status"] == "", key
        elif protocol.get("status") == "failed":
            assert state["protocol_status"] == "failed"
            assert (
                facts["protocol"]
                == f"v{protocol['version']} failed {days_ago(protocol['attemptedAt'])}"
            )
            assert protocol["variantsTried"] == facts["variants_tried"]
        else:
            assert state["protocol_status"] == "calibrated"
            assert state["protocol_variant"] == protocol["variant"]
            when = days_ago(protocol["calibratedAt"])
            assert (
                facts["protocol"]
                == f"v{protocol['version']} {protocol['variant']} calibrated {when}"
            )
        rules = {r["mode"]: r for r in state["rules"]}
        assert set(rules) == set(facts["rules"]), key
        for mode, rule in facts["rules"].items():
            assert rules[mode]["text"] == rule["text"]
            assert days_ago(rules[mode]["lastFiredAt"]) == rule["age"]
            assert rules[mode]["addedAt"]
        teach = {
            mode: (s["taught"], s["recurrenceBefore"], s["recurrenceAfter"])
            for mode, s in state["teachStats"].items()
        }
        assert teach == facts["teach"], key


def assert_counts(client: Client, root: Path, host_id: str) -> None:
    facts = readme_facts(root, host_id)
    events = all_pages(client, "/api/v1/events", host=host_id)
    assert len(events) == facts["events"]
    assert dict(Counter(e["kind"] for e in events)) == facts["events_by_kind"]
    corpus = all_pages(client, "/api/v1/corpus", host=host_id)
    assert len(corpus) == facts["corpus"]
    kinds = Counter(
        "provider-error(no kind)" if c["kind"] == "provider" else c["kind"]
        for c in corpus
    )
    assert dict(kinds) == facts["corpus_by_kind"]
    assert (
        SessionStats.objects.filter(host__pi_id=host_id).count() == facts["stats_files"]
    )
    outcomes = rollup_totals(client, host_id, "outcome")
    for outcome, count in facts["validation"].items():
        assert outcomes[f"validation:{outcome}"] == count
    for state, count in facts["states"].items():
        assert outcomes[f"execution:{state}"] == count
    assert rollup_totals(client, host_id, "phase") == facts["phases"]
    assert rollup_totals(client, host_id, "failure_code") == facts["codes"]


def everything(host_id: str) -> dict[str, Any]:
    rollups = list(
        Rollup.objects.filter(host__pi_id=host_id)
        .order_by("bucket", "dimension", "key", "model")
        .values_list("bucket", "model", "dimension", "key", "count")
    )
    return {
        "rollups": rollups,
        "changes": Change.objects.filter(host_model__host__pi_id=host_id).count(),
        "stats": list(
            SessionStats.objects.filter(host__pi_id=host_id)
            .values_list("session_id", "last_record_sequence")
            .order_by("session_id")
        ),
    }


def fresh_line(line: bytes, n: int) -> bytes:
    """A new record like `line` (pi appended it after rotation)."""
    record = json.loads(line)
    record["ts"] = f"2026-08-18T17:2{n}:00.000Z"
    if "recordId" in record:
        record["recordId"] = f"{record['sessionId']}:{9000 + n}"
    return json.dumps(record, separators=(",", ":")).encode()


@pytest.mark.parametrize("host_id", HOSTS)
def test_fixture_host_reads_back_exactly(
    db: None, pi_fixtures: Path, viewer: Any, host_id: str
) -> None:
    host_dir = pi_fixtures / host_id
    agent = AgentClient.enroll()
    ingest_host(agent, host_dir)
    reader = Client()
    reader.force_login(viewer)

    assert_state_matches_toolhealth(reader, host_dir)
    host = Host.objects.get(pi_id=host_id)
    expected_text = (host_dir / "toolhealth.store-only.txt").read_text()
    assert toolhealth.toolhealth_render(host=host, now=NOW) == expected_text
    assert_counts(reader, pi_fixtures, host_id)

    # Three more times, in other orders: nothing changes.
    before = everything(host_id)
    rng = random.Random(host_id)
    logs = {
        "events": file_lines(host_dir / "tool-recovery-events.jsonl"),
        "corpus": file_lines(host_dir / "failure-corpus.jsonl"),
        "stats": stats_lines(host_dir),
    }
    for order in ("reversed", "shuffled", "stats-first"):
        paths = ["stats", "corpus", "events"] if order == "stats-first" else list(logs)
        for path in paths:
            lines = (
                list(reversed(logs[path]))
                if order == "reversed"
                else rng.sample(logs[path], len(logs[path]))
            )
            results = agent.lines(path, lines)
            assert sum(r["stored"] for r in results) == 0, (order, path)
        assert (
            agent.snapshot((host_dir / "model-adaptation.json").read_bytes()).json()[
                "status"
            ]
            == "duplicate"
        )
    assert everything(host_id) == before
    assert_counts(reader, pi_fixtures, host_id)

    # A rotated log: pi kept the newest lines and appended a few new ones.
    for path in ("events", "corpus"):
        old = logs[path]
        rotated = old[len(old) * 2 // 5 :] + [fresh_line(old[-1], n) for n in range(3)]
        results = agent.lines(path, rotated)
        assert sum(r["stored"] for r in results) == 3, path
        assert sum(r["duplicate"] for r in results) == len(rotated) - 3, path
        assert agent.lines(path, rotated)[0]["stored"] == 0
    events = all_pages(reader, "/api/v1/events", host=host_id)
    assert len(events) == readme_facts(pi_fixtures, host_id)["events"] + 3


def test_shared_store_with_every_host(db: None, pi_fixtures: Path, viewer: Any) -> None:
    """The top-level store holds all hosts; each agent updates only its own."""
    shared = (pi_fixtures / "model-adaptation.json").read_bytes()
    agents = {}
    for host_id in HOSTS:
        agent = AgentClient.enroll(f"agent-{host_id}")
        agent.heartbeat(fingerprint_of(pi_fixtures / host_id))
        agents[host_id] = agent
        before = set(
            Host.objects.filter(host_models__isnull=False).values_list(
                "pi_id", flat=True
            )
        )
        response = agent.snapshot(shared)
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "stored"
        assert (body["hosts"], body["ignored_hosts"]) == (1, len(HOSTS) - 1)
        after = set(
            Host.objects.filter(host_models__isnull=False).values_list(
                "pi_id", flat=True
            )
        )
        assert after - before == {host_id}
    for host_id in HOSTS:
        host = Host.objects.get(pi_id=host_id)
        expected = (pi_fixtures / host_id / "toolhealth.store-only.txt").read_text()
        assert toolhealth.toolhealth_render(host=host, now=NOW) == expected
    reader = Client()
    reader.force_login(viewer)
    models = {m["key"]: m for m in reader.get("/api/v1/models").json()}
    assert models["openrouter/deepseek/deepseek-v3.2"]["host_count"] == 2
    detail = reader.get("/api/v1/models/openrouter/deepseek/deepseek-v3.2").json()
    assert detail["provider"] == "openrouter"
    assert detail["model_id"] == "deepseek/deepseek-v3.2"
    assert sorted(h["host"] for h in detail["hosts"]) == [
        h for h in HOSTS if not h.startswith("apple")
    ]
    hosts = reader.get("/api/v1/hosts").json()
    assert [h["id"] for h in hosts] == HOSTS
    assert hosts[0]["hostnames"] == ["box"]
    # Each host's own file is the same slice: nothing changes.
    for host_id in HOSTS:
        again = agents[host_id].snapshot(
            (pi_fixtures / host_id / "model-adaptation.json").read_bytes()
        )
        assert again.json()["changes"] == 0
