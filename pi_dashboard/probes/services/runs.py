"""Probe runs: request, claim, execute, finish — each run ends once, in one transaction.

A run is claimed with a conditional UPDATE (pending, or running with an expired
lease), so a task delivered twice, or redelivered after its worker died, probes the
endpoint once. Nothing of a probe is written until its end: a killed worker leaves a
claimed run and no partial result, and the next claim starts it afresh.
"""

import logging
import random
import uuid
from datetime import timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from pi_dashboard.lib.errors import Conflict
from pi_dashboard.probes import algorithm, chat, conf, semaphore
from pi_dashboard.probes.models import (
    TERMINAL_RUN_STATES,
    Endpoint,
    FleetProbe,
    ProbeExchange,
    ProbeRun,
    RunState,
    Trigger,
)
from pi_dashboard.probes.outbound import OutboundRefused
from pi_dashboard.probes.services import drift, endpoints, fleet

log = logging.getLogger(__name__)


def run_budget_seconds(endpoint: Endpoint) -> float:
    """Longest a probe of `endpoint` can take: 10 completions per trial round."""
    return 10 * endpoint.trials * endpoint.timeout_seconds + conf.lease_grace_seconds()


def lease_seconds(endpoint: Endpoint) -> float:
    # Renewed after every completion, so one completion's timeout plus grace is enough.
    return endpoint.timeout_seconds + conf.lease_grace_seconds()


def run_enqueue(run: ProbeRun, *, countdown: float = 0, producer: Any = None) -> None:
    from pi_dashboard.probes import tasks

    budget = run_budget_seconds(run.endpoint)
    tasks.probe_run.apply_async(
        (run.pk,),
        countdown=countdown,
        soft_time_limit=int(budget),
        time_limit=int(budget) + 15,
        producer=producer,
    )


@transaction.atomic
def probe_request(
    *, endpoint: Endpoint, user: User | None, trigger: Trigger
) -> ProbeRun:
    """Probe one endpoint now. An unfinished request for it is returned, not doubled."""
    endpoint = Endpoint.objects.select_for_update().get(pk=endpoint.pk)
    if not endpoint.is_enabled:
        raise Conflict(
            "This endpoint is disabled; enable it to probe.", code="disabled"
        )
    open_run = (
        endpoint.runs.filter(fleet__isnull=True)
        .exclude(state__in=TERMINAL_RUN_STATES)
        .first()
    )
    if open_run is not None:
        return open_run
    run = ProbeRun.objects.create(
        endpoint=endpoint,
        slot=f"{trigger}:{uuid.uuid4().hex}",
        trigger=trigger,
        requested_by=user,
    )
    transaction.on_commit(lambda: run_enqueue(run))
    return run


def run_claim(*, run: ProbeRun) -> str | None:
    """Take the run (pending, or abandoned past its lease); the claim token or None."""
    now = timezone.now()
    token = uuid.uuid4().hex
    claimable = Q(state=RunState.PENDING) | Q(
        state=RunState.RUNNING, lease_until__lt=now
    )
    claimed = ProbeRun.objects.filter(
        claimable, pk=run.pk, attempts__lt=conf.max_attempts()
    ).update(
        state=RunState.RUNNING,
        claim_token=token,
        lease_until=now + timedelta(seconds=lease_seconds(run.endpoint)),
        attempts=F("attempts") + 1,
        started_at=Coalesce(F("started_at"), now),
    )
    return token if claimed else None


def run_heartbeat(*, run: ProbeRun, token: str) -> None:
    lease = timedelta(seconds=lease_seconds(run.endpoint))
    ProbeRun.objects.filter(pk=run.pk, claim_token=token).update(
        lease_until=timezone.now() + lease
    )


def _locked_claimed(run_id: int, token: str) -> ProbeRun | None:
    run = ProbeRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None or run.state != RunState.RUNNING or run.claim_token != token:
        return None  # another worker took over after our lease ran out
    return run


@transaction.atomic
def run_finish(*, run_id: int, token: str, outcome: algorithm.ProbeOutcome) -> bool:
    """Write the whole result at once; False when the claim was lost meanwhile."""
    run = _locked_claimed(run_id, token)
    if run is None:
        return False
    endpoint = Endpoint.objects.select_for_update().get(pk=run.endpoint_id)
    now = timezone.now()
    run.state = RunState.DONE
    run.verdict = outcome.verdict
    run.native_grade = outcome.native_grade
    run.variant = outcome.variant
    run.diagnostic = outcome.diagnostic
    run.tool_probe = outcome.tool_probe
    run.protocol = outcome.protocol
    run.completions = len(outcome.exchanges)
    run.finished_at = now
    run.lease_until = None
    run.save()
    ProbeExchange.objects.bulk_create(
        ProbeExchange(
            run=run,
            seq=i,
            kind=ex["kind"],
            passed=ex["passed"],
            request=ex["request"],
            response=ex["response"],
        )
        for i, ex in enumerate(outcome.exchanges)
    )
    drift.drift_record(endpoint=endpoint, run=run)
    endpoint.last_verdict = run.verdict
    endpoint.last_grade = run.native_grade
    endpoint.last_variant = run.variant
    endpoint.last_probed_at = now
    endpoint.save(
        update_fields=["last_verdict", "last_grade", "last_variant", "last_probed_at"]
    )
    _complete_fleet_after_commit(run)
    return True


def _complete_fleet_after_commit(run: ProbeRun) -> None:
    # After commit, not inside: the run that commits last then sees every other run
    # finished, and finishing runs never queue on the fleet row's lock.
    fleet_id = run.fleet_id
    if fleet_id is not None:
        transaction.on_commit(lambda: fleet.fleet_complete_if_done(fleet_id=fleet_id))


@transaction.atomic
def run_stop(*, run_id: int, token: str | None, state: RunState, error: str) -> bool:
    """End a run without a verdict (refused by the guard, unreachable, out of time)."""
    if token is None:
        run = ProbeRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.is_terminal:
            return False
    else:
        run = _locked_claimed(run_id, token)
        if run is None:
            return False
    run.state = state
    run.error = error
    run.finished_at = timezone.now()
    run.lease_until = None
    run.save(update_fields=["state", "error", "finished_at", "lease_until"])
    _complete_fleet_after_commit(run)
    return True


def run_release(*, run: ProbeRun, token: str) -> None:
    """Give the claim back (the task will retry)."""
    ProbeRun.objects.filter(
        pk=run.pk, claim_token=token, state=RunState.RUNNING
    ).update(state=RunState.PENDING, lease_until=None, claim_token="")


def probe_run_execute(*, run_id: int, final_attempt: bool) -> str:
    """Claim and probe one run. Raises chat.Unreachable for the task to retry."""
    run = ProbeRun.objects.select_related("endpoint").filter(pk=run_id).first()
    if run is None or run.is_terminal:
        return "nothing to do"
    member = str(run.pk)
    budget = run_budget_seconds(run.endpoint)
    if not semaphore.acquire(member, cap=conf.max_concurrency(), lease_seconds=budget):
        run_enqueue(run, countdown=random.uniform(0.2, 1.0))  # noqa: S311 (jitter)
        return "deferred: concurrency cap reached"
    try:
        token = run_claim(run=run)
        if token is None:
            return "claimed elsewhere"
        return _probe_claimed(run, token, final_attempt=final_attempt)
    finally:
        semaphore.release(member)


def _probe_claimed(run: ProbeRun, token: str, *, final_attempt: bool) -> str:
    try:
        target, setup_error, _ = endpoints.endpoint_target(run.endpoint)
    except OutboundRefused as exc:
        run_stop(run_id=run.pk, token=token, state=RunState.REFUSED, error=exc.detail)
        return "refused"
    client = chat.http_client(target) if target else _NullClient()
    with client:
        session = algorithm.ProbeSession(
            client=client,  # type: ignore[arg-type]
            target=target,
            run_key=f"run-{run.pk}",
            trials=run.endpoint.trials,
            setup_error=setup_error,
            progress=lambda: run_heartbeat(run=run, token=token),
        )
        try:
            outcome = algorithm.probe(session)
        except SoftTimeLimitExceeded:
            error = "The probe ran past its time limit."
            run_stop(run_id=run.pk, token=token, state=RunState.FAILED, error=error)
            return "failed: time limit"
        except chat.Unreachable as exc:
            if not final_attempt:
                run_release(run=run, token=token)
                raise
            run_stop(run_id=run.pk, token=token, state=RunState.FAILED, error=str(exc))
            return "failed: unreachable"
    finished = run_finish(run_id=run.pk, token=token, outcome=outcome)
    return outcome.verdict if finished else "claim lost"


class _NullClient:
    def __enter__(self) -> "_NullClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def runs_sweep() -> dict[str, int]:
    """Re-send runs whose worker died (lease over) or whose message was lost."""
    now = timezone.now()
    stale_pending = now - timedelta(seconds=conf.stale_pending_seconds())
    abandoned = ProbeRun.objects.select_related("endpoint").filter(
        Q(state=RunState.RUNNING, lease_until__lt=now)
        | Q(state=RunState.PENDING, created_at__lt=stale_pending)
    )
    resent = gave_up = 0
    for run in abandoned[:1000]:
        if run.attempts >= conf.max_attempts():
            error = f"Gave up after {run.attempts} attempts (the worker was lost)."
            gave_up += run_stop(
                run_id=run.pk, token=None, state=RunState.FAILED, error=error
            )
            continue
        run_enqueue(run)
        resent += 1
    # A worker that died between a run's commit and its fleet check leaves the fleet
    # open; close any fleet with nothing left to run.
    open_fleets = FleetProbe.objects.filter(finished_at__isnull=True).values_list(
        "pk", flat=True
    )
    for fleet_id in open_fleets[:100]:
        fleet.fleet_complete_if_done(fleet_id=fleet_id)
    return {"resent": resent, "gave_up": gave_up}
