"""Celery tasks of the control app: thin wrappers around one service each."""

from pi_dashboard.celery import app
from pi_dashboard.control import services


@app.task(name="control.commands_expire")
def commands_expire() -> int:
    """Expire commands past their deadline; beat runs it every minute."""
    return services.commands_expire()
