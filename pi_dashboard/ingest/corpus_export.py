"""Corpus records back as pi's own `failure-corpus.jsonl` lines (issue 12 item 16).

jsonb keeps no key order, so the stored payload is re-ordered into the order pi
writes its fields (pi's `scripts/tool-repair-replay.mjs` reads the file unchanged);
keys pi may add later follow, in stored order. Optional fields stay omitted.
"""

import json
from typing import Any

from pi_dashboard.ingest.models import CorpusRecord
from pi_dashboard.lib import jsonsafe

PI_KEY_ORDER = {
    "tool_validation": (
        "kind",
        "ts",
        "provider",
        "modelId",
        "tool",
        "failureModes",
        "shape",
        "errorKeywords",
    ),
    "tool_execution": (
        "kind",
        "ts",
        "provider",
        "modelId",
        "tool",
        "state",
        "phase",
        "failureCode",
        "diagnostic",
        "nextAction",
    ),
    # Provider rows have no `kind`.
    "": ("ts", "provider", "modelId", "reason", "retryable", "message"),
}
SHAPE_KEY_ORDER = ("path", "expectedType", "receivedType", "keyword")


def in_order(value: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    known = {key: value[key] for key in order if key in value}
    return {**known, **{k: v for k, v in value.items() if k not in known}}


def pi_record(payload: dict[str, Any]) -> dict[str, Any]:
    record = in_order(payload, PI_KEY_ORDER.get(str(payload.get("kind", "")), ()))
    if isinstance(record.get("shape"), list):
        record["shape"] = [
            in_order(item, SHAPE_KEY_ORDER) if isinstance(item, dict) else item
            for item in record["shape"]
        ]
    return record


def pi_line(row: CorpusRecord) -> bytes:
    """One line as pi writes it: compact JSON, UTF-8, a newline. A lone surrogate
    (pi truncates by UTF-16 unit) has no UTF-8 form: that line is \\u-escaped,
    which a JSON reader turns back into the same string."""
    record = pi_record(jsonsafe.faithful(row.payload, row.original))
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")
