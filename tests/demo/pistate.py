"""Checking a pi state dir against the published ingest schemas."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Check = Callable[[str, Any], None]


def event_schema(record: dict[str, Any]) -> str:
    if record["kind"] == "tool_argument_validation":
        return "event-validation"
    return "event-execution-failure"


def corpus_schema(record: dict[str, Any]) -> str:
    return {
        "tool_validation": "corpus-tool-validation",
        "tool_execution": "corpus-tool-execution",
    }.get(record.get("kind", ""), "corpus-provider")


def check_state_dir(state: Path, check: Check) -> int:
    """Validate every pi file in `state` against its schema; returns lines checked."""
    checked = 0
    check(
        "adaptation-store", json.loads((state / "model-adaptation.json").read_bytes())
    )
    for name, pick in (
        ("tool-recovery-events.jsonl", event_schema),
        ("failure-corpus.jsonl", corpus_schema),
    ):
        for line in (state / name).read_text("utf-8").splitlines():
            record = json.loads(line)
            check(pick(record), record)
            checked += 1
    for path in (state / "tool-recovery-stats").glob("*.json"):
        check("session-stats", json.loads(path.read_bytes()))
    return checked
