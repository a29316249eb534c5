"""Rule efficacy as pi judges it (reference §1.5.1), for the host × model page.

pi retires a rule 30 days after its recency (lastFiredAt, else addedAt), and early
when its teach stats show it stopped helping: recurrenceAfter >= 2 and
recurrenceAfter >= recurrenceBefore. Retirement happens lazily, at the next read of
the model's entry, so a stored rule may already be due.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pi_dashboard.fleet import adaptation


@dataclass(frozen=True)
class RuleView:
    mode: str
    text: str
    added_at: str | None
    last_fired_at: str | None
    recency: datetime
    retires_at: datetime
    taught: int | None
    before: int | None
    after: int | None
    verdict: str  # helping | no-evidence | retire-early | expired
    explanation: str

    @property
    def will_retire(self) -> bool:
        return self.verdict in {"retire-early", "expired"}


def efficacy(stats: dict[str, Any] | None) -> tuple[str, str]:
    """pi's verdict on a rule's mode (fleet.adaptation), with the page's wording."""
    judged = adaptation.rule_efficacy(stats)
    before, after = int(judged.before), int(judged.after)
    if not stats:
        return "no-evidence", "No teach statistics for this mode: pi keeps the rule."
    if judged.verdict == "no_evidence":
        need = adaptation.MIN_RECURRENCE_AFTER_FOR_EFFICACY
        return (
            "no-evidence",
            f"Recurred {after}× with the rule standing (pi needs at least "
            f"{need} to judge): kept.",
        )
    if judged.verdict == "retire_early":
        return (
            "retire-early",
            f"Recurred {after}× with the rule vs {before}× without: not helping. "
            "pi retires it early at the next read of this model.",
        )
    return (
        "helping",
        f"Recurred {after}× with the rule vs {before}× without: helping, kept.",
    )


def rules_view(entry: dict[str, Any], *, now: datetime) -> list[RuleView]:
    """Every stored rule with its age, teach statistics and pi's retirement verdict."""
    profile = entry.get("profile") or {}
    stats_by_mode = profile.get("teachStats") or {}
    views = []
    for rule in profile.get("rules") or []:
        if not isinstance(rule, dict):
            continue
        mode = str(rule.get("mode", ""))
        stats = stats_by_mode.get(mode) if isinstance(stats_by_mode, dict) else None
        recency = adaptation.rule_recency(rule)
        retires_at = adaptation.rule_retires_at(rule)
        verdict, text = efficacy(stats if isinstance(stats, dict) else None)
        if adaptation.rule_is_expired(rule, now=now):
            verdict = "expired"
            text = (
                "Has not fired for 30 days: pi drops it at the next read of this "
                "model. " + text
            )
        views.append(
            RuleView(
                mode=mode,
                text=str(rule.get("text", "")),
                added_at=rule.get("addedAt"),
                last_fired_at=rule.get("lastFiredAt"),
                recency=recency,
                retires_at=retires_at,
                taught=stats.get("taught") if isinstance(stats, dict) else None,
                before=stats.get("recurrenceBefore")
                if isinstance(stats, dict)
                else None,
                after=stats.get("recurrenceAfter") if isinstance(stats, dict) else None,
                verdict=verdict,
                explanation=text,
            )
        )
    return sorted(views, key=lambda v: v.mode)


def teach_stats_rows(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """teachStats as rows (sorted by mode), marking modes without a standing rule."""
    profile = entry.get("profile") or {}
    stats = profile.get("teachStats") or {}
    ruled = {r.get("mode") for r in profile.get("rules") or [] if isinstance(r, dict)}
    rows = []
    for mode in sorted(stats) if isinstance(stats, dict) else []:
        s = stats[mode] if isinstance(stats[mode], dict) else {}
        rows.append(
            {
                "mode": mode,
                "taught": s.get("taught", 0),
                "before": s.get("recurrenceBefore", 0),
                "after": s.get("recurrenceAfter", 0),
                "has_rule": mode in ruled,
                "churn": int(s.get("taught") or 0) > 1,
            }
        )
    return rows
