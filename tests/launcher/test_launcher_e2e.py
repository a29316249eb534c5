"""`make run`'s launcher, for real: serves pages, and stops with nothing left behind."""

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from django.conf import settings

from pi_dashboard.launcher.services import free_port
from tests.support.processes import ROOT, wait_until

pytestmark = pytest.mark.e2e


def server_url(dbname: str) -> str:
    s = settings.DATABASES["default"]
    host = s["HOST"] or "127.0.0.1"
    if host.startswith("/"):
        return f"postgresql://{s['USER']}@/{dbname}?host={host}"
    port = f":{s['PORT']}" if s["PORT"] else ""
    return f"postgresql://{s['USER']}@{host}{port}/{dbname}"


@pytest.fixture
def throwaway_db() -> Iterator[str]:
    """A database of its own on the configured server, dropped afterwards."""
    name = f"test_pid_launcher_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url("postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield server_url(name)
    finally:
        with psycopg.connect(server_url("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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


@pytest.mark.timeout(90)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_launcher_serves_pages_and_stops_cleanly(
    throwaway_db: str, tmp_path: Path
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": throwaway_db,
        "PI_DEMO": "0",  # the demo has its own test; this one is about the servers
    }
    env.pop("DJANGO_TEST_DB_NAME", None)
    log = (tmp_path / "launcher.log").open("wb")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "pi_dashboard.launcher", "run", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def login_page() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/login/").status_code == 200
            except httpx.TransportError:
                return False

        assert wait_until(login_page, timeout=60, interval=0.5), (
            tmp_path / "launcher.log"
        ).read_text()[-3000:]
        page = httpx.get(f"http://127.0.0.1:{port}/login/")
        assert 'name="password"' in page.text
        below = descendants(launcher.pid)
        assert len(below) >= 3  # gunicorn, celery worker, celery beat (and theirs)

        launcher.send_signal(signal.SIGTERM)
        assert launcher.wait(30) == 0
        time.sleep(0.5)
        left = [pid for pid in below if alive(pid)]
        assert not left, f"orphans after SIGTERM: {left}"
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/login/", timeout=2)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        log.close()


def test_a_busy_port_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "pi_dashboard.launcher", "run", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, "PI_DEMO": "0"},
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert result.returncode == 2
    assert f"port {port} is already in use" in result.stderr
    assert f"PORT={port + 1} make run" in result.stderr
