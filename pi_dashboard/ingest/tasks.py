"""Celery tasks of the ingest app: thin wrappers around one service each."""

from typing import Any

from celery import shared_task

from pi_dashboard.ingest import retention


@shared_task(name="ingest.retention_apply")
def retention_apply() -> dict[str, Any]:
    """Delete what retention no longer keeps; beat runs it every hour."""
    return retention.retention_apply().as_dict()
