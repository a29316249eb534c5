"""PostgreSQL unreachable (issue 9 item 7): a real gunicorn pointed at a closed port.

Never the machine's shared PostgreSQL: the server gets a DATABASE_URL on a port
nothing listens on, which is what a stopped database looks like to it.
"""

import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.agent.e2e_support import free_port, port_open
from tests.support.processes import child_env, running, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def _get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:  # noqa: S310 (loopback)
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _post(url: str, body: bytes, **headers: str) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:  # noqa: S310 (loopback)
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_api_and_pages_answer_503_with_retry_after(tmp_path: Path) -> None:
    dead_db = f"postgresql://postgres@127.0.0.1:{free_port()}/gone"
    port = free_port()
    argv = [
        sys.executable, "-m", "gunicorn", "pi_dashboard.wsgi:application",
        "--bind", f"127.0.0.1:{port}", "--workers", "1", "--timeout", "60",
    ]  # fmt: skip
    env = child_env(DATABASE_URL=dead_db, DJANGO_SECRET_KEY="db-down-test")
    with running(argv, env=env, log=tmp_path / "server.log"):
        assert wait_until(lambda: port_open(port), timeout=30), (
            tmp_path / "server.log"
        ).read_text()
        base = f"http://127.0.0.1:{port}"
        auth = {"Authorization": "Bearer pid_op_whatever"}
        for status, headers, body in (
            _get(f"{base}/api/v1/hosts", **auth),
            _post(
                f"{base}/api/v1/ingest/events",
                b"{}\n",
                **{"Content-Type": "application/x-ndjson"},
                Authorization="Bearer pid_ag_whatever",
            ),
        ):
            assert status == 503, body[:300]
            assert headers["Retry-After"] == "30"
            assert b'"code":"database_down"' in body.replace(b" ", b"")
        # A page that reads the session (so the database) gets the short page.
        status, headers, body = _get(f"{base}/", Cookie="sessionid=" + "a" * 32)
        assert status == 503, body[:300]
        assert headers["Retry-After"] == "30"
        assert b"database cannot be reached" in body
