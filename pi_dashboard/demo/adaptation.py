"""pi's per-model adaptation rules, applied to one store entry (docs/pi-host-data.md
§1.5).

Only what the demo's simulated sessions trigger: pruning at the start of every
mutation, teach-stat bumps and rule (re-)learning for repaired calls, the 5-rule
cap, and perf samples (which bump `at` on every completion, docs/pi-host-pitfalls.md
§13).
"""

import random
from datetime import datetime
from typing import Any

# The rule semantics (recency, 30-day retirement, efficacy, cap) are the ones the
# dashboard reads pi's store with: one copy, so the demo and the pages cannot disagree.
from pi_dashboard.fleet import adaptation as pi_rules

Entry = dict[str, Any]

EWMA_ALPHA = 0.3

# The 16 modes' standing-rule texts, exactly as pi stores them (docs/pi-host-data.md
# §5.3).
STANDING_RULES = {
    "nullOptionalDrop": "Optional field: omit, never null.",
    "nullRequiredBounce": "Required field: real value, never null.",
    "jsonStringParse": "Schema array/object: raw JSON, never quoted JSON string.",
    "jsonObjectPropertySalvage": (
        "JSON object: strict syntax, commas between properties, no extra inner text."
    ),
    "singleObjectWrap": "List schema: wrap one object in [ ].",
    "bareScalarWrap": "List schema: wrap one scalar in [ ].",
    "emptyObjectPlaceholder": "Defaulted object field: omit, never `{}` placeholder.",
    "numberFromString": "Number schema: bare number, never quoted.",
    "boolFromString": "Boolean schema: bare true/false, never quoted.",
    "enumCaseNormalize": "Enum value: exact declared case/spacing.",
    "propertyCaseNormalize": "Argument property: exact schema name/case.",
    "propertyAliasNormalize": "Argument property: exact schema property name.",
    "singleElementUnwrap": "Scalar schema: direct value, never 1-item list.",
    "stringifiedNumberInArray": "Number array: bare numbers, never quoted.",
    "bashCommandArgvJoin": "bash command: one string, never argv array.",
    "bashCommandUnwrap": "bash `command`: string, never object wrapper.",
}


def prune(entry: Entry, *, now: datetime) -> None:
    """Retire rules by age (30 days) or by efficacy, as pi does before a write."""
    profile = entry["profile"]
    stats = profile.get("teachStats", {})
    profile["rules"] = [
        rule
        for rule in profile.get("rules", [])
        if not pi_rules.rule_is_due(rule, stats, now=now)
    ]


def record_repair(entry: Entry, *, modes: list[str], now_iso: str) -> None:
    """Teach-stat bumps for one repaired call; may (re-)learn a rule."""
    profile = entry["profile"]
    stats = profile.setdefault("teachStats", {})
    for mode in dict.fromkeys(modes):
        mode_stats = stats.setdefault(
            mode, {"taught": 0, "recurrenceBefore": 0, "recurrenceAfter": 0}
        )
        rule = next((r for r in profile["rules"] if r.get("mode") == mode), None)
        if rule is not None:
            rule["lastFiredAt"] = now_iso
            mode_stats["recurrenceAfter"] += 1
            continue
        mode_stats["recurrenceBefore"] += 1
        if (
            mode_stats["recurrenceBefore"] >= pi_rules.REPAIR_THRESHOLD
            and mode in STANDING_RULES
        ):
            profile["rules"].append(
                {
                    "mode": mode,
                    "text": STANDING_RULES[mode],
                    "addedAt": now_iso,
                    "lastFiredAt": now_iso,
                }
            )
            mode_stats["taught"] += 1
            # The cap keeps the five most recently fired rules.
            newest = pi_rules.rules_capped(profile["rules"])
            profile["rules"] = [r for r in profile["rules"] if r in newest]
    entry["at"] = now_iso


def record_perf_sample(entry: Entry, *, now_iso: str, rng: random.Random) -> None:
    """One streamed completion: EWMA speeds, `samples` + 1, stall dropped."""
    profile = entry["profile"]
    old = profile.get("perf") or {}
    perf: Entry = {}
    for key, default in (
        ("prefillTokensPerSecond", 1000.0),
        ("decodeTokensPerSecond", 40.0),
    ):
        base = float(old.get(key, default))
        sample = base * rng.uniform(0.8, 1.2)
        perf[key] = (1 - EWMA_ALPHA) * base + EWMA_ALPHA * sample
    if "loadMs" in old:
        perf["loadMs"] = old["loadMs"]
    # A rate sample drops firstProgressStall (docs/pi-host-pitfalls.md §33).
    perf["samples"] = int(old.get("samples", 0)) + 1
    perf["updatedAt"] = now_iso
    profile["perf"] = perf
    entry["at"] = now_iso
