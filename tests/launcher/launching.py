"""Running `python -m pi_dashboard.launcher run` from tests, on a throwaway database."""

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
from django.conf import settings

from tests.support.processes import running


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
