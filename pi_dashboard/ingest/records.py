"""What each record kind means: its schema, its table row and its rollup counts.

Pure functions over checked records (`lines.Accepted`); no database.
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pi_dashboard.ingest.lines import Accepted, Rejection, Unclassified
from pi_dashboard.ingest.models import Dimension
from pi_dashboard.ingest.store import RollupCell
from pi_dashboard.lib.isotime import hour_floor, parse_iso

EVENT_SCHEMAS = {
    "tool_argument_validation": "event-validation",
    "tool_execution_failure": "event-execution-failure",
}
CORPUS_SCHEMAS = {
    "tool_validation": "corpus-tool-validation",
    "tool_execution": "corpus-tool-execution",
}
# Column limits of fleet.Model; a longer key cannot name a model row.
MAX_KEY, MAX_PROVIDER, MAX_MODEL_ID = 600, 200, 400
# What a stored line adds one to: (rollup dimension, key) pairs. Plain strings:
# hashing a str Enum member runs Python code, and lines are counted by these.
Cells = tuple[tuple[str, str], ...]
# Rollup keys are indexed; a longer value is cut (only counted, never shown whole).
MAX_ROLLUP_KEY = 200
OUTCOME: str = Dimension.OUTCOME.value
TOOL: str = Dimension.TOOL.value
PHASE: str = Dimension.PHASE.value
FAILURE_MODE: str = Dimension.FAILURE_MODE.value
REPAIR_MODE: str = Dimension.REPAIR_MODE.value
FAILURE_CODE: str = Dimension.FAILURE_CODE.value
PROVIDER_REASON: str = Dimension.PROVIDER_REASON.value
# SessionStats.session_id is indexed; pi's session ids are UUIDs.
MAX_SESSION_ID = 256


@dataclass(slots=True)
class Prepared:
    """A row ready for the table, but for the model id (filled in from `model_key`)."""

    line: int
    digest: bytes
    model_key: str | None
    row: list[Any]
    bucket: datetime
    cells: Cells = ()

    @property
    def ts(self) -> datetime:
        """The record's `ts` (column 3 of event and corpus rows alike)."""
        moment: datetime = self.row[3]
        return moment


def rollup_counts(stored: Iterable[Prepared]) -> Counter[RollupCell]:
    """What newly stored lines add to each hourly rollup cell."""
    # Lines of the same hour, model and cells are counted together first: a thousand
    # lines of five cells each make a few hundred such groups.
    groups = Counter((p.bucket, p.row[0], p.cells) for p in stored)
    counts: Counter[RollupCell] = Counter()
    for (bucket, model_id, cells), lines in groups.items():
        for dimension, key in cells:
            counts[(bucket, model_id, dimension, key[:MAX_ROLLUP_KEY])] += lines
    return counts


def event_classify(value: dict[str, Any]) -> str:
    kind = value.get("kind")
    if isinstance(kind, str) and kind in EVENT_SCHEMAS:
        return EVENT_SCHEMAS[kind]
    raise Unclassified(
        f"Unknown event kind {kind!r}; expected tool_argument_validation "
        "or tool_execution_failure."
    )


def corpus_classify(value: dict[str, Any]) -> str:
    if "kind" not in value:
        return "corpus-provider"  # provider/API error rows have no kind (§3.1)
    kind = value["kind"]
    if isinstance(kind, str) and kind in CORPUS_SCHEMAS:
        return CORPUS_SCHEMAS[kind]
    raise Unclassified(
        f"Unknown corpus kind {kind!r}; expected tool_validation, tool_execution "
        "or no kind (provider error)."
    )


def stats_classify(value: dict[str, Any]) -> str:
    return "session-stats"


def model_key(provider: Any, model: Any) -> str | None:
    """pi's store key `<provider>/<model>`, when both are known and fit the table."""
    if not (isinstance(provider, str) and isinstance(model, str)):
        return None
    if not provider or not model:
        return None
    if len(provider) > MAX_PROVIDER or len(model) > MAX_MODEL_ID:
        return None
    key = f"{provider}/{model}"
    return key if len(key) <= MAX_KEY else None


def _ts(record: Accepted) -> datetime | Rejection:
    moment = parse_iso(record.value.get("ts"))
    if moment is None:
        return Rejection(
            record.line, "invalid_timestamp", "ts is not an ISO-8601 time."
        )
    return moment


def event_prepare(record: Accepted) -> Prepared | Rejection:
    ts = _ts(record)
    if isinstance(ts, Rejection):
        return ts
    v = record.value
    is_validation = v["kind"] == "tool_argument_validation"
    outcome = v["outcome"] if is_validation else v["state"]
    phase = "" if is_validation else v["phase"]
    code = "" if is_validation else v["failureCode"]
    text_protocol = v.get("source") == "text-protocol"
    row = [None, record.digest, v["kind"], ts, v["sessionId"], v["recordId"], v["tool"]]
    row += [outcome, phase, code, text_protocol, record.payload, record.original]
    prefix = "validation" if is_validation else "execution"
    cells: Cells = ((OUTCOME, f"{prefix}:{outcome}"), (TOOL, v["tool"]))
    if is_validation:
        cells += tuple((FAILURE_MODE, mode) for mode in v["failureModes"])
        cells += tuple((REPAIR_MODE, mode) for mode in v["repairsApplied"])
    else:
        cells += ((PHASE, phase), (FAILURE_CODE, code))
    key = model_key(v.get("provider"), v.get("model"))
    return Prepared(record.line, record.digest, key, row, hour_floor(ts), cells)


def corpus_prepare(record: Accepted) -> Prepared | Rejection:
    ts = _ts(record)
    if isinstance(ts, Rejection):
        return ts
    v = record.value
    kind = v.get("kind", "provider")
    reason = v.get("reason", "") if kind == "provider" else ""
    row = [None, record.digest, kind, ts, v.get("tool", ""), v.get("state", "")]
    row += [v.get("phase", ""), v.get("failureCode", ""), reason]
    row += [record.payload, record.original]
    # Tool rows repeat what the event log already counts (one bounced call writes a
    # row to each file, docs/pi-host-pitfalls.md §22); only provider errors are counted
    # from here.
    cells: Cells = ()
    if kind == "provider":
        cells = ((OUTCOME, f"provider:{reason}"), (PROVIDER_REASON, reason))
    key = model_key(v.get("provider"), v.get("modelId"))
    return Prepared(record.line, record.digest, key, row, hour_floor(ts), cells)


def stats_row(record: Accepted) -> tuple[str, int, str, str] | Rejection:
    """(session id, lastRecordSequence, document JSON, original) of a stats file."""
    v = record.value
    session_id = v["sessionId"]
    if not session_id or len(session_id) > MAX_SESSION_ID:
        reason = f"sessionId must be 1 to {MAX_SESSION_ID} characters."
        return Rejection(record.line, "schema_violation", reason)
    sequence = v["lastRecordSequence"]
    if not float(sequence).is_integer() or sequence >= 2**63:
        reason = "lastRecordSequence must be a whole number below 2**63."
        return Rejection(record.line, "schema_violation", reason)
    return (session_id, int(sequence), record.payload, record.original)
