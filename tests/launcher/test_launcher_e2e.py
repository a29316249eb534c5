"""`make run`'s launcher, for real: serves pages, and stops with nothing left behind."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.launching import MARKS, launched, page_ok, stop_cleanly
from tests.support.processes import ROOT

pytestmark = MARKS


@pytest.mark.timeout(90)
def test_launcher_serves_pages_and_stops_cleanly(tmp_path: Path) -> None:
    # The demo has its own end-to-end test; this one is about the servers.
    with launched(env={"PI_DEMO": "0"}, log=tmp_path / "launcher.log") as run:
        assert 'name="password"' in httpx.get(run.login_url).text
        below = stop_cleanly(run.proc, timeout=30)
        assert len(below) >= 3  # gunicorn, celery worker, celery beat (and theirs)
        assert not page_ok(run.login_url)
    assert "No directory at" not in (tmp_path / "launcher.log").read_text()


@pytest.mark.timeout(90)
def test_a_second_sigterm_does_not_cut_the_ordered_stop_short(tmp_path: Path) -> None:
    """`kill -TERM -- -<make's group>` reaches the launcher twice: from the kill, and
    from make, which forwards SIGTERM to its child. The second one used to abort the
    stop (exit 130) and take the database down under the running servers."""
    log = tmp_path / "launcher.log"
    with launched(env={"PI_DEMO": "0"}, log=log) as run:
        below = stop_cleanly(run.proc, timeout=30, signals=2)
        assert len(below) >= 3
    assert "Stopping…" in log.read_text()


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
