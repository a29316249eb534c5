"""The records pi derives from one tool call (docs/pi-host-data.md §2.6, §3, §4.1).

Pure functions on dicts: which corpus rows an event-log record produces, and how
a session's persisted stats change when a validation record is logged.
"""

import os
import time
import uuid
from typing import Any

Record = dict[str, Any]


def uuid7() -> str:
    """A UUIDv7 session id, as pi makes them (48-bit ms time, then random bits)."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76 | (rand >> 68 & 0xFFF) << 64
    value |= 0b10 << 62 | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def corpus_row(event: Record) -> Record | None:
    """The failure-corpus row pi writes for an event-log record, if any."""
    head: Record = {"ts": event["ts"]}
    for src, dst in (("provider", "provider"), ("model", "modelId")):
        if src in event:
            head[dst] = event[src]
    head["tool"] = event["tool"]
    if event["kind"] == "tool_argument_validation":
        if event["outcome"] != "bounced":
            return None
        return {
            "kind": "tool_validation",
            **head,
            "failureModes": sorted(set(event["failureModes"])),
            "shape": event.get("failureShape", []),
            "errorKeywords": sorted(set(event.get("errorKeywords", []))),
        }
    row: Record = {"kind": "tool_execution", **head}
    for key in ("state", "phase", "failureCode", "diagnostic", "nextAction"):
        if key in event:
            row[key] = event[key]
    return row


def empty_stats(session_id: str) -> Record:
    return {
        "version": 1,
        "sessionId": session_id,
        "lastRecordSequence": 0,
        "stats": {
            "clean": 0,
            "repaired": 0,
            "bounced": 0,
            "failureModes": {},
            "repairsApplied": {},
            "taught": {"none": 0, "note": 0, "rule": 0},
            "executionOutcome": {"not_run": 0, "succeeded": 0, "failed": 0},
            "teachEfficacy": {},
        },
    }


def stats_add(document: Record, event: Record) -> None:
    """Fold one validation record into a session stats document (docs/pi-host-data.md
    §4.1)."""
    stats = document["stats"]
    stats[event["outcome"]] += 1
    for field in ("failureModes", "repairsApplied"):
        for mode in event[field]:
            stats[field][mode] = stats[field].get(mode, 0) + 1
    taught = event.get("taught", "none")
    outcome = event.get("executionOutcome", "not_run")
    stats["taught"][taught] += 1
    stats["executionOutcome"][outcome] += 1
    model = f"{event.get('provider', 'unknown')}/{event.get('model', 'unknown')}"
    modes = list(dict.fromkeys([*event["failureModes"], *event["repairsApplied"]]))
    for mode in modes:
        eff = efficacy(stats, f"{model}:{mode}")
        eff["recurrenceBefore" if taught == "none" else "recurrenceAfter"] += 1
    if event["outcome"] == "repaired":
        key = {
            "succeeded": "repairedThenSucceeded",
            "failed": "repairedThenFailed",
        }.get(outcome, "repairedThenNotRun")
        for mode in event["repairsApplied"]:
            efficacy(stats, f"{model}:{mode}")[key] += 1
    sequence = int(event["recordId"].rsplit(":", 1)[1])
    document["lastRecordSequence"] = max(document["lastRecordSequence"], sequence)


def efficacy(stats: Record, key: str) -> Record:
    entry: Record = stats["teachEfficacy"].setdefault(
        key,
        {
            "recurrenceBefore": 0,
            "recurrenceAfter": 0,
            "repairedThenSucceeded": 0,
            "repairedThenFailed": 0,
            "repairedThenNotRun": 0,
        },
    )
    return entry
