"""pi's entry read in one place: one verdict spelling, malformed JSON read as absent."""

from datetime import UTC, datetime

from pi_dashboard.fleet import entry, selectors
from pi_dashboard.front.pages import efficacy

NOW = datetime(2026, 8, 20, tzinfo=UTC)
# recurrenceAfter >= 2 and >= recurrenceBefore: pi retires the rule early.
ENTRY = {
    "model": "ollama/qwen3-coder:30b",
    "profile": {
        "rules": [
            {
                "mode": "jsonStringParse",
                "text": "Schema array/object: raw JSON, never quoted JSON string.",
                "addedAt": "2026-08-18T16:26:39.360Z",
                "lastFiredAt": "2026-08-18T16:26:39.360Z",
            }
        ],
        "teachStats": {
            "jsonStringParse": {
                "taught": 3,
                "recurrenceBefore": 5,
                "recurrenceAfter": 5,
            }
        },
    },
}


def test_page_and_api_spell_the_verdict_as_pi_does() -> None:
    page = efficacy.rules_view(ENTRY, now=NOW)
    api = selectors.rules_described(ENTRY, now=NOW)
    assert [r.verdict for r in page] == ["retire_early"]
    assert [r["efficacy"] for r in api] == ["retire_early"]


def test_malformed_profile_parts_read_as_absent() -> None:
    broken = {"profile": {"rules": {"mode": "x"}, "protocol": [], "toolProbe": "no"}}
    assert entry.rules(broken) == []
    assert entry.protocol(broken) is None
    assert entry.tool_probe(broken) is None
    assert (
        entry.probed_at({"profile": {"toolProbe": {"probedAt": "yesterday"}}}) is None
    )
    assert entry.teach_stats({"profile": {"teachStats": {"m": 3}}}) == {}
    assert entry.teach_modes({"profile": {"teachStats": {"m": 3}}}) == ["m"]


def test_calibration_reads_pi_records_into_our_spelling() -> None:
    stored = {
        "profile": {
            "toolProbe": {"status": "native", "probedAt": "2026-08-18T10:00:00Z"},
            "protocol": {
                "version": 1,
                "variant": "tool-tag",
                "calibratedAt": "2026-08-18T11:00:00Z",
                "variantsTried": ["tool-tag"],
            },
            "perf": {
                "decodeTokensPerSecond": 42.5,
                "samples": 3,
                "updatedAt": "2026-08-18T12:00:00Z",
                "firstProgressStall": {"elapsedMs": 9000, "consecutive": 2},
            },
        }
    }
    c = entry.calibration(stored)
    assert (c.probed_at, c.protocol_variant, c.protocol_version) == (
        "2026-08-18T10:00:00Z",
        "tool-tag",
        1,
    )
    assert (c.calibrated_at, c.variants_tried) == (
        "2026-08-18T11:00:00Z",
        ("tool-tag",),
    )
    assert c.has_perf
    assert c.decode_tokens_per_second == 42.5
    assert c.prefill_tokens_per_second is None
    assert (c.perf_samples, c.stall_ms, c.stall_consecutive) == (3, 9000, 2)


def test_calibration_of_malformed_records_reads_as_absent() -> None:
    bad = {"profile": {"toolProbe": [], "protocol": {"version": "1", "variant": 7}}}
    c = entry.calibration(bad)
    assert c == entry.Calibration()
    assert entry.calibration({"profile": {"perf": {"samples": True}}}).perf_samples == 0


def test_templates_read_no_camel_case_of_pi() -> None:
    """Pages read our snake_case readers (fleet/entry.py, the page rows)."""
    import re
    from pathlib import Path

    found = []
    for path in Path("templates").rglob("*.html"):
        # Template variables and tags only: {{ a.bCd }} / {% if a.bCd %}; JS is not.
        for tag in re.findall(r"\{[{%].*?[}%]\}", path.read_text()):
            found += [f"{path}: {m}" for m in re.findall(r"\.[a-z]+[A-Z]\w*", tag)]
    assert found == []
