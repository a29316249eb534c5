"""Wake long-polling agents when a command is created for their host.

Redis pub/sub is only a doorbell: PostgreSQL stays the source of truth, and a waiter
re-checks the database at least every RECHECK_SECONDS, so a lost message (or Redis
being down) delays a delivery by at most that long and never loses a command.
"""

import logging
import time
from collections.abc import Callable
from functools import cache

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

RECHECK_SECONDS = 1.0


def channel(host_id: int) -> str:
    return f"pid:commands:host:{host_id}"


@cache
def _client() -> "redis.Redis":
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=30
    )


def notify(*, host_id: int) -> None:
    """Ring the doorbell for `host_id` (call it on commit of the new command)."""
    try:
        _client().publish(channel(host_id), b"1")
    except redis.RedisError as exc:
        logger.warning("command wake-up for host %s not sent: %s", host_id, exc)


def wait_for(*, host_id: int, timeout: float, ready: Callable[[], bool]) -> bool:
    """Return True as soon as `ready()` is, or False after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    pubsub = _subscribe(host_id)
    try:
        while True:
            if ready():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            pubsub = _pause(pubsub, min(remaining, RECHECK_SECONDS))
    finally:
        if pubsub is not None:
            pubsub.close()


def _subscribe(host_id: int) -> "redis.client.PubSub | None":
    try:
        pubsub: redis.client.PubSub = _client().pubsub(  # type: ignore[no-untyped-call]
            ignore_subscribe_messages=True
        )
        pubsub.subscribe(channel(host_id))
    except redis.RedisError as exc:
        logger.warning("command wake-up unavailable, polling instead: %s", exc)
        return None
    return pubsub


def _pause(
    pubsub: "redis.client.PubSub | None", seconds: float
) -> "redis.client.PubSub | None":
    """Sleep up to `seconds`, waking early on a doorbell; drop a broken pubsub."""
    if pubsub is not None:
        try:
            pubsub.get_message(timeout=seconds)
        except redis.RedisError:
            pubsub.close()
            return None
        return pubsub
    time.sleep(seconds)
    return None
