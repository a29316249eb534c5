"""pi's adaptation-store semantics as pure functions (docs/pi-host-data.md §1,
docs/pi-host-pitfalls.md §2, §5).

How pi reads `model-adaptation.json` (which entries and parts it silently drops), how
its standing rules live and retire (recency, 30 days, efficacy, cap 5), and what
changed between two versions of one entry. No database here: the snapshot service,
the history and the pages ("will pi retire this rule early?") all call these.
"""

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pi_dashboard.lib.isotime import parse_iso

STORE_VERSION = 1
MAX_RULES_PER_MODEL = 5
RETIRE_AFTER = timedelta(days=30)
MIN_RECURRENCE_AFTER_FOR_EFFICACY = 2
REPAIR_THRESHOLD = 3  # repaired recurrences before pi teaches a standing rule
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PROTOCOL_VARIANTS = ("tool-tag", "tool-call", "fenced-json", "function-xml")


# --- rules --------------------------------------------------------------------------


def rule_recency(rule: dict[str, Any]) -> datetime:
    """`lastFiredAt`, else `addedAt`, else the epoch when neither parses (§1.5.1)."""
    return parse_iso(rule.get("lastFiredAt")) or parse_iso(rule.get("addedAt")) or EPOCH


def rule_is_expired(rule: dict[str, Any], *, now: datetime) -> bool:
    """Not fired for 30 days: pi removes it at the next read of the model."""
    return rule_recency(rule) < now - RETIRE_AFTER


def efficacy_retires(stats: dict[str, Any] | None) -> bool:
    """Teach stats say the rule stopped helping: after >= 2 and after >= before."""
    if not stats:
        return False
    after = stats.get("recurrenceAfter", 0)
    before = stats.get("recurrenceBefore", 0)
    return bool(after >= MIN_RECURRENCE_AFTER_FOR_EFFICACY and after >= before)


def rule_is_due(
    rule: dict[str, Any], teach_stats: dict[str, Any], *, now: datetime
) -> bool:
    """pi would retire this rule at its next read or write of the model."""
    stats = teach_stats.get(rule.get("mode", ""))
    return rule_is_expired(rule, now=now) or efficacy_retires(stats)


def rules_capped(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rules pi keeps when over the cap: the 5 most recent."""
    ranked = sorted(rules, key=rule_recency, reverse=True)
    return ranked[:MAX_RULES_PER_MODEL]


@dataclass(frozen=True)
class RuleEfficacy:
    """What the teach statistics of a rule's mode say, in pi's terms."""

    taught: float
    before: float
    after: float
    verdict: str  # "no_evidence" | "helping" | "retire_early"


def rule_efficacy(stats: dict[str, Any] | None) -> RuleEfficacy:
    stats = stats or {}
    taught = stats.get("taught", 0)
    before = stats.get("recurrenceBefore", 0)
    after = stats.get("recurrenceAfter", 0)
    if efficacy_retires(stats):
        verdict = "retire_early"
    elif after < MIN_RECURRENCE_AFTER_FOR_EFFICACY:
        verdict = "no_evidence"
    else:
        verdict = "helping"
    return RuleEfficacy(taught, before, after, verdict)


def rule_retires_at(rule: dict[str, Any]) -> datetime:
    """When the 30-day retirement falls due, unless the rule fires again first."""
    return rule_recency(rule) + RETIRE_AFTER


# --- loading the store the way pi does (§1.6) ---------------------------------------


class InvalidStore(ValueError):
    """The document is not a store pi can read; pi would treat it as empty."""


@dataclass
class StoreEntry:
    host_id: str
    key: str
    entry: dict[str, Any]  # pi's normalised view: what pi itself would read
    at: datetime | None


@dataclass
class Dropped:
    host: str
    model: str | None
    reason: str


@dataclass
class ParsedStore:
    entries: list[StoreEntry] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_obj(value: Any) -> bool:
    return isinstance(value, dict)


def _is_positive_int(value: Any) -> bool:
    if not _is_number(value) or not math.isfinite(value):
        return False
    return float(value).is_integer() and 0 < value <= 2**53 - 1


def fingerprint_problem(host: Any, bucket_id: str) -> str | None:
    if not _is_obj(host):
        return "host fingerprint is not an object"
    if not isinstance(host.get("id"), str) or not host["id"]:
        return "host.id is not a non-empty string"
    if not isinstance(host.get("cpu"), str):
        return "host.cpu is not a string"
    if not _is_positive_int(host.get("cores")):
        return "host.cores is not a positive integer"
    mem = host.get("totalMemGb")
    if not (_is_number(mem) and math.isfinite(mem) and mem >= 0):
        return "host.totalMemGb is not a finite number >= 0"
    if host["id"] != bucket_id:
        return f"host.id {host['id']!r} differs from the bucket key"
    return None


def entry_problem(bucket_id: str, key: str, entry: Any) -> str | None:
    """Why pi would drop this entry on load, or None."""
    if not _is_obj(entry):
        return "entry is not an object"
    if entry.get("model") != key:
        return "entry.model differs from its key"
    if not isinstance(entry.get("at"), str):
        return "entry.at is not a string"
    problem = fingerprint_problem(entry.get("host"), bucket_id)
    if problem is not None:
        return problem
    if not _is_obj(entry.get("profile")):
        return "entry.profile is not an object"
    return None


def store_parse(document: Any) -> ParsedStore:
    """Every entry pi would read from this store, and what it would drop (and why)."""
    if not _is_obj(document):
        raise InvalidStore("The store must be a JSON object.")
    version = document.get("version")
    if not _is_number(version) or version != STORE_VERSION:
        raise InvalidStore(f"The store version must be 1, got {version!r}.")
    if not _is_obj(document.get("hosts")):
        raise InvalidStore("The store's `hosts` must be an object.")
    parsed = ParsedStore()
    for host_id, bucket in document["hosts"].items():
        if not _is_obj(bucket):
            parsed.dropped.append(
                Dropped(host_id, None, "host bucket is not an object")
            )
            continue
        for key, entry in bucket.items():
            problem = entry_problem(host_id, key, entry)
            if problem is not None:
                parsed.dropped.append(Dropped(host_id, key, problem))
                continue
            profile, notes = profile_normalise(entry["profile"])
            parsed.dropped += [Dropped(host_id, key, note) for note in notes]
            normalised = {
                "model": key,
                "at": entry["at"],
                "host": entry["host"],
                "profile": profile,
            }
            parsed.entries.append(
                StoreEntry(host_id, key, normalised, parse_iso(entry["at"]))
            )
    return parsed


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _optional(obj: dict[str, Any], key: str, check: Any) -> bool:
    # Absent is fine; an explicit null is not (docs/pi-host-pitfalls.md §8).
    return key not in obj or bool(check(obj[key]))


def _is_positive(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and value > 0


def is_rule(rule: Any) -> bool:
    fields = ("mode", "text", "addedAt", "lastFiredAt")
    return _is_obj(rule) and all(_is_str(rule.get(name)) for name in fields)


def is_protocol(protocol: Any) -> bool:
    if not _is_obj(protocol) or not _is_number(protocol.get("version")):
        return False
    if protocol.get("status") == "failed":
        tried = protocol.get("variantsTried")
        return (
            _is_str(protocol.get("attemptedAt"))
            and isinstance(tried, list)
            and all(_is_str(v) for v in tried)
        )
    # Legacy calibrated records have no status at all (§1.5.2).
    if "status" in protocol and protocol["status"] != "calibrated":
        return False
    return _is_str(protocol.get("variant")) and _is_str(protocol.get("calibratedAt"))


def is_tool_probe(probe: Any) -> bool:
    if not _is_obj(probe) or not _is_number(probe.get("version")):
        return False
    if not (_is_str(probe.get("status")) and _is_str(probe.get("probedAt"))):
        return False
    return all(
        _optional(probe, k, _is_str) for k in ("variant", "nativeGrade", "diagnostic")
    )


def _is_stall(stall: Any) -> bool:
    if not _is_obj(stall) or not _is_str(stall.get("observedAt")):
        return False
    return (
        _is_positive(stall.get("elapsedMs"))
        and _is_positive(stall.get("promptTokens"))
        and _is_positive_int(stall.get("consecutive"))
    )


def is_perf(perf: Any) -> bool:
    if not _is_obj(perf) or not _is_str(perf.get("updatedAt")):
        return False
    samples = perf.get("samples")
    if not (_is_positive_int(samples) or (_is_number(samples) and samples == 0)):
        return False
    rates = ("prefillTokensPerSecond", "decodeTokensPerSecond", "loadMs")
    if not all(_optional(perf, k, _is_positive) for k in rates):
        return False
    return _optional(perf, "firstProgressStall", _is_stall)


def is_teach_stats(stats: Any) -> bool:
    fields = ("taught", "recurrenceBefore", "recurrenceAfter")
    return _is_obj(stats) and all(_is_number(stats.get(name)) for name in fields)


def profile_normalise(profile: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The profile as pi reads it, and a note for every part pi would drop."""
    notes: list[str] = []
    raw_rules = profile.get("rules")
    rules = raw_rules if isinstance(raw_rules, list) else []
    if "rules" in profile and not isinstance(raw_rules, list):
        notes.append("profile.rules is not an array")
    kept = [rule for rule in rules if is_rule(rule)]
    notes += [
        f"rules[{i}] is not a valid rule" for i, r in enumerate(rules) if not is_rule(r)
    ]
    result: dict[str, Any] = {"rules": kept}
    checks = (
        ("protocol", is_protocol),
        ("toolProbe", is_tool_probe),
        ("perf", is_perf),
    )
    for name, check in checks:
        if name in profile:
            if check(profile[name]):
                result[name] = profile[name]
            else:
                notes.append(f"profile.{name} is not valid")
    raw_stats = profile.get("teachStats")
    stats: dict[str, Any] = raw_stats if isinstance(raw_stats, dict) else {}
    result["teachStats"] = {m: s for m, s in stats.items() if is_teach_stats(s)}
    notes += [
        f"teachStats.{m} is not valid"
        for m, s in stats.items()
        if not is_teach_stats(s)
    ]
    return result, notes


# --- what changed between two versions of an entry ----------------------------------


@dataclass(frozen=True)
class ChangeSpec:
    kind: str  # a fleet.models.ChangeKind value
    at: datetime
    mode: str = ""
    before: Any = None
    after: Any = None
    command_id: uuid.UUID | None = None  # the operator's command that made it


def entry_changes(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    removed_by: Mapping[str, uuid.UUID] | None = None,
) -> list[ChangeSpec]:
    """History rows for going from `old` (None: never seen) to `new`.

    `removed_by` maps a mode to the operator's remove-rule command in flight: a rule
    of that mode gone from `new` is that removal, not pi's own retirement.
    """
    at = parse_iso(new.get("at")) or EPOCH
    old_profile = old["profile"] if old else {}
    new_profile = new["profile"]
    changes = [ChangeSpec("model_seen", at)] if old is None else []
    changes += _rule_changes(old_profile, new_profile, at, removed_by or {})
    changes += _probe_changes(
        old_profile.get("toolProbe"), new_profile.get("toolProbe"), at
    )
    changes += _protocol_changes(
        old_profile.get("protocol"), new_profile.get("protocol"), at
    )
    old_stats = old_profile.get("teachStats", {})
    new_stats = new_profile.get("teachStats", {})
    for mode in sorted(set(old_stats) - set(new_stats)):
        changes.append(
            ChangeSpec("teach_stats_cleared", at, mode, old_stats[mode], None)
        )
    return changes


def _rule_changes(
    old: dict[str, Any],
    new: dict[str, Any],
    at: datetime,
    removed_by: Mapping[str, uuid.UUID],
) -> list[ChangeSpec]:
    old_rules = {rule["mode"]: rule for rule in old.get("rules", [])}
    new_rules = {rule["mode"]: rule for rule in new.get("rules", [])}
    changes: list[ChangeSpec] = []
    for mode, rule in new_rules.items():
        prev = old_rules.get(mode)
        if prev is None or prev.get("addedAt") != rule.get("addedAt"):
            when = parse_iso(rule.get("addedAt")) or at
            changes.append(ChangeSpec("rule_added", when, mode, prev, rule))
        elif prev.get("lastFiredAt") != rule.get("lastFiredAt"):
            when = parse_iso(rule.get("lastFiredAt")) or at
            changes.append(ChangeSpec("rule_refired", when, mode, prev, rule))
    added = any(change.kind == "rule_added" for change in changes)
    at_cap = len(new_rules) >= MAX_RULES_PER_MODEL
    for mode, rule in old_rules.items():
        if mode in new_rules:
            continue
        if mode in removed_by:
            spec = ChangeSpec("rule_removed", at, mode, rule, None, removed_by[mode])
        else:
            kind = _gone_kind(rule, old, new, at, added and at_cap)
            spec = ChangeSpec(kind, at, mode, rule, None)
        changes.append(spec)
    return changes


def _gone_kind(
    rule: dict[str, Any],
    old: dict[str, Any],
    new: dict[str, Any],
    at: datetime,
    capped: bool,
) -> str:
    """Retired by pi (expired, or ineffective), evicted by the cap, or removed."""
    mode = rule["mode"]
    stats = (old.get("teachStats", {}).get(mode), new.get("teachStats", {}).get(mode))
    if rule_is_expired(rule, now=at):
        return "rule_retired"
    if any(efficacy_retires(s) for s in stats):
        return "rule_ineffective"
    return "rule_evicted" if capped else "rule_removed"


def _probe_changes(old: Any, new: Any, at: datetime) -> list[ChangeSpec]:
    def verdict(probe: Any) -> Any:
        return (probe.get("status"), probe.get("variant")) if probe else None

    when = (parse_iso(new.get("probedAt")) if new else None) or at
    changes: list[ChangeSpec] = []
    if verdict(old) != verdict(new):
        changes.append(ChangeSpec("verdict_changed", when, "", old, new))
    old_grade = old.get("nativeGrade") if old else None
    if new and old_grade != new.get("nativeGrade"):
        changes.append(ChangeSpec("grade_changed", when, "", old, new))
    return changes


def _protocol_changes(old: Any, new: Any, at: datetime) -> list[ChangeSpec]:
    if old == new:
        return []
    if new is None:
        return [ChangeSpec("calibration_reset", at, "", old, None)]
    stamp = (
        new.get("calibratedAt")
        if new.get("status") != "failed"
        else new.get("attemptedAt")
    )
    when = parse_iso(stamp) or at
    kind = "calibration_set" if old is None else "calibration_replaced"
    return [ChangeSpec(kind, when, "", old, new)]
