"""pi's `/toolhealth` tool-repair report, rendered from stored state
(docs/pi-host-data.md §4.3).

The store-only form: what pi prints from `model-adaptation.json` alone, without the
two in-memory logger lines. pi lists rules without pruning, so retired-but-stored
rules appear with their age, exactly as here.
"""

import math
from datetime import datetime
from typing import Any

from pi_dashboard.fleet import selectors
from pi_dashboard.fleet.models import Host
from pi_dashboard.lib.isotime import parse_iso

DAY_SECONDS = 86_400


def js_number(value: Any) -> str:
    """A number as JavaScript's String(n) writes it (3, 1.5, not 3.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
    return repr(value)


def age(value: Any, *, now: datetime) -> str:
    """`<N>d ago` in whole days, or `age unknown` for an unparseable timestamp."""
    moment = parse_iso(value)
    if moment is None:
        return "age unknown"
    days = math.floor((now - moment).total_seconds() / DAY_SECONDS)
    return f"{days}d ago"


def _probe_lines(probe: dict[str, Any] | None, now: datetime) -> list[str]:
    if not probe:
        return ["  tool probe: none"]
    text = f"  tool probe: v{js_number(probe.get('version'))} {probe.get('status')}"
    if probe.get("variant"):
        text += f" ({probe['variant']})"
    if probe.get("nativeGrade"):
        text += f" native={probe['nativeGrade']}"
    lines = [f"{text} {age(probe.get('probedAt'), now=now)}"]
    if probe.get("diagnostic"):
        lines.append(f"  probe diagnostic: {probe['diagnostic']}")
    return lines


def _protocol_lines(
    protocol: dict[str, Any] | None, model: str, now: datetime
) -> list[str]:
    if not protocol:
        return ["  protocol: none"]
    version = js_number(protocol.get("version"))
    if protocol.get("status") == "failed":
        attempted = age(protocol.get("attemptedAt"), now=now)
        return [
            f"  protocol: v{version} failed {attempted}",
            f"  variants tried: {', '.join(protocol.get('variantsTried', []))}",
            f"  reset: /toolprotocol-reset {model}",
        ]
    when = age(protocol.get("calibratedAt"), now=now)
    return [f"  protocol: v{version} {protocol.get('variant')} calibrated {when}"]


def _rule_lines(rules: list[dict[str, Any]], now: datetime) -> list[str]:
    if not rules:
        return ["  rules: none"]
    ordered = sorted(rules, key=lambda rule: rule["mode"])
    return ["  rules:"] + [
        f"    - {r['mode']} ({age(r.get('lastFiredAt'), now=now)}): {r['text']}"
        for r in ordered
    ]


def _teach_lines(stats: dict[str, Any]) -> list[str]:
    if not stats:
        return ["  teach stats: none"]
    return ["  teach stats:"] + [
        f"    - {mode}: taught={js_number(s.get('taught'))} "
        f"before={js_number(s.get('recurrenceBefore'))} "
        f"after={js_number(s.get('recurrenceAfter'))}"
        for mode, s in sorted(stats.items())
    ]


def entry_lines(entry: dict[str, Any], *, now: datetime) -> list[str]:
    """The block of one model: probe, protocol, rules, teach stats."""
    profile = entry.get("profile", {})
    model = entry.get("model", "")
    return [
        model,
        *_probe_lines(profile.get("toolProbe"), now),
        *_protocol_lines(profile.get("protocol"), model, now),
        *_rule_lines(profile.get("rules", []), now),
        *_teach_lines(profile.get("teachStats", {})),
    ]


def toolhealth_render(*, host: Host, now: datetime) -> str:
    """The store-only `/toolhealth` repair section for `host` at `now`."""
    host_models = selectors.host_models_of_host(host=host)
    entries = [selectors.host_model_entry(hm) for hm in host_models]
    if not entries:
        return "Tool repair health: no model adaptation records for this host.\n"
    lines = ["Tool repair health"]
    for entry in sorted(entries, key=lambda e: e.get("model", "")):
        lines += entry_lines(entry, now=now)
    return "\n".join(lines) + "\n"
