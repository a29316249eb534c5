"""Exponential backoff with full jitter that honours the server's Retry-After."""

import random
from collections.abc import Callable

# A Retry-After beyond this is taken as a server mistake rather than obeyed.
MAX_RETRY_AFTER = 3600.0


class Backoff:
    def __init__(
        self,
        *,
        base: float = 1.0,
        cap: float = 300.0,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.base = base
        self.cap = cap
        self.failures = 0
        self._rand = rand

    def next_delay(self, retry_after: float | None = None) -> float:
        """Record one failure; seconds to wait before the next attempt.

        Full jitter (uniform over [0, min(cap, base·2ⁿ)]) spreads a fleet of agents
        that all lost the server at once; a Retry-After is a floor, never shortened.
        """
        ceiling = min(self.cap, self.base * 2.0 ** min(self.failures, 32))
        self.failures += 1
        delay = max(self.base / 10, self._rand() * ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, MAX_RETRY_AFTER))
        return delay

    def reset(self) -> None:
        self.failures = 0
