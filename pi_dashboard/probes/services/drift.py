"""Drift: a verdict, grade or calibrated variant that differs from the previous run."""

import logging
from datetime import datetime

from pi_dashboard.probes.models import Drift, ProbeRun, RunState

log = logging.getLogger(__name__)


Outcome = tuple[str, str, str]  # (verdict, nativeGrade, variant)


def drift_record(
    *,
    endpoint_id: int,
    model_key: str,
    run_id: int,
    before: Outcome,
    after: Outcome,
    at: datetime,
) -> Drift | None:
    """Called inside run_finish's transaction with the endpoint's previous latest.

    `before` is what the endpoint showed as latest (empty before its first verdict);
    the previous run itself is looked up only when there is drift to record.
    """
    if not before[0] or before == after:
        return None  # a first verdict is not drift; an equal one neither
    previous = (
        ProbeRun.objects.filter(endpoint_id=endpoint_id, state=RunState.DONE)
        .exclude(pk=run_id)
        .order_by("-finished_at", "-id")
        .first()
    )
    item = Drift.objects.create(
        endpoint_id=endpoint_id,
        run_id=run_id,
        previous_run=previous,
        model_key=model_key,
        previous_verdict=before[0],
        previous_grade=before[1],
        previous_variant=before[2],
        verdict=after[0],
        grade=after[1],
        variant=after[2],
        at=at,
    )
    # Announced by the alerts app's "probe verdict drift" rule (issue 11).
    return item
