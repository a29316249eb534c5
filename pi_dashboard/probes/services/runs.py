"""Probe runs: request, claim, execute, finish — each run ends once, in one transaction.

A run is claimed with a conditional UPDATE (pending, or running with an expired
lease), so a task delivered twice, or redelivered after its worker died, probes the
endpoint once. Nothing of a probe is written until its end: a killed worker leaves a
claimed run and no partial result, and the next claim starts it afresh.

The hot path of a probe is kept to few round trips (fleets probe hundreds at once):
a Redis semaphore slot, the claim (one UPDATE … RETURNING with the endpoint), the HTTP
completions, and one transaction for the result (run, transcripts, endpoint latest).
"""

import logging
import random
import uuid
from datetime import datetime, timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from pi_dashboard.audit import audit
from pi_dashboard.lib.errors import Conflict
from pi_dashboard.probes import algorithm, chat, conf, dispatch, semaphore
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
from pi_dashboard.probes.services.claims import (
    Claim,
    claim_release,
    claim_renew,
    claim_take,
)

log = logging.getLogger(__name__)


def run_enqueue(run: ProbeRun, *, countdown: float = 0, producer: Any = None) -> None:
    endpoint = run.endpoint
    dispatch.run_send(
        run.pk,
        dispatch.run_budget_seconds(endpoint),
        countdown,
        producer,
        server=dispatch.server_limit(endpoint),
    )


def probe_request(
    *,
    endpoint: Endpoint,
    user: User | None,
    trigger: Trigger,
    ip_address: str | None = None,
) -> ProbeRun:
    """Probe one endpoint now. An unfinished request for it is returned, not doubled.

    Audited as `probes.probe` (refusals too), by `user` or, without one, the system.
    """
    with audit.audited(
        actor=user,
        action="probes.probe",
        model=endpoints.model_of(endpoint.model_key),
        ip_address=ip_address,
        endpoint=endpoint.pk,
        trigger=str(trigger),
    ) as info:
        run = _probe_request(endpoint=endpoint, user=user, trigger=trigger)
        info["run"] = run.pk
    return run


@transaction.atomic
def _probe_request(
    *, endpoint: Endpoint, user: User | None, trigger: Trigger
) -> ProbeRun:
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
    claim = claim_take(run.pk)
    return claim.token if claim else None


def _locked_claimed(run_id: int, token: str) -> ProbeRun | None:
    run = ProbeRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None or run.state != RunState.RUNNING or run.claim_token != token:
        return None  # another worker took over after our lease ran out
    return run


@transaction.atomic
def run_finish(
    *,
    run_id: int,
    token: str,
    outcome: algorithm.ProbeOutcome,
    claim: Claim | None = None,
) -> bool:
    """Write the whole result at once; False when the claim was lost meanwhile."""
    now = timezone.now()
    won = ProbeRun.objects.filter(
        pk=run_id, claim_token=token, state=RunState.RUNNING
    ).update(
        state=RunState.DONE,
        verdict=outcome.verdict,
        native_grade=outcome.native_grade,
        variant=outcome.variant,
        diagnostic=outcome.diagnostic,
        tool_probe=outcome.tool_probe,
        protocol=outcome.protocol,
        completions=len(outcome.exchanges),
        warning=outcome.warning,
        finished_at=now,
        lease_until=None,
    )
    if not won:
        return False  # another worker took over after our lease ran out
    if claim is None:  # called without a claim at hand (tests, tools): read it
        run = ProbeRun.objects.select_related("endpoint").get(pk=run_id)
        claim = Claim(run_id, token, run.fleet_id, run.endpoint, 0.0)
    _exchanges_create(run_id, outcome.exchanges)
    after = (outcome.verdict, outcome.native_grade, outcome.variant)
    before = _endpoint_advance(claim, after, now)
    drift.drift_record(
        endpoint_id=claim.endpoint.pk,
        model_key=claim.endpoint.model_key,
        run_id=run_id,
        before=before,
        after=after,
        at=now,
    )
    _complete_fleet_after_commit(claim.fleet_id)
    return True


def _endpoint_advance(
    claim: Claim, after: tuple[str, str, str], now: datetime
) -> tuple[str, str, str]:
    """Move the endpoint's latest verdict to `after`; return the one it replaced.

    Optimistic: the update applies only if the latest is still what the claim saw,
    which is the rule (no lock taken beyond the UPDATE's own). When another run of
    the endpoint finished meanwhile, lock the row and read what it holds now.
    """
    latest = {
        "last_verdict": after[0],
        "last_grade": after[1],
        "last_variant": after[2],
        "last_probed_at": now,
    }
    seen = claim.seen
    moved = Endpoint.objects.filter(
        pk=claim.endpoint.pk,
        last_verdict=seen[0],
        last_grade=seen[1],
        last_variant=seen[2],
    ).update(**latest)
    if moved:
        return seen
    row = (
        Endpoint.objects.select_for_update()
        .filter(pk=claim.endpoint.pk)
        .values_list("last_verdict", "last_grade", "last_variant")
        .first()
    )
    Endpoint.objects.filter(pk=claim.endpoint.pk).update(**latest)
    return row or ("", "", "")


def _exchanges_create(run_id: int, exchanges: list[dict[str, Any]]) -> None:
    ProbeExchange.objects.bulk_create(
        ProbeExchange(
            run_id=run_id,
            seq=i,
            kind=ex["kind"],
            passed=ex["passed"],
            request=ex["request"],
            response=ex["response"],
        )
        for i, ex in enumerate(exchanges)
    )


def _complete_fleet_after_commit(fleet_id: int | None) -> None:
    # After commit, not inside: the run that commits last then sees every other run
    # finished, and finishing runs never queue on the fleet row's lock.
    if fleet_id is not None:
        transaction.on_commit(lambda: fleet.fleet_complete_if_done(fleet_id=fleet_id))


@transaction.atomic
def run_stop(
    *,
    run_id: int,
    token: str | None,
    state: RunState,
    error: str,
    exchanges: list[dict[str, Any]] | None = None,
    warning: str = "",
) -> bool:
    """End a run without a verdict (refused by the guard, unreachable, out of time,
    a server that answered nothing), keeping the requests it sent."""
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
    run.warning = warning
    run.completions = len(exchanges or [])
    run.finished_at = timezone.now()
    run.lease_until = None
    run.save(
        update_fields=[
            *("state", "error", "warning", "completions"),
            *("finished_at", "lease_until"),
        ]
    )
    _exchanges_create(run_id, exchanges or [])
    _complete_fleet_after_commit(run.fleet_id)
    return True


def probe_run_execute(
    *,
    run_id: int,
    final_attempt: bool,
    budget_seconds: float | None = None,
    server: tuple[str, int] | None = None,
) -> str:
    """Claim and probe one run. Raises chat.Unreachable for the task to retry.

    `budget_seconds` is the task's hard time limit: the longest a semaphore slot
    can be held (a worker that dies frees it when that lease ends). `server` is
    the endpoint's server semaphore and cap (`server_limit`), if it has one.
    """
    member = str(run_id)
    budget = budget_seconds or DEFAULT_BUDGET_SECONDS
    if not semaphore.acquire(member, cap=conf.max_concurrency(), lease_seconds=budget):
        delay = random.uniform(0.2, 1.0)  # noqa: S311
        dispatch.run_send(run_id, budget, countdown=delay, server=server)
        return "deferred: concurrency cap reached"
    try:
        if server is None:
            return _claim_and_probe(run_id, final_attempt=final_attempt)
        key, cap = server
        if not semaphore.acquire(member, cap=cap, lease_seconds=budget, key=key):
            # Its server is busy with as many probes as it takes: try again soon.
            delay = random.uniform(0.5, 2.0)  # noqa: S311
            dispatch.run_send(run_id, budget, countdown=delay, server=server)
            return "deferred: server busy"
        try:
            return _claim_and_probe(run_id, final_attempt=final_attempt)
        finally:
            semaphore.release(member, key=key)
    finally:
        semaphore.release(member)


def _claim_and_probe(run_id: int, *, final_attempt: bool) -> str:
    claim = claim_take(run_id)
    if claim is None:
        # Rare path: say why (finished, gone, or held by another worker).
        run = ProbeRun.objects.filter(pk=run_id).only("state").first()
        if run is None or run.is_terminal:
            return "nothing to do"
        return "claimed elsewhere"
    return _probe_claimed(claim, final_attempt=final_attempt)


# Semaphore lease when the caller does not pass its time limit (direct calls).
DEFAULT_BUDGET_SECONDS = 900.0


def _probe_claimed(claim: Claim, *, final_attempt: bool) -> str:
    run_id, token, endpoint = claim.run_id, claim.token, claim.endpoint
    try:
        target, setup_error, _ = endpoints.endpoint_target(endpoint)
    except OutboundRefused as exc:
        run_stop(run_id=run_id, token=token, state=RunState.REFUSED, error=exc.detail)
        return "refused"

    def fail(error: str, exchanges: list[dict[str, Any]], warning: str = "") -> None:
        # Failed runs keep the requests they sent: a hung one explains the failure.
        run_stop(
            run_id=run_id,
            token=token,
            state=RunState.FAILED,
            error=error,
            exchanges=exchanges,
            warning=warning,
        )

    client = chat.http_client(target) if target else _NullClient()
    with client:
        session = algorithm.ProbeSession(
            client=client,  # type: ignore[arg-type]
            target=target,
            run_key=f"run-{run_id}",
            trials=endpoint.trials,
            setup_error=setup_error,
            progress=lambda: claim_renew(claim),
        )
        try:
            outcome = algorithm.probe(session)
        except SoftTimeLimitExceeded:
            fail("The probe ran past its time limit.", session.exchanges)
            return "failed: time limit"
        except chat.Unreachable as exc:
            if not final_attempt:
                claim_release(claim)
                raise
            fail(str(exc), session.exchanges, session.server_model_warning())
            return "failed: unreachable"
    if outcome.failure:
        fail(outcome.failure, outcome.exchanges, outcome.warning)
        return "failed: no answer"
    finished = run_finish(run_id=run_id, token=token, outcome=outcome, claim=claim)
    return outcome.verdict if finished else "claim lost"


class _NullClient:
    def __enter__(self) -> "_NullClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def _waiting_for_its_server(run: ProbeRun) -> bool:
    limit = dispatch.server_limit(run.endpoint)
    return limit is not None and semaphore.in_flight(limit[0]) >= limit[1]


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
        if run.state == RunState.PENDING and _waiting_for_its_server(run):
            continue  # its message is alive, deferring while the server is busy
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
