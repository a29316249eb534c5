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
