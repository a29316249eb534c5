"""Running real child processes (server, Celery worker, agent) from end-to-end tests."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """DATABASE_URL of the database this test runs against (the test database)."""
    s = connection.settings_dict
    auth = quote(s["USER"] or "")
    if s["PASSWORD"]:
        auth += ":" + quote(s["PASSWORD"])
    host = s["HOST"] or ""
    if host.startswith("/"):
        return f"postgresql://{auth}@/{s['NAME']}?host={quote(host)}"
    port = f":{s['PORT']}" if s["PORT"] else ""
    return f"postgresql://{auth}@{host}{port}/{s['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    """Environment for a child process that shares this test's database and Redis."""
    env = {**os.environ, "DATABASE_URL": test_database_url(), "PI_DASHBOARD_DEV": "1"}
    env.pop("DJANGO_TEST_DB_NAME", None)
    env.update(extra)
    return env


@contextlib.contextmanager
def running(
    argv: list[str], *, env: dict[str, str], log: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Start a process group; stop it (TERM, then KILL) when the block ends."""
    out = log.open("ab") if log is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if log is not None:
            out.close()  # type: ignore[union-attr]


def celery_worker_argv(*extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "pi_dashboard",
        "worker",
        "--loglevel",
        "INFO",
        "--without-gossip",
        "--without-mingle",
        *extra,
    ]


def wait_until(predicate, timeout: float = 20.0, interval: float = 0.2) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
