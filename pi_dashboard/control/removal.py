"""Why a removal found nothing to remove, from the entry as the command saw it.

Apart from `effects.py`, which reads commands: the Command model asks this, and
nothing here imports the model.
"""

from typing import Any

from pi_dashboard.fleet import adaptation


def nothing_removed_reason(command: Any) -> str:
    """Why pi answered `removed: false`, from the entry as it was at creation.

    pi's mutation first prunes every expired or ineffective rule of the model, so
    a rule due for retirement is gone before the removal looks for it.
    """
    base = command.baseline if isinstance(command.baseline, dict) else {}
    rule = base.get("rule")
    if not isinstance(rule, dict):
        return "the rule was not there when the agent applied the command."
    when = command.finished_at or command.created_at
    if adaptation.rule_is_expired(rule, now=when):
        return (
            "pi had already pruned it as expired (not fired for "
            f"{adaptation.RETIRE_AFTER.days} days)."
        )
    stats = base.get("stats")
    if adaptation.efficacy_retires(stats if isinstance(stats, dict) else None):
        return (
            "pi had already pruned it as ineffective (its teach statistics show it "
            "stopped helping)."
        )
    return "it was gone by the time the agent applied the command."
