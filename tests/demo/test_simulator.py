"""The demo's pi host keeps writing valid pi files, as pi would."""

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pi_dashboard.demo.shift import build_state_dir
from pi_dashboard.demo.simulator import DemoHost
from tests.demo.pistate import check_state_dir

HOST = "amd-ryzen-9-7950x-16-core-processor-32c-64g"


def make_host(tmp_path: Path, seed: int = 7) -> DemoHost:
    state = tmp_path / "state"
    build_state_dir(HOST, state, now=datetime.now(UTC))
    return DemoHost(HOST, state, rng=random.Random(seed))


def test_ticks_append_new_valid_records(tmp_path: Path, schema_check) -> None:
    demo = make_host(tmp_path)
    events = demo.state_dir / "tool-recovery-events.jsonl"
    before = len(events.read_text().splitlines())
    written = [r for _ in range(40) for r in demo.tick()]

    lines = events.read_text().splitlines()
    assert len(lines) == before + len(written)
    ids = [json.loads(line)["recordId"] for line in lines[before:]]
    assert len(set(ids)) == len(ids)
    check_state_dir(demo.state_dir, schema_check)


def test_perf_samples_bump_at_and_samples(tmp_path: Path) -> None:
    demo = make_host(tmp_path)
    store = demo.state_dir / "model-adaptation.json"
    at = datetime(2031, 1, 1, tzinfo=UTC)
    demo.tick(at)
    entry = json.loads(store.read_bytes())["hosts"][HOST][demo.session.model]
    assert entry["at"] == "2031-01-01T00:00:00.000Z"
    assert entry["profile"]["perf"]["updatedAt"] == entry["at"]


def test_a_removed_rule_comes_back_at_the_next_recurrence(tmp_path: Path) -> None:
    """pi re-learns a removed rule whose recurrenceBefore is already >= 3
    (docs/pi-host-pitfalls.md §26); the demo shows the same, which is why forget_mode
    exists."""
    demo = make_host(tmp_path)
    store = demo.state_dir / "model-adaptation.json"
    model = "openai/gpt-5.1"
    doc = json.loads(store.read_bytes())
    profile = doc["hosts"][HOST][model]["profile"]
    removed = profile["rules"].pop(0)
    assert profile["teachStats"][removed["mode"]]["recurrenceBefore"] >= 3
    store.write_text(json.dumps(doc))

    now = datetime.now(UTC)
    repair = {"outcome": "repaired", "repairsApplied": [removed["mode"]]}
    demo.update_store(model, [repair], now.isoformat().replace("+00:00", "Z"))
    rules = json.loads(store.read_bytes())["hosts"][HOST][model]["profile"]["rules"]
    assert removed["mode"] in [r["mode"] for r in rules]
    # ...while the time-based retirement still prunes a rule nobody fired for 30 days.
    later = now + timedelta(days=31)
    demo.update_store(model, [], later.isoformat().replace("+00:00", "Z"))
    rules = json.loads(store.read_bytes())["hosts"][HOST][model]["profile"]["rules"]
    assert rules == []
