"""Celery tasks of the ingest app: thin wrappers around one service each."""

from typing import Any

from pi_dashboard.celery import app
from pi_dashboard.ingest import retention


@app.task(name="ingest.retention_apply")
def retention_apply() -> dict[str, Any]:
    """Delete what retention no longer keeps; beat runs it every hour."""
    return retention.retention_apply().as_dict()
