"""Transcripts keep the reply as assembled, not only the first 16 KB of raw events.

A streamed reply spends about 250 bytes of server-sent events per few characters, so
the bounded raw body ends after some 60 tokens (issue 13 item 9). A real SSE server on
loopback streams a long reply whose envelope comes last.
"""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.urls import reverse

from pi_dashboard.probes import redact
from pi_dashboard.probes.models import ProbeRun, Trigger
from pi_dashboard.probes.services import runs
from tests.probes.conftest import logged_in

PROSE = "Let me think about this carefully before I answer. " * 60
ENVELOPE = '<pi:call name="echo">{"data":"pi-calibration-1"}</pi:call>'


class LongStream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        token = (
            "pi-calibration-2" if b"pi-calibration-2" in body else "pi-calibration-1"
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        text = PROSE + ENVELOPE.replace("pi-calibration-1", token)
        for i in range(0, len(text), 4):
            chunk = {"choices": [{"index": 0, "delta": {"content": text[i : i + 4]}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture
def long_stream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), LongStream)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db
def test_the_run_page_shows_the_whole_assembled_reply(
    make_endpoint: Any, long_stream: str, viewer: Any
) -> None:
    endpoint = make_endpoint("long", base_url=long_stream, stream=True)
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger=Trigger.API)
    runs.probe_run_execute(run_id=run.pk, final_attempt=True)
    run.refresh_from_db()
    assert run.verdict == "text-protocol"  # the envelope at the end was read
    exchange = run.exchanges.get(kind="text-protocol:tool-tag", passed=True, seq=2)
    raw = exchange.response["body"]
    assert len(raw) > redact.MAX_TRANSCRIPT_CHARS
    assert "truncated" in raw
    assert ENVELOPE not in raw.replace('\\"', '"')
    assert exchange.response["assembled"]["content"] == PROSE + ENVELOPE

    page = logged_in(viewer).get(reverse("probes:run", args=[run.pk])).content.decode()
    assert "Reply, assembled" in page
    shown = ENVELOPE.replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    assert shown in page
