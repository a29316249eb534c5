"""A small HTTP client for the dashboard API (http.client: keep-alive, stdlib only)."""

import email.utils
import http.client
import json
import ssl
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pi_dashboard.agent import AGENT_VERSION
from pi_dashboard.agent.errors import (
    ConfigError,
    ServerError,
    ServerUnreachable,
    Unauthorized,
)

API_PREFIX = "/api/v1"
# Errors on a kept-alive connection that the server may have closed meanwhile: the
# request is retried once on a fresh connection (ingest is idempotent on the server).
_STALE_CONNECTION = (
    http.client.RemoteDisconnected,
    BrokenPipeError,
    ConnectionResetError,
)


@dataclass(frozen=True)
class Response:
    status: int
    data: Any
    headers: dict[str, str]


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ApiClient:
    def __init__(self, server: str, token: str, *, timeout: float = 30.0) -> None:
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"server URL must be http(s)://host[:port], got {server!r}"
            )
        self.server = server.rstrip("/")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._base_path = parts.path.rstrip("/") + API_PREFIX
        self._token = token
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._scheme == "https":
                self._conn = http.client.HTTPSConnection(
                    self._host,
                    self._port,
                    timeout=timeout,
                    context=ssl.create_default_context(),
                )
            else:
                self._conn = http.client.HTTPConnection(
                    self._host, self._port, timeout=timeout
                )
        self._conn.timeout = timeout
        if self._conn.sock is not None:
            self._conn.sock.settimeout(timeout)
        return self._conn

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        gzipped: bool = False,
        timeout: float | None = None,
        extra_headers: dict[str, str] | None = None,
    ) -> Response:
        """Send one request; raise a typed error for anything but a 2xx JSON answer."""
        headers = {
            **(extra_headers or {}),
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/json",
            "User-Agent": f"pi-dashboard-agent/{AGENT_VERSION}",
        }
        if content_type:
            headers["Content-Type"] = content_type
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        url = self._base_path + path
        for attempt in (1, 2):
            reused = self._conn is not None and self._conn.sock is not None
            conn = self._connection(timeout or self.timeout)
            try:
                conn.request(method, url, body=body, headers=headers)
                raw = conn.getresponse()
                payload = raw.read()
                resp_headers = {k.lower(): v for k, v in raw.getheaders()}
                if raw.will_close:
                    self.close()
                break
            except _STALE_CONNECTION as exc:
                self.close()
                if reused and attempt == 1:
                    continue
                raise self._unreachable(exc) from None
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                raise self._unreachable(exc) from None
        return self._interpret(raw.status, payload, resp_headers)

    def _unreachable(self, exc: BaseException) -> ServerUnreachable:
        reason = str(exc) or type(exc).__name__
        return ServerUnreachable(f"cannot reach the server at {self.server}: {reason}")

    def _interpret(
        self, status: int, payload: bytes, headers: dict[str, str]
    ) -> Response:
        try:
            data = json.loads(payload) if payload else None
        except ValueError:
            data = None
        detail, code = "", ""
        if isinstance(data, dict):
            detail = str(data.get("detail") or "")
            code = str(data.get("code") or "")
        if status == 401:
            raise Unauthorized(
                f"the server at {self.server} rejected the agent token "
                f"(unknown or revoked){': ' + detail if detail else ''}"
            )
        if not 200 <= status < 300:
            summary = detail or (f"code {code}" if code else "no JSON detail")
            raise ServerError(
                f"{self.server} answered HTTP {status}: {summary}",
                status=status,
                code=code,
                retry_after=parse_retry_after(headers.get("retry-after")),
            )
        if data is None and payload:
            raise ServerError(
                f"{self.server} did not answer with JSON; is this a pi-dashboard URL?",
                status=status,
            )
        return Response(status=status, data=data, headers=headers)

    def get_json(self, path: str, *, timeout: float | None = None) -> Any:
        return self.request("GET", path, timeout=timeout).data

    def post_json(self, path: str, obj: Any) -> Any:
        body = json.dumps(obj, separators=(",", ":")).encode()
        return self.request(
            "POST", path, body=body, content_type="application/json"
        ).data
