"""The fleet-wide failure corpus page and its export (issue 12 items 15-16).

A fixture host's real pi data goes in through the ingest API; the page groups it,
the export gives pi's lines back, and pi's own replay script reads the export.
"""

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.ingest.support import AgentClient, file_lines, fingerprint_of

HOST = "apple-m3-max-16c-128g"
ALL_TIME = {"since": "2026-01-01", "until": "2026-12-31"}


@pytest.fixture
def shipped(db: None, pi_fixtures: Path) -> Path:
    host_dir = pi_fixtures / HOST
    agent = AgentClient.enroll()
    assert agent.heartbeat(fingerprint_of(host_dir)).status_code == 200
    agent.lines("events", file_lines(host_dir / "tool-recovery-events.jsonl"))
    agent.lines("corpus", file_lines(host_dir / "failure-corpus.jsonl"))
    return host_dir / "failure-corpus.jsonl"


def viewer_client(viewer: Any) -> Client:
    client = Client()
    client.force_login(viewer)
    return client


def fixture_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in file_lines(path)]


def test_page_groups_shapes_codes_and_reasons(viewer, shipped) -> None:
    records = fixture_records(shipped)
    response = viewer_client(viewer).get("/corpus/", ALL_TIME)
    assert response.status_code == 200
    corpus = response.context["corpus"]
    kinds = Counter(r.get("kind", "provider") for r in records)
    assert sum(g.count for g in corpus.shapes) == kinds["tool_validation"] == 71
    assert sum(g.count for g in corpus.execution) == kinds["tool_execution"]
    assert sum(g.count for g in corpus.provider) == kinds["provider"]
    # Unfixed shapes first, then by count.
    fixed = [g.is_fixed for g in corpus.shapes]
    assert fixed == sorted(fixed)
    assert not fixed[0]
    codes = Counter(
        r["failureCode"] for r in records if r.get("kind") == "tool_execution"
    )
    top_code, top_count = codes.most_common(1)[0]
    assert corpus.execution[0].key[0] == top_code
    assert corpus.execution[0].count == top_count
    body = response.content.decode()
    assert "Validation bounces by shape" in body
    assert "unfixed" in body
    assert "overloaded" in body  # a provider reason
    assert "Export failure-corpus.jsonl" in body


def test_filters_narrow_and_a_bad_date_is_a_visible_error(viewer, shipped) -> None:
    client = viewer_client(viewer)
    one_model = client.get("/corpus/", {**ALL_TIME, "model": "openai/gpt-5.1"})
    models = {m for g in one_model.context["corpus"].shapes for m in g.models}
    assert models == {"openai/gpt-5.1"}
    recent = client.get("/corpus/", {"range": "24h"})
    assert recent.context["corpus"].shapes == []  # the fixture is months old
    bad = client.get("/corpus/", {"since": "2026-02-30"})
    assert bad.status_code == 400
    assert "From: Enter a valid date." in bad.content.decode()


def export(client: Client, **params: str) -> bytes:
    response = client.get("/corpus/failure-corpus.jsonl", params)
    assert response.status_code == 200
    assert "failure-corpus.jsonl" in response["Content-Disposition"]
    return b"".join(response.streaming_content)


def test_export_gives_back_pis_lines(viewer, shipped) -> None:
    exported = export(viewer_client(viewer), **ALL_TIME)
    lines = [line for line in exported.split(b"\n") if line]
    # Same records, and each line as pi wrote it (key order, compact JSON).
    assert Counter(lines) == Counter(file_lines(shipped))


def test_pis_replay_script_replays_every_exported_validation(
    viewer, shipped, realpi, tmp_path
) -> None:
    path = tmp_path / "failure-corpus.jsonl"
    path.write_bytes(export(viewer_client(viewer), **ALL_TIME, model="openai/gpt-5.1"))
    validations = [
        r for r in fixture_records(path) if r.get("kind") == "tool_validation"
    ]
    assert validations
    result = subprocess.run(
        [str(realpi.node), "scripts/tool-repair-replay.mjs", str(path), "--json"],
        cwd=realpi.source,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert len(report) == len(validations)
    assert [item["tool"] for item in report] == [r["tool"] for r in validations]
