"""Long-poll: a command created during the wait is returned at once."""

import threading
import time

import pytest
from django.db import connection
from django.test import Client

from tests.control.conftest import bearer, remove_rule

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]


def create_later(operator, delay: float, errors: list[BaseException]) -> None:
    try:
        time.sleep(delay)
        remove_rule(operator)
    except BaseException as exc:  # surfaced by the test
        errors.append(exc)
    finally:
        connection.close()


def test_long_poll_returns_promptly_when_a_command_arrives(fleet, operator, amd_agent):
    errors: list[BaseException] = []
    creator = threading.Thread(target=create_later, args=(operator, 1.0, errors))
    started = time.monotonic()
    creator.start()
    response = Client().get("/api/v1/agent/commands?wait=20", **bearer(amd_agent[1]))
    elapsed = time.monotonic() - started
    creator.join()
    assert not errors
    assert response.status_code == 200
    assert [c["kind"] for c in response.json()["commands"]] == ["remove_rule"]
    # Woken by the Redis doorbell, not by the 20 s timeout or a slow poll.
    assert 0.9 < elapsed < 1.9, elapsed


def test_long_poll_times_out_empty(fleet, amd_agent):
    started = time.monotonic()
    response = Client().get("/api/v1/agent/commands?wait=1.5", **bearer(amd_agent[1]))
    elapsed = time.monotonic() - started
    assert response.json() == {"commands": []}
    assert 1.4 < elapsed < 3.0, elapsed
