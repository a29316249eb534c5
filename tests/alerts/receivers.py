"""Real receivers on loopback: an HTTP listener for Apprise's json:// and form://
URLs, and an aiosmtpd SMTP server for mailto://."""

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class HttpReceiver:
    port: int
    status: int = 200
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def url(self, scheme: str = "json", path: str = "hook") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/{path}"

    def titles(self) -> list[str]:
        return [str(b.get("title", "")) for b in self.bodies]


@contextmanager
def http_receiver(status: int = 200) -> Iterator[HttpReceiver]:
    receiver = HttpReceiver(port=0, status=status)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"raw": raw.decode("utf-8", "replace")}
            receiver.bodies.append(body)
            self.send_response(receiver.status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class SmtpReceiver:
    port: int
    messages: list[Any] = field(default_factory=list)

    def url(self, to: str = "ops@example.test") -> str:
        return (
            f"mailto://127.0.0.1:{self.port}?to={to}"
            "&from=pi-dashboard@example.test&smtp=127.0.0.1&mode=insecure"
        )


@contextmanager
def smtp_receiver() -> Iterator[SmtpReceiver]:
    receiver = SmtpReceiver(port=0)

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            receiver.messages.append(message_from_bytes(envelope.content))
            return "250 OK"

    with socket.socket() as probe:  # a free port (aiosmtpd cannot take port 0)
        probe.bind(("127.0.0.1", 0))
        receiver.port = probe.getsockname()[1]
    controller = Controller(Handler(), hostname="127.0.0.1", port=receiver.port)
    controller.start()
    try:
        yield receiver
    finally:
        controller.stop()
