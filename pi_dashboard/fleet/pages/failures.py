"""Failure counts from hourly rollups: what "failure rate" means on every page.

Failure rate = (tool execution failures, failed or rejected, + validation bounces) per
hour over the selected range, from `ingest.Rollup` rows of the `outcome` dimension.
Repaired validations are not failures: pi fixed the call.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, Sum

from pi_dashboard.ingest.models import Dimension, Rollup

FAILURE_KEYS = ("execution:failed", "execution:rejected", "validation:bounced")
REPAIRED_KEY = "validation:repaired"
FAILURE_RATE_HELP = (
    "Execution failures (failed or rejected) plus validation bounces, per hour over "
    "the selected range. Repaired calls are not counted."
)


@dataclass(frozen=True)
class Counts:
    failures: int = 0
    repaired: int = 0

    def rate(self, hours: int) -> float:
        return self.failures / hours if hours else 0.0


def counts_by_cell(
    *,
    since: datetime,
    host_ids: Iterable[int] | None = None,
    model_ids: Iterable[int] | None = None,
) -> dict[tuple[int, int | None], Counts]:
    """Failures and repairs per (host id, model id) since `since`, in one query."""
    qs = Rollup.objects.filter(
        dimension=Dimension.OUTCOME,
        bucket__gte=since,
        key__in=(*FAILURE_KEYS, REPAIRED_KEY),
    )
    if host_ids is not None:
        qs = qs.filter(host_id__in=list(host_ids))
    if model_ids is not None:
        qs = qs.filter(model_id__in=list(model_ids))
    rows = qs.values("host_id", "model_id").annotate(
        failures=Sum("count", filter=Q(key__in=FAILURE_KEYS)),
        repaired=Sum("count", filter=Q(key=REPAIRED_KEY)),
    )
    return {
        (r["host_id"], r["model_id"]): Counts(r["failures"] or 0, r["repaired"] or 0)
        for r in rows
    }
