"""pi's lock protocol on its state files: proper-lockfile's `<file>.lock` directory.

Acquire = `mkdir <file>.lock` (atomic). If it exists and its mtime is older than the
stale threshold (proper-lockfile's default 10 s) the holder is presumed dead: remove
it and try again once. Otherwise retry with backoff until `wait` runs out. While held,
the lock dir's mtime is refreshed every stale/2 seconds, as proper-lockfile does, so a
live holder is never taken for stale; an mtime we did not set means someone else took
the lock over (compromised), and the holder must not write.
"""

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from pi_dashboard.agent.errors import AgentError

DEFAULT_STALE = 10.0


class LockTimeout(AgentError):
    pass


class LockCompromised(AgentError):
    pass


def lock_path(file: Path) -> Path:
    # proper-lockfile resolves the real path first (`realpath: true`).
    return Path(os.path.realpath(file) + ".lock")


class HeldLock:
    def __init__(self, path: Path, *, update: float, took_over: bool = False) -> None:
        self.path = path
        # Taken from a holder presumed dead, who may yet write its older copy back.
        self.took_over = took_over
        self._update = update
        self._stop = threading.Event()
        self._mark = self._touch()
        self.compromised: str | None = None
        self._thread = threading.Thread(
            target=self._refresh, name="lock-refresh", daemon=True
        )
        self._thread.start()

    def _touch(self) -> tuple[int, int]:
        os.utime(self.path)
        st = os.stat(self.path)
        return (st.st_ino, st.st_mtime_ns)

    def _refresh(self) -> None:
        while not self._stop.wait(self._update):
            try:
                st = os.stat(self.path)
                if (st.st_ino, st.st_mtime_ns) != self._mark:
                    raise FileExistsError("lock mtime changed by someone else")
                self._mark = self._touch()
            except OSError as exc:
                self.compromised = f"lock {self.path} was taken over: {exc}"
                return

    def check(self) -> None:
        """Raise if the lock was taken over; call right before the write commits."""
        if self.compromised:
            raise LockCompromised(self.compromised)

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.compromised is None:
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(self.path)


FREE, TAKEN_OVER = "free", "taken over"


def _try_acquire(path: Path, stale: float) -> str | None:
    """FREE or TAKEN_OVER once the lock is ours; None while someone holds it."""
    try:
        os.mkdir(path)
        return FREE
    except FileExistsError:
        pass
    try:
        mtime = os.stat(path).st_mtime
    except FileNotFoundError:
        # released meanwhile: no stale check (proper-lockfile)
        return FREE if _mkdir(path) else None
    if mtime >= time.time() - stale:
        return None
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)  # the holder stopped refreshing: presumed dead
    return TAKEN_OVER if _mkdir(path) else None


def _mkdir(path: Path) -> bool:
    try:
        os.mkdir(path)
        return True
    except FileExistsError:
        return False


@contextlib.contextmanager
def locked(
    file: Path, *, stale: float = DEFAULT_STALE, wait: float = 15.0
) -> Iterator[HeldLock]:
    path = lock_path(file)
    deadline = time.monotonic() + wait
    delay = 0.05
    while (how := _try_acquire(path, stale)) is None:
        if time.monotonic() >= deadline:
            raise LockTimeout(
                f"{file.name} is locked by another process ({path} held "
                f"and refreshed for over {wait:g}s)"
            )
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 1.0)
    held = HeldLock(path, update=max(1.0, stale / 2), took_over=how == TAKEN_OVER)
    try:
        yield held
    finally:
        held.release()
