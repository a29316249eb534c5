"""Celery tasks: the evaluation cycle (beat) and deliveries, one task per channel."""

from typing import Any

from pi_dashboard.alerts import evaluation, health, notifying
from pi_dashboard.celery import app


@app.task(name="pi_dashboard.alerts.tasks.alerts_evaluate")
def alerts_evaluate() -> dict[str, Any]:
    health.beat_tick()
    result = evaluation.alerts_evaluate()
    return {
        "rules": result.rules,
        "fired": len(result.fired),
        "resolved": len(result.resolved),
        "seconds": round(result.seconds, 3),
        "skipped": result.skipped,
    }


@app.task(name=notifying.NOTIFICATION_SEND_TASK)
def notification_send(notification_id: int) -> str:
    return notifying.notification_send(notification_id=notification_id)


@app.task(name=notifying.NOTIFICATIONS_SEND_TASK)
def notifications_send(notification_ids: list[int]) -> int:
    """One channel's notifications of a cycle, in order; how many failed."""
    return sum(
        bool(notifying.notification_send(notification_id=pk)) for pk in notification_ids
    )
