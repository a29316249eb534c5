"""A pi host that keeps working: new tool calls replayed from the shipped data.

Each tick replays one step of a real session of that host (a repaired or bounced
call, an execution failure, now and then a provider error) as a new session of
the same model, writing every file pi would write for it, through `pifiles`.
"""

import hashlib
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_dashboard.demo import adaptation, pifiles, records
from pi_dashboard.demo.shift import DATA_DIR
from pi_dashboard.lib import isotime

Record = dict[str, Any]
EVENTS = "tool-recovery-events.jsonl"
CORPUS = "failure-corpus.jsonl"
STORE = "model-adaptation.json"


def load_steps(host: str) -> dict[str, list[list[Record]]]:
    """The host's event log cut into steps, by model key.

    A bounced call is two records (docs/pi-host-pitfalls.md §22): the validation record
    and the execution failure pi writes right after it, with the same timestamp.
    """
    lines = (DATA_DIR / host / EVENTS).read_text("utf-8").splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    steps: dict[str, list[list[Record]]] = {}
    i = 0
    while i < len(events):
        step = [events[i]]
        nxt = events[i + 1] if i + 1 < len(events) else None
        if (
            events[i].get("outcome") == "bounced"
            and nxt is not None
            and nxt["kind"] == "tool_execution_failure"
            and nxt["ts"] == events[i]["ts"]
        ):
            step.append(nxt)
        i += len(step)
        key = f"{step[0].get('provider')}/{step[0].get('model')}"
        steps.setdefault(key, []).append(step)
    return steps


def load_provider_errors(host: str) -> list[Record]:
    lines = (DATA_DIR / host / CORPUS).read_text("utf-8").splitlines()
    rows = (json.loads(line) for line in lines if line.strip())
    return [row for row in rows if "kind" not in row]


@dataclass
class Session:
    session_id: str
    model: str
    remaining: int
    sequence: int = 0
    stats: Record | None = None


@dataclass
class DemoHost:
    """One simulated pi host writing into `state_dir`."""

    host_id: str
    state_dir: Path
    rng: random.Random = field(default_factory=random.Random)
    event_bounds: pifiles.Bounds = pifiles.EVENT_LOG_BOUNDS
    corpus_bounds: pifiles.Bounds = pifiles.CORPUS_BOUNDS
    session: Session | None = None

    def __post_init__(self) -> None:
        self.steps = load_steps(self.host_id)
        self.provider_errors = load_provider_errors(self.host_id)

    def tick(self, now: datetime | None = None) -> list[Record]:
        """Replay one step now; returns the event-log records written."""
        now = now or datetime.now(UTC)
        stamp = isotime.iso(now)
        session = self.current_session()
        step = self.rng.choice(self.steps[session.model])
        written = [self.restamp(template, session, stamp) for template in step]
        self.tag_taught(written, session.model)
        pifiles.append_records(self.state_dir / EVENTS, written, self.event_bounds)
        corpus = [row for event in written if (row := records.corpus_row(event))]
        if self.provider_errors and self.rng.random() < 0.08:
            error = dict(self.rng.choice(self.provider_errors))
            corpus.append({**error, "ts": stamp})
        if corpus:
            pifiles.append_records(self.state_dir / CORPUS, corpus, self.corpus_bounds)
        self.update_stats(session, written)
        self.update_store(session.model, written, stamp)
        session.remaining -= 1
        return written

    def current_session(self) -> Session:
        if self.session is None or self.session.remaining <= 0:
            model = self.rng.choice(sorted(self.steps))
            self.session = Session(records.uuid7(), model, self.rng.randint(8, 30))
        return self.session

    def restamp(self, template: Record, session: Session, stamp: str) -> Record:
        event = dict(template)
        event["recordId"] = f"{session.session_id}:{session.sequence}"
        event["ts"] = stamp
        event["sessionId"] = session.session_id
        session.sequence += 1
        return event

    def tag_taught(self, events: list[Record], model: str) -> None:
        """pi re-tags `taught: none` as `rule` when a standing rule covers the call."""
        store = pifiles.read_store(self.state_dir / STORE)
        entry = store["hosts"].get(self.host_id, {}).get(model)
        ruled = {r.get("mode") for r in entry["profile"]["rules"]} if entry else set()
        for event in events:
            if event["kind"] != "tool_argument_validation":
                continue
            modes = {*event["failureModes"], *event["repairsApplied"]}
            if event.get("taught") == "none" and modes & ruled:
                event["taught"] = "rule"

    def update_stats(self, session: Session, events: list[Record]) -> None:
        validations = [e for e in events if e["kind"] == "tool_argument_validation"]
        if not validations:
            return
        if session.stats is None:
            session.stats = records.empty_stats(session.session_id)
        for event in validations:
            records.stats_add(session.stats, event)
        name = hashlib.sha256(session.session_id.encode()).hexdigest()[:24]
        path = self.state_dir / "tool-recovery-stats" / f"{name}.json"
        pifiles.write_stats_file(path, session.stats)

    def update_store(self, model: str, events: list[Record], stamp: str) -> None:
        """One locked write per change, as pi does: teach stats, then perf."""
        now = isotime.parse_iso(stamp) or datetime.now(UTC)
        repaired = [
            e
            for e in events
            if e.get("outcome") == "repaired" and e.get("repairsApplied")
        ]
        path = self.state_dir / STORE
        with pifiles.store_bucket(path, self.host_id) as bucket:
            entry = bucket.get(model)
            if entry is None:
                return
            adaptation.prune(entry, now=now)
            for event in repaired:
                adaptation.record_repair(
                    entry, modes=event["repairsApplied"], now_iso=stamp
                )
        with pifiles.store_bucket(path, self.host_id) as bucket:
            if model in bucket:
                adaptation.record_perf_sample(
                    bucket[model], now_iso=stamp, rng=self.rng
                )
