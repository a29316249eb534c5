"""Claiming a probe run: one conditional UPDATE that also returns the endpoint.

A run is claimable when pending, or running with an expired lease (its worker died).
The claim, the lease and the endpoint's current settings come back from one
`UPDATE … FROM … RETURNING` round trip: a probe of a fleet of hundreds then costs two
statements besides its result, not a read, a claim and a second read of the endpoint.
"""

import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from pi_dashboard.probes import conf
from pi_dashboard.probes.models import Endpoint, ProbeRun, RunState

# Endpoint columns a probe needs, returned by the claim (order matters: see _endpoint).
ENDPOINT_COLUMNS = (
    "id",
    "name",
    "base_url",
    "server_model",
    "model_key",
    "api_key_encrypted",
    "api_key_env",
    "headers_encrypted",
    "timeout_seconds",
    "token_param",
    "is_streaming",
    "trials",
    "last_verdict",
    "last_grade",
    "last_variant",
)


@dataclass
class Claim:
    """A run this worker holds, with the endpoint as it was when claimed."""

    run_id: int
    token: str
    fleet_id: int | None
    endpoint: Endpoint
    renewed_at: float  # time.monotonic() of the last lease renewal

    @property
    def seen(self) -> tuple[str, str, str]:
        """The endpoint's latest verdict when claimed (drift compares with it)."""
        e = self.endpoint
        return (e.last_verdict, e.last_grade, e.last_variant)


def lease_seconds(timeout_seconds: float) -> float:
    # Renewed while the probe progresses, so one completion's timeout plus grace.
    return timeout_seconds + conf.lease_grace_seconds()


def _claim_sql() -> str:
    # Only our own table and column names are formatted in; values are parameters.
    run, endpoint = ProbeRun._meta.db_table, Endpoint._meta.db_table
    returned = ", ".join(f"e.{c}" for c in ENDPOINT_COLUMNS)
    return (
        f"UPDATE {run} AS r SET state = %(running)s, claim_token = %(token)s, "  # noqa: S608
        "lease_until = %(now)s + make_interval(secs => e.timeout_seconds + %(grace)s), "
        "attempts = r.attempts + 1, started_at = COALESCE(r.started_at, %(now)s) "
        f"FROM {endpoint} AS e "
        "WHERE r.id = %(id)s AND e.id = r.endpoint_id AND r.attempts < %(max)s "
        "AND (r.state = %(pending)s "
        "OR (r.state = %(running)s AND r.lease_until < %(now)s)) "
        f"RETURNING r.fleet_id, {returned}"
    )


def claim_take(run_id: int) -> Claim | None:
    """Take the run (pending, or abandoned past its lease); None when not claimable."""
    token = uuid.uuid4().hex
    params: dict[str, Any] = {
        "id": run_id,
        "token": token,
        "now": timezone.now(),
        "grace": conf.lease_grace_seconds(),
        "max": conf.max_attempts(),
        "pending": RunState.PENDING.value,
        "running": RunState.RUNNING.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(_claim_sql(), params)
        row = cursor.fetchone()
    if row is None:
        return None
    endpoint = Endpoint(**dict(zip(ENDPOINT_COLUMNS, row[1:], strict=True)))
    return Claim(run_id, token, row[0], endpoint, time.monotonic())


def claim_renew(claim: Claim) -> None:
    """Extend the lease, but only once half the grace is used up.

    A completion lasts at most the endpoint's timeout, so renewing whenever more than
    grace/2 passed since the last renewal keeps at least grace/2 of lease in hand,
    without an UPDATE after every completion (one-completion probes need none).
    """
    grace = conf.lease_grace_seconds()
    if time.monotonic() - claim.renewed_at <= grace / 2:
        return
    lease = timedelta(seconds=lease_seconds(claim.endpoint.timeout_seconds))
    ProbeRun.objects.filter(pk=claim.run_id, claim_token=claim.token).update(
        lease_until=timezone.now() + lease
    )
    claim.renewed_at = time.monotonic()


def claim_release(claim: Claim) -> None:
    """Give the claim back (the task will retry)."""
    ProbeRun.objects.filter(
        pk=claim.run_id, claim_token=claim.token, state=RunState.RUNNING
    ).update(state=RunState.PENDING, lease_until=None, claim_token="")
