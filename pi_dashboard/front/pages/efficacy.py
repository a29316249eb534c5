"""Rule efficacy as pi judges it (docs/pi-host-data.md §1.5.1), for the host × model
page.

pi retires a rule 30 days after its recency (lastFiredAt, else addedAt), and early
when its teach stats show it stopped helping: recurrenceAfter >= 2 and
recurrenceAfter >= recurrenceBefore. Retirement happens lazily, at the next read of
the model's entry, so a stored rule may already be due.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pi_dashboard.fleet import adaptation
from pi_dashboard.fleet import entry as entry_format


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
    # pi's spelling (fleet.adaptation): helping | no_evidence | retire_early; or expired
    verdict: str
    explanation: str

    @property
    def will_retire(self) -> bool:
        return self.verdict in {"retire_early", "expired"}


def efficacy(stats: dict[str, Any] | None) -> tuple[str, str]:
    """pi's verdict on a rule's mode (fleet.adaptation), with the page's wording."""
    judged = adaptation.rule_efficacy(stats)
    before, after = int(judged.before), int(judged.after)
    if not stats:
        return "no_evidence", "No teach statistics for this mode: pi keeps the rule."
    if judged.verdict == "no_evidence":
        need = adaptation.MIN_RECURRENCE_AFTER_FOR_EFFICACY
        return (
            "no_evidence",
            f"Recurred {after}× with the rule standing (pi needs at least "
            f"{need} to judge): kept.",
        )
    if judged.verdict == "retire_early":
        return (
            "retire_early",
            f"Recurred {after}× with the rule vs {before}× without: not helping. "
            "pi retires it early at the next read of this model.",
        )
    return (
        "helping",
        f"Recurred {after}× with the rule vs {before}× without: helping, kept.",
    )


def rules_view(entry: dict[str, Any], *, now: datetime) -> list[RuleView]:
    """Every stored rule with its age, teach statistics and pi's retirement verdict."""
    stats_by_mode = entry_format.teach_stats(entry)
    views = []
    for rule in entry_format.rules(entry):
        mode = str(rule["mode"])
        stats = stats_by_mode.get(mode)
        pi_rule = dict(rule)
        recency = adaptation.rule_recency(pi_rule)
        retires_at = adaptation.rule_retires_at(pi_rule)
        verdict, text = efficacy(dict(stats) if stats is not None else None)
        if adaptation.rule_is_expired(pi_rule, now=now):
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
                taught=stats.get("taught") if stats is not None else None,
                before=stats.get("recurrenceBefore") if stats is not None else None,
                after=stats.get("recurrenceAfter") if stats is not None else None,
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
