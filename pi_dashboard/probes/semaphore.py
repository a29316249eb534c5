"""Caps on probes in flight, shared by every worker process through Redis.

One fleet-wide cap (`KEY`), and one per model server whose endpoints set a limit
(`server_key`). Each is a sorted set of run ids scored by lease expiry: a slot held by
a worker that died is freed when its lease ends, so a crash never shrinks a cap for
good. The check and the take are one Lua script, atomic across processes.
"""

import functools
import time
from urllib.parse import urlsplit

import redis
from django.conf import settings

KEY = "pid:probes:inflight"
SERVER_KEY_PREFIX = "pid:probes:server:"
ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  return 1
end
return 0
"""


@functools.cache
def client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


@functools.cache
def acquire_script() -> "redis.commands.core.Script":
    return client().register_script(ACQUIRE)


def server_key(base_url: str) -> str:
    """The semaphore of the server behind `base_url`: scheme, host and port."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return (
        f"{SERVER_KEY_PREFIX}{parts.scheme}://{(parts.hostname or '').lower()}:{port}"
    )


def acquire(member: str, *, cap: int, lease_seconds: float, key: str = KEY) -> bool:
    now = time.time()
    result = acquire_script()(keys=[key], args=[now, now + lease_seconds, member, cap])
    return bool(result)


def release(member: str, *, key: str = KEY) -> None:
    client().zrem(key, member)


def in_flight(key: str = KEY) -> int:
    return int(client().zcount(key, time.time(), "+inf"))
