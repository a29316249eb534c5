"""Backoff with full jitter, Retry-After as a floor."""

from pi_dashboard.agent.backoff import Backoff
from pi_dashboard.agent.client import parse_retry_after


def test_full_jitter_grows_exponentially_up_to_the_cap() -> None:
    top = Backoff(base=1.0, cap=30.0, rand=lambda: 1.0)
    assert [top.next_delay() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    low = Backoff(base=1.0, cap=30.0, rand=lambda: 0.0)
    assert low.next_delay() == 0.1  # never a zero-delay hammering loop


def test_retry_after_is_a_floor_and_reset_starts_over() -> None:
    b = Backoff(base=1.0, cap=30.0, rand=lambda: 0.5)
    assert b.next_delay(retry_after=7) == 7
    assert b.next_delay(retry_after=120) == 120  # the server's word beats our cap
    b.reset()
    assert b.next_delay() == 0.5


def test_many_failures_do_not_overflow() -> None:
    b = Backoff(base=1.0, cap=60.0, rand=lambda: 1.0)
    for _ in range(5000):
        delay = b.next_delay()
    assert delay == 60


def test_parse_retry_after() -> None:
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
