"""pi's rule semantics as pure functions (docs/pi-host-data.md §1.5.1)."""

from datetime import UTC, datetime

from pi_dashboard.fleet import adaptation

NOW = datetime(2026, 8, 18, 17, 30, tzinfo=UTC)


def rule(
    mode: str, fired: str, added: str = "2026-01-01T00:00:00.000Z"
) -> dict[str, str]:
    return {"mode": mode, "text": "t", "addedAt": added, "lastFiredAt": fired}


def test_recency_falls_back_to_added_then_epoch() -> None:
    assert adaptation.rule_recency(rule("a", "2026-08-01T00:00:00Z")) == datetime(
        2026, 8, 1, tzinfo=UTC
    )
    assert adaptation.rule_recency(
        rule("a", "garbage", "2026-07-01T00:00:00Z")
    ) == datetime(2026, 7, 1, tzinfo=UTC)
    assert adaptation.rule_recency(rule("a", "garbage", "junk")) == adaptation.EPOCH


def test_thirty_day_retirement() -> None:
    assert adaptation.rule_is_expired(rule("a", "2026-07-18T17:29:59Z"), now=NOW)
    assert not adaptation.rule_is_expired(rule("a", "2026-07-20T00:00:00Z"), now=NOW)
    assert adaptation.rule_retires_at(rule("a", "2026-08-01T00:00:00Z")) == datetime(
        2026, 8, 31, tzinfo=UTC
    )


def test_efficacy_retirement() -> None:
    stats = {"taught": 1, "recurrenceBefore": 3, "recurrenceAfter": 1}
    assert adaptation.rule_efficacy(stats).verdict == "no_evidence"
    assert (
        adaptation.rule_efficacy({**stats, "recurrenceAfter": 2}).verdict == "helping"
    )
    assert (
        adaptation.rule_efficacy({**stats, "recurrenceAfter": 3}).verdict
        == "retire_early"
    )
    assert not adaptation.efficacy_retires(None)
    fresh = rule("a", "2026-08-18T00:00:00Z")
    assert adaptation.rule_is_due(
        fresh, {"a": {**stats, "recurrenceAfter": 4}}, now=NOW
    )
    assert not adaptation.rule_is_due(fresh, {"a": stats}, now=NOW)


def test_cap_keeps_the_five_most_recent() -> None:
    rules = [rule(str(n), f"2026-08-0{n}T00:00:00Z") for n in range(1, 7)]
    assert [r["mode"] for r in adaptation.rules_capped(rules)] == [
        "6",
        "5",
        "4",
        "3",
        "2",
    ]


def test_profile_normalise_like_pi() -> None:
    profile = {
        "rules": [rule("a", "2026-08-01T00:00:00Z"), {"mode": "b", "text": 1}],
        "protocol": {
            "version": 1,
            "status": "failed",
            "attemptedAt": "x",
            "variantsTried": ["tool-tag"],
        },
        "toolProbe": {
            "version": 1,
            "status": "none",
            "probedAt": "x",
            "nativeGrade": None,
        },
        "perf": {
            "samples": 0,
            "updatedAt": "x",
            "firstProgressStall": {
                "elapsedMs": 1,
                "promptTokens": 1,
                "consecutive": 1,
                "observedAt": "x",
            },
        },
        "teachStats": {
            "a": {"taught": 1, "recurrenceBefore": 1, "recurrenceAfter": 0},
            "b": {"taught": "1"},
        },
    }
    result, notes = adaptation.profile_normalise(profile)
    assert [r["mode"] for r in result["rules"]] == ["a"]
    assert "protocol" in result
    assert "perf" in result
    assert "toolProbe" not in result
    assert list(result["teachStats"]) == ["a"]
    assert sorted(notes) == [
        "profile.toolProbe is not valid",
        "rules[1] is not a valid rule",
        "teachStats.b is not valid",
    ]
