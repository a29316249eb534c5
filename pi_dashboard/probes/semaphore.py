"""A fleet-wide cap on probes in flight, shared by every worker through Redis.

A sorted set of run ids scored by lease expiry: a slot held by a worker that died is
freed when its lease ends, so a crash never shrinks the cap for good.
"""

import functools
import time

import redis
from django.conf import settings

KEY = "pid:probes:inflight"
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


def acquire(member: str, *, cap: int, lease_seconds: float) -> bool:
    now = time.time()
    result = acquire_script()(keys=[KEY], args=[now, now + lease_seconds, member, cap])
    return bool(result)


def release(member: str) -> None:
    client().zrem(KEY, member)


def in_flight() -> int:
    return int(client().zcount(KEY, time.time(), "+inf"))
