"""`make run`'s launcher, for real: serves pages, and stops with nothing left behind."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pi_dashboard.launcher.services import free_port
from tests.launcher.launching import (
    alive,
    descendants,
    launcher,
    page_ok,
    throwaway_database,
)
from tests.support.processes import ROOT, wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


@pytest.mark.timeout(90)
def test_launcher_serves_pages_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    login = f"http://127.0.0.1:{port}/login/"
    log = tmp_path / "launcher.log"
    # The demo has its own end-to-end test; this one is about the servers.
    with (
        throwaway_database() as db,
        launcher(port=port, env={"DATABASE_URL": db, "PI_DEMO": "0"}, log=log) as proc,
    ):
        assert wait_until(lambda: page_ok(login), timeout=60, interval=0.5), (
            log.read_text()[-3000:]
        )
        assert 'name="password"' in httpx.get(login).text
        below = descendants(proc.pid)
        assert len(below) >= 3  # gunicorn, celery worker, celery beat (and theirs)

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        time.sleep(0.5)
        left = [pid for pid in below if alive(pid)]
        assert not left, f"still running after SIGTERM: {left}"
        assert not page_ok(login)


def test_a_busy_port_is_refused_with_a_clear_message() -> None:
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
