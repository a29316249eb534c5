"""One line the server fails on must not block the lines after it (issue 9 item 4).

A real agent process ships to a real gunicorn through a loopback proxy that answers
500 for any ingest batch holding a marker line: the one thing the fixed server can
no longer be made to do. The agent must bisect the batch, quarantine that line on
disk, store every other line, and report it (status, heartbeat `ingest`).
"""

import gzip
import http.client
import json
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.agent.config import config_write
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.ingest.models import EventRecord
from tests.agent.conftest import AMD, seed_state_dir
from tests.agent.e2e_support import Server, agent_argv, free_port, new_records
from tests.support.processes import child_env, running, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

MARKER = b"POISON-5XX-MARKER"
EVENTS = "tool-recovery-events.jsonl"


class PoisonProxy:
    """Forwards to `upstream`; a 500 for ingest batches that hold MARKER."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removeprefix("http://")
        self.heartbeats: list[dict[str, Any]] = []
        self.poisoned_answers = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._forward(b"")

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                plain = body
                if self.headers.get("Content-Encoding") == "gzip":
                    plain = gzip.decompress(body)
                if self.path.endswith("/agent/heartbeat"):
                    proxy.heartbeats.append(json.loads(plain))
                if "/ingest/" in self.path and MARKER in plain:
                    proxy.poisoned_answers += 1
                    self._answer(500, b'{"detail":"Internal error.","code":"x"}')
                    return
                self._forward(body)

            def _forward(self, body: bytes) -> None:
                conn = http.client.HTTPConnection(proxy.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k != "Host"}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                self._answer(resp.status, resp.read())
                conn.close()

            def _answer(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> "PoisonProxy":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    server = Server(free_port(), tmp_path / "server.log")
    server.start()
    yield server
    server.stop()


def test_poisoned_line_is_quarantined_and_the_rest_stored(
    transactional_db: None, tmp_path: Path, pi_fixtures: Path, server: Server
) -> None:
    state = seed_state_dir(pi_fixtures, AMD, tmp_path / "pi")
    events = state / EVENTS
    template = events.read_bytes().splitlines()[:50]
    fresh = new_records(template, start=0, count=51)  # 2026-08-19T00:00:00 + n s
    poison = json.loads(fresh[25])
    poison["nextAction"] = MARKER.decode()
    lines = [*fresh[:25], json.dumps(poison).encode(), *fresh[26:]]
    with events.open("ab") as fh:
        fh.write(b"".join(line + b"\n" for line in lines))
    _agent, token = fleet_services.agent_issue(name="poisoned", actor="test")
    fp = json.loads((pi_fixtures / AMD / "model-adaptation.json").read_text())
    config = tmp_path / "agent.json"
    data_dir = tmp_path / "agent-data"
    with PoisonProxy(server.url) as proxy:
        config_write(
            config,
            {
                "server": proxy.url,
                "token": token,
                "state_dir": str(state),
                "data_dir": str(data_dir),
                "host_override": next(iter(fp["hosts"][AMD].values()))["host"],
                "scan_interval": 0.2,
                "heartbeat_interval": 1,
            },
        )
        new_since = datetime(2026, 8, 19, tzinfo=UTC)
        with running(agent_argv(config), env=child_env(), log=tmp_path / "agent.log"):
            assert wait_until(
                lambda: EventRecord.objects.filter(ts__gte=new_since).count() == 50,
                timeout=90,
            ), (tmp_path / "agent.log").read_text()[-3000:]
            assert wait_until(
                lambda: any(
                    beat.get("ingest", {}).get("quarantined_lines") == 1
                    for beat in proxy.heartbeats
                ),
                timeout=20,
            ), proxy.heartbeats[-1:]
    # Every good line (the fixture's and the new ones) went through; not the bad one.
    assert not EventRecord.objects.filter(payload__nextAction=MARKER.decode()).exists()
    assert proxy.poisoned_answers >= 3
    held = [
        json.loads(x)
        for x in (data_dir / "quarantine" / "lines.jsonl").read_text().splitlines()
    ]
    assert len(held) == 1
    assert held[0]["kind"] == "events"
    assert MARKER.decode() in held[0]["line"]
    beat = next(b for b in proxy.heartbeats if b["ingest"]["quarantined_lines"] == 1)
    assert "quarantined" in beat["ingest"]["last_problem"]
    status = subprocess.run(
        [*agent_argv(config)[:-1], "status", "--json"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=30,
        check=True,
    )
    report = json.loads(status.stdout)
    assert report["quarantine"]["lines"] == 1
    assert report["ingest"]["quarantined_lines"] == 1
    text = subprocess.run(
        [*agent_argv(config)[:-1], "status"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=30,
        check=True,
    ).stdout
    assert "quarantine:  1 line(s)" in text
