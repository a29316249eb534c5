"""The published JSON Schemas and the OpenAPI document."""

import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from jsonschema import Draft202012Validator

from pi_dashboard.ingest import contracts, records
from tests.ingest.support import file_lines, host_dirs


@pytest.mark.django_db
def test_schemas_are_served_and_valid() -> None:
    index = Client().get("/api/v1/schemas/")
    assert index.status_code == 200
    names = [s["name"] for s in index.json()["schemas"]]
    assert names == list(contracts.SCHEMA_NAMES)
    for name in names:
        response = Client().get(f"/api/v1/schemas/{name}")
        assert response.status_code == 200
        document = response.json()
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(document)
    missing = Client().get("/api/v1/schemas/nope")
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found"


def test_every_fixture_record_is_valid(pi_fixtures: Path) -> None:
    store = json.loads((pi_fixtures / "model-adaptation.json").read_bytes())
    assert contracts.violation("adaptation-store", store) is None
    plain = {
        name: Draft202012Validator(contracts.schema_document(name))
        for name in contracts.SCHEMA_NAMES
    }
    for host_dir in host_dirs(pi_fixtures):
        for raw in file_lines(host_dir / "tool-recovery-events.jsonl"):
            record = json.loads(raw)
            name = (
                "event-validation"
                if record["kind"] == "tool_argument_validation"
                else "event-execution-failure"
            )
            assert contracts.violation(name, record) is None
            assert plain[name].is_valid(record)
        for raw in file_lines(host_dir / "failure-corpus.jsonl"):
            record = json.loads(raw)
            name = {
                "tool_validation": "corpus-tool-validation",
                "tool_execution": "corpus-tool-execution",
            }.get(record.get("kind", ""), "corpus-provider")
            assert contracts.violation(name, record) is None
        for path in (host_dir / "tool-recovery-stats").glob("*.json"):
            assert (
                contracts.violation("session-stats", json.loads(path.read_bytes()))
                is None
            )


@pytest.mark.parametrize(
    ("name", "record"),
    [
        (
            "event-execution-failure",
            {
                "kind": "tool_execution_failure",
                "version": 1,
                "recordId": "a",
                "ts": "t",
                "sessionId": "s",
                "tool": 5,
                "state": "failed",
                "phase": "p",
                "failureCode": "c",
                "nextAction": "n",
            },
        ),
        (
            "event-validation",
            {
                "kind": "tool_argument_validation",
                "version": 1,
                "recordId": "a",
                "ts": "t",
                "sessionId": "s",
                "outcome": "repaired",
                "tool": "t",
                "failureModes": ["x"],
                "repairsApplied": [1],
            },
        ),
        (
            "corpus-provider",
            {"ts": "t", "reason": "r", "retryable": "yes", "message": "m"},
        ),
    ],
)
def test_fast_validator_agrees_with_plain_jsonschema(
    name: str, record: dict[str, Any]
) -> None:
    plain = Draft202012Validator(contracts.schema_document(name))
    assert not plain.is_valid(record)
    assert contracts.violation(name, record) is not None


# Values of every JSON type, edge cases included, that mutations put in a record.
ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    -0.5,
    2**70,
    "",
    "x",
    "tool_execution_failure",
    [],
    ["a"],
    [1],
    [None],
    [{}],
    {},
    {"path": "p"},
    {"a": [1]},
]


def sites(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every key and list item inside `value`, at any depth."""
    members = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in members:
        yield (*path, key)
        if isinstance(child, dict | list):
            yield from sites(child, (*path, key))


def mutants(record: Any, rng: random.Random, count: int) -> list[Any]:
    """Up to `count` copies of `record`, each with one member removed or replaced by
    a value of another type or range."""
    edits = [
        (site, replacement)
        for site in sites(record)
        for replacement in [DELETE, *ODD_VALUES]
    ]
    out = []
    for site, replacement in rng.sample(edits, min(count, len(edits))):
        copy = json.loads(json.dumps(record))
        parent = copy
        for key in site[:-1]:
            parent = parent[key]
        if replacement is DELETE:
            del parent[site[-1]]
        else:
            parent[site[-1]] = replacement
        out.append(copy)
    return out


DELETE = object()
HEARTBEAT = {
    "hostname": "box",
    "host": {"id": "h-1c-1g", "cpu": "c", "cores": 1, "totalMemGb": 1},
    "agent_version": "0.1.0",
    "pi_version": "0.96.0",
    "state_dir": "/s",
    "lag": {"events_bytes": 0, "corpus_bytes": 0, "spool_batches": 0},
}


def test_compiled_predicates_agree_with_jsonschema_on_mutated_records(
    pi_fixtures: Path,
) -> None:
    rng = random.Random(20261130)
    samples: dict[str, list[Any]] = {}
    for host_dir in host_dirs(pi_fixtures):
        for raw in file_lines(host_dir / "tool-recovery-events.jsonl"):
            record = json.loads(raw)
            samples.setdefault(records.event_classify(record), []).append(record)
        for raw in file_lines(host_dir / "failure-corpus.jsonl"):
            record = json.loads(raw)
            samples.setdefault(records.corpus_classify(record), []).append(record)
        for path in (host_dir / "tool-recovery-stats").glob("*.json"):
            samples.setdefault("session-stats", []).append(
                json.loads(path.read_bytes())
            )
    samples["adaptation-store"] = [
        json.loads((pi_fixtures / "model-adaptation.json").read_bytes())
    ]
    samples["heartbeat"] = [HEARTBEAT]
    checked = Counter[str]()
    for name, originals in samples.items():
        plain = Draft202012Validator(contracts.schema_document(name))
        assert all(plain.is_valid(original) for original in originals), name
        for original in originals[:20]:
            for record in mutants(original, rng, 100 if len(originals) > 1 else 500):
                expected = plain.is_valid(record)
                assert (contracts.violation(name, record) is None) == expected, (
                    name,
                    record,
                )
                checked[f"{name} {'valid' if expected else 'invalid'}"] += 1
    # The mutations reach both outcomes for every record kind.
    for name in samples:
        assert checked[f"{name} valid"], checked
        assert checked[f"{name} invalid"], checked


@pytest.mark.django_db
def test_openapi_document_loads_and_docs_render() -> None:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/ingest/events",
        "/api/v1/ingest/snapshot",
        "/api/v1/agent/heartbeat",
        "/api/v1/hosts",
        "/api/v1/events",
        "/api/v1/rollups",
        "/api/v1/schemas/",
    ):
        assert path in paths, path
    assert Client().get("/api/v1/docs").status_code == 200


@pytest.mark.django_db
def test_unknown_api_paths_answer_json() -> None:
    response = Client().get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert Client().get("/api/v2/").json()["code"] == "not_found"
