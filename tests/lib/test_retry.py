"""The deadlock retry: a whole transaction again, never half of an outer one."""

import pytest
from django.db import OperationalError, transaction
from psycopg import errors

from pi_dashboard.lib import retry


def deadlock() -> OperationalError:
    error = OperationalError("deadlock detected")
    error.__cause__ = errors.DeadlockDetected("deadlock detected")
    return error


def test_a_deadlock_victim_runs_again() -> None:
    calls: list[int] = []

    def work() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise deadlock()
        return "done"

    assert retry.retry_on_conflict(work) == "done"
    assert len(calls) == 3


def test_gives_up_after_its_attempts_and_never_retries_other_errors() -> None:
    calls: list[int] = []

    def always() -> None:
        calls.append(1)
        raise deadlock()

    with pytest.raises(OperationalError):
        retry.retry_on_conflict(always)
    assert len(calls) == retry.ATTEMPTS

    def other() -> None:
        calls.append(1)
        raise OperationalError("server closed the connection")

    calls.clear()
    with pytest.raises(OperationalError):
        retry.retry_on_conflict(other)
    assert len(calls) == 1


@pytest.mark.django_db(transaction=True)
def test_inside_an_outer_transaction_only_the_owner_may_retry() -> None:
    calls: list[int] = []

    def work() -> None:
        calls.append(1)
        raise deadlock()

    with pytest.raises(OperationalError), transaction.atomic():
        retry.retry_on_conflict(work)
    assert len(calls) == 1
