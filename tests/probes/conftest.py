"""Probe test fixtures: a real scripted model server on loopback, endpoints on it."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.demo.scripted_server import ScriptedServer
from pi_dashboard.probes import semaphore, services
from pi_dashboard.probes.models import Endpoint

API_KEY = "sk-test-0123456789abcdef"


@pytest.fixture(scope="session")
def model_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(0, slow_seconds=3.0, api_key=API_KEY).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _probe_settings(settings: Any) -> None:
    settings.PI_PROBES_ALLOW_PRIVATE = True
    settings.PI_FIELD_ENCRYPTION_KEY = ""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    semaphore.client().delete(semaphore.KEY)


def endpoint_for(
    server: ScriptedServer, behaviour: str, *, stream: bool = False, **extra: Any
) -> Endpoint:
    data = services.EndpointData(
        name=extra.pop("name", f"{behaviour}-{'stream' if stream else 'plain'}"),
        base_url=extra.pop("base_url", server.base_url),
        server_model=extra.pop("server_model", behaviour),
        model_key=extra.pop("model_key", f"scripted/{behaviour}"),
        api_key=extra.pop("api_key", API_KEY),
        timeout_seconds=extra.pop("timeout_seconds", 1.0),
        is_streaming=stream,
        **extra,
    )
    return services.endpoint_create(data=data)


@pytest.fixture
def make_endpoint(model_server: ScriptedServer) -> Any:
    def make(behaviour: str, **extra: Any) -> Endpoint:
        return endpoint_for(model_server, behaviour, **extra)

    return make


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


class Inbox(ThreadingHTTPServer):
    """A webhook receiver that keeps what it was sent."""

    daemon_threads = True

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                inbox.received.append(
                    {"path": self.path, "body": json.loads(self.rfile.read(length))}
                )
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook?token=s3cret-token"


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    server = Inbox()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()
