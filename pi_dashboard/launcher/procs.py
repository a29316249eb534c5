"""Starting and stopping the launcher's children so that none outlives it.

Each child gets a session of its own (Ctrl-C reaches only the launcher, which then
stops everything in order) and, on Linux, a parent-death signal: if the launcher is
killed outright (SIGKILL, OOM), the kernel sends the child SIGTERM itself.
"""

import contextlib
import ctypes
import ctypes.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

PR_SET_PDEATHSIG = 1


def _parent_death_signal() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return None
    libc = ctypes.CDLL(libc_name, use_errno=True)
    parent = os.getpid()

    def arm() -> None:  # runs in the child between fork and exec
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the launcher died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


def spawn(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdout: IO[bytes] | int | None = None,
) -> subprocess.Popen[bytes]:
    """A child in its own session that dies with the launcher."""
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.STDOUT if stdout is not None else None,
        start_new_session=True,
        preexec_fn=_parent_death_signal(),  # the launcher is single-threaded
    )


def stop_all(procs: list[subprocess.Popen[bytes]], *, grace: float = 15.0) -> None:
    """TERM every child's process group, then KILL what is left after `grace`."""
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False
