"""Celery tasks of the control app: thin wrappers around one service each."""

from celery import shared_task

from pi_dashboard.control import services


@shared_task(name="control.commands_expire")
def commands_expire() -> int:
    """Expire commands past their deadline; beat runs it every minute."""
    return services.commands_expire()
