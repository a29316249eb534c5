"""Running `python -m pi_dashboard.launcher run` from tests, on a throwaway database.

Shared by the launcher's and the demo's end-to-end tests.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from django.conf import settings

from pi_dashboard.launcher.services import free_port
from tests.support.processes import running, wait_until

MARKS = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


def server_url(dbname: str) -> str:
    """A URL for database `dbname` on the server the tests use."""
    s = settings.DATABASES["default"]
    host = s["HOST"] or "127.0.0.1"
    if host.startswith("/"):
        return f"postgresql://{s['USER']}@/{dbname}?host={host}"
    port = f":{s['PORT']}" if s["PORT"] else ""
    return f"postgresql://{s['USER']}@{host}{port}/{dbname}"


@contextlib.contextmanager
def throwaway_database() -> Iterator[str]:
    """A database of its own on the configured server, dropped afterwards."""
    name = f"test_pid_launcher_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url("postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield server_url(name)
    finally:
        with psycopg.connect(server_url("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def launcher(
    *, port: int, env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """`launcher run` with `env` on top of ours, stopped when the block ends."""
    child_env = {**os.environ, **env}
    child_env.pop("DJANGO_TEST_DB_NAME", None)
    argv = [sys.executable, "-m", "pi_dashboard.launcher", "run", "--port", str(port)]
    with running(argv, env=child_env, log=log) as proc:
        yield proc


def page_ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Launched:
    proc: subprocess.Popen[bytes]
    port: int
    db: str
    log: Path

    @property
    def login_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/login/"

    def log_tail(self) -> str:
        return self.log.read_text()[-4000:]


@contextlib.contextmanager
def launched(*, env: dict[str, str], log: Path) -> Iterator[Launched]:
    """The launcher on a free port and a throwaway database, once it serves pages."""
    port = free_port()
    with (
        throwaway_database() as db,
        launcher(port=port, env={"DATABASE_URL": db, **env}, log=log) as proc,
    ):
        run = Launched(proc=proc, port=port, db=db, log=log)
        assert wait_until(lambda: page_ok(run.login_url), timeout=60, interval=0.5), (
            run.log_tail()
        )
        yield run


def stop_cleanly(
    proc: subprocess.Popen[bytes], *, timeout: float, signals: int = 1
) -> set[int]:
    """SIGTERM the launcher (`signals` times, as make forwards a group's SIGTERM);
    assert it exits 0 leaving no process behind.

    Returns the processes that were running below it.
    """
    below = descendants(proc.pid)
    for _ in range(signals):
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
    assert proc.wait(timeout) == 0
    time.sleep(0.5)
    left = [pid for pid in below if alive(pid)]
    assert not left, f"still running after SIGTERM: {left}"
    return below
