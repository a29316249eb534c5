"""pi's entry, typed: one `hosts[<host>][<model>]` of `model-adaptation.json`.

The one reader of pi's fixed format (docs/pi-host-data.md §1.4, §1.5): TypedDicts
spelling pi's camelCase keys, and accessors that return a well-formed value whatever
the stored JSON holds (a key missing or of the wrong type reads as absent, as pi reads
it). Everything else (commands' effects, the pages, the API) reads the entry through
here.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, cast

from django.utils.dateparse import parse_datetime


class Rule(TypedDict, total=False):
    mode: str
    text: str
    addedAt: str
    lastFiredAt: str


class Protocol(TypedDict, total=False):
    version: int
    status: str  # calibrated | failed (legacy)
    variant: str
    calibratedAt: str
    attemptedAt: str
    variantsTried: list[str]


class ToolProbe(TypedDict, total=False):
    version: int
    status: str  # native | text-protocol | none
    probedAt: str
    variant: str
    nativeGrade: str
    diagnostic: str


class TeachStats(TypedDict, total=False):
    taught: int
    recurrenceBefore: int
    recurrenceAfter: int


class Stall(TypedDict, total=False):
    elapsedMs: float
    promptTokens: float
    consecutive: int
    observedAt: str


class Perf(TypedDict, total=False):
    prefillTokensPerSecond: float
    decodeTokensPerSecond: float
    loadMs: float
    firstProgressStall: Stall
    samples: int
    updatedAt: str


class Profile(TypedDict, total=False):
    rules: list[Rule]
    protocol: Protocol
    toolProbe: ToolProbe
    perf: Perf
    teachStats: dict[str, TeachStats]


class Entry(TypedDict, total=False):
    model: str
    profile: Profile
    at: str


def profile(entry: dict[str, Any]) -> dict[str, Any]:
    value = entry.get("profile")
    return value if isinstance(value, dict) else {}


def rules(entry: dict[str, Any]) -> list[Rule]:
    """The standing rules that have a mode, in stored order."""
    value = profile(entry).get("rules")
    if not isinstance(value, list):
        return []
    return [cast(Rule, r) for r in value if isinstance(r, dict) and "mode" in r]


def rule_modes(entry: dict[str, Any]) -> list[str]:
    """Modes of the standing rules, in stored order."""
    return [str(r["mode"]) for r in rules(entry)]


def protocol(entry: dict[str, Any]) -> Protocol | None:
    """The calibrated or (legacy) failed text-protocol record, if any."""
    value = profile(entry).get("protocol")
    return cast(Protocol, value) if isinstance(value, dict) else None


def protocol_at(entry: dict[str, Any]) -> str | None:
    """When the calibration was made (or, for a failed one, attempted)."""
    p = protocol(entry) or {}
    return p.get("calibratedAt") or p.get("attemptedAt")


def tool_probe(entry: dict[str, Any]) -> ToolProbe | None:
    value = profile(entry).get("toolProbe")
    return cast(ToolProbe, value) if isinstance(value, dict) else None


def probed_at(entry: dict[str, Any]) -> datetime | None:
    text = (tool_probe(entry) or {}).get("probedAt")
    if not isinstance(text, str):
        return None
    try:
        return parse_datetime(text)
    except ValueError:
        return None


def teach_stats(entry: dict[str, Any]) -> dict[str, TeachStats]:
    """teachStats by mode (modes whose stats are not an object are left out)."""
    value = profile(entry).get("teachStats")
    if not isinstance(value, dict):
        return {}
    return {m: cast(TeachStats, s) for m, s in value.items() if isinstance(s, dict)}


def teach_modes(entry: dict[str, Any]) -> list[str]:
    """Every mode with teach statistics, sorted (any value counts: the key is pi's)."""
    value = profile(entry).get("teachStats")
    return sorted(value) if isinstance(value, dict) else []


def perf(entry: dict[str, Any]) -> Perf | None:
    value = profile(entry).get("perf")
    return cast(Perf, value) if isinstance(value, dict) else None


@dataclass(frozen=True)
class Calibration:
    """The probe, protocol and perf records as the pages show them, in our spelling
    (templates read these, never pi's camelCase keys)."""

    probe_variant: str = ""
    probed_at: str = ""
    diagnostic: str = ""
    protocol_variant: str = ""
    protocol_version: int | None = None
    calibrated_at: str = ""
    attempted_at: str = ""
    variants_tried: tuple[str, ...] = ()
    has_perf: bool = False
    prefill_tokens_per_second: float | None = None
    decode_tokens_per_second: float | None = None
    perf_samples: int = 0
    perf_updated_at: str = ""
    stall_ms: float | None = None
    stall_consecutive: int = 0


def calibration(entry: dict[str, Any]) -> Calibration:
    probe = dict(tool_probe(entry) or {})
    proto = dict(protocol(entry) or {})
    rates = dict(perf(entry) or {})
    stall = rates.get("firstProgressStall")
    stall = stall if isinstance(stall, dict) else {}
    tried = proto.get("variantsTried")
    return Calibration(
        probe_variant=_text(probe, "variant"),
        probed_at=_text(probe, "probedAt"),
        diagnostic=_text(probe, "diagnostic"),
        protocol_variant=_text(proto, "variant"),
        protocol_version=_number(proto, "version"),
        calibrated_at=_text(proto, "calibratedAt"),
        attempted_at=_text(proto, "attemptedAt"),
        variants_tried=tuple(
            str(v) for v in (tried if isinstance(tried, list) else [])
        ),
        has_perf=bool(rates),
        prefill_tokens_per_second=_number(rates, "prefillTokensPerSecond"),
        decode_tokens_per_second=_number(rates, "decodeTokensPerSecond"),
        perf_samples=int(_number(rates, "samples") or 0),
        perf_updated_at=_text(rates, "updatedAt"),
        stall_ms=_number(stall, "elapsedMs"),
        stall_consecutive=int(_number(stall, "consecutive") or 0),
    )


def _text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    return value if isinstance(value, str) else ""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(record: dict[str, Any], key: str) -> Any:
    value = record.get(key)
    return value if _is_number(value) else None
