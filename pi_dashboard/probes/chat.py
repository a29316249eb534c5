"""One chat completion against an OpenAI-compatible `/chat/completions` (ref. §7.5).

Requests go to the address `outbound.destination_check` approved, never follow
redirects, and are bounded in time (the endpoint's timeout covers the whole reply, not
just each read) and size. Transport failures before any reply (the server cannot be
reached at all) raise `Unreachable` so that the task can retry; everything else is a
reply without the expected call, as pi treats it.
"""

import functools
import json
import logging
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from pi_dashboard.lib import jsonsafe
from pi_dashboard.probes import redact
from pi_dashboard.probes.outbound import Destination

# httpx logs every request URL at INFO; a webhook URL's query string can hold a token.
logging.getLogger("httpx").setLevel(logging.WARNING)

MAX_REPLY_BYTES = 1024 * 1024
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


class Unreachable(httpx.TransportError):
    """The endpoint could not be connected to at all (retry later)."""


@dataclass(frozen=True)
class Target:
    """Everything a completion needs to know about an endpoint (secrets decrypted)."""

    destination: Destination
    model: str
    api_key: str
    headers: dict[str, str]
    timeout: float
    token_param: str
    stream: bool

    @property
    def secrets(self) -> list[str]:
        return [self.api_key, *self.headers.values()]


@dataclass
class NativeCall:
    name: str
    arguments: str


@dataclass
class Reply:
    status: int | None = None
    content: str = ""
    reasoning: str = ""
    tool_calls: list[NativeCall] = field(default_factory=list)
    error: str = ""
    raw: str = ""
    duration_ms: int = 0
    # The exchange broke off (timeout, reset, refused) before a whole reply arrived.
    broke_off: bool = False

    @property
    def answered(self) -> bool:
        """The server sent a whole 2xx reply (whatever it held): it is alive."""
        return (
            self.status is not None and 200 <= self.status < 300 and not self.broke_off
        )

    def text_for_grading(self) -> str:
        """content + non-redacted reasoning, joined with newlines, trimmed (§7.4)."""
        return "\n".join(
            part for part in (self.content, self.reasoning) if part
        ).strip()


_TLS_LOCK = threading.Lock()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


def tls_context() -> ssl.SSLContext:
    # One context per process: building one loads the CA bundle (tens of ms). The
    # lock matters: a thread-pool worker's first tasks all arrive at once, and
    # functools.cache alone would let each of them build its own.
    with _TLS_LOCK:
        return _tls_context()


def http_client(target: Target) -> httpx.Client:
    return httpx.Client(
        verify=tls_context(),
        trust_env=False,  # an HTTP(S)_PROXY would bypass the checked address
        follow_redirects=False,
        timeout=httpx.Timeout(target.timeout),
    )


def request_headers(target: Target) -> dict[str, str]:
    headers = {"Host": target.destination.host_header, **target.headers}
    headers["Content-Type"] = "application/json"
    if target.api_key:
        headers["Authorization"] = f"Bearer {target.api_key}"
    return headers


def request_body(
    target: Target, *, system: str, user: str, max_tokens: int, tools: list[Any]
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": target.model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": user}]},
        ],
        "stream": target.stream,
        target.token_param: max_tokens,
        "temperature": 0,
    }
    if target.stream:
        body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = tools
    return body


def complete(client: httpx.Client, target: Target, body: dict[str, Any]) -> Reply:
    """POST one completion and read the reply; never raises except `Unreachable`."""
    dest = target.destination
    extensions = {"sni_hostname": dest.host} if dest.scheme == "https" else {}
    request = client.build_request(
        "POST",
        dest.url("/chat/completions"),
        headers=request_headers(target),
        content=json.dumps(body).encode(),
        extensions=extensions,
    )
    reply = Reply()
    started = time.monotonic()
    try:
        response = client.send(request, stream=True)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise Unreachable(f"Cannot connect to {dest.display_url('')}: {exc}") from exc
    except httpx.HTTPError as exc:
        reply.error = f"{type(exc).__name__}: {exc}"
        reply.broke_off = True
        reply.duration_ms = int((time.monotonic() - started) * 1000)
        return reply
    try:
        read_reply(response, reply, deadline=started + target.timeout)
    except httpx.HTTPError as exc:
        reply.error = f"{type(exc).__name__}: {exc}"
        reply.broke_off = True
    finally:
        response.close()
        reply.duration_ms = int((time.monotonic() - started) * 1000)
    return reply


def list_models(client: httpx.Client, target: Target) -> list[str] | None:
    """The model ids the server lists at `/models`, or None if it lists none."""
    dest = target.destination
    headers = {k: v for k, v in request_headers(target).items() if k != "Content-Type"}
    try:
        response = client.get(
            dest.url("/models"),
            headers=headers,
            extensions={"sni_hostname": dest.host} if dest.scheme == "https" else {},
            timeout=min(target.timeout, 10.0),
        )
        ok = response.status_code == 200 and len(response.content) <= MAX_REPLY_BYTES
        data = response.json().get("data") if ok else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m] or None


def read_reply(response: httpx.Response, reply: Reply, *, deadline: float) -> None:
    reply.status = response.status_code
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("reply took longer than the endpoint timeout")
        if size > MAX_REPLY_BYTES:
            raise httpx.ReadError(f"reply larger than {MAX_REPLY_BYTES} bytes")
    reply.raw = b"".join(chunks).decode("utf-8", errors="replace")
    if response.is_redirect:
        reply.error = (
            f"HTTP {response.status_code} redirect to "
            f"{response.headers.get('location', '?')} not followed"
        )
    elif response.status_code >= 400:
        reply.error = http_error(response.status_code, reply.raw)
    elif response.headers.get("content-type", "").startswith("text/event-stream"):
        parse_stream(reply.raw, reply)
    else:
        parse_message(reply.raw, reply)


def http_error(status: int, raw: str) -> str:
    """`HTTP 404 model_not_found: …` from an OpenAI-style error body, if any."""
    try:
        error = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        error = None
    if not isinstance(error, dict):
        return f"HTTP {status}"
    code = str(error.get("code") or error.get("type") or "")
    message = str(error.get("message") or "")[:200]
    head = f"HTTP {status} {code}".rstrip()
    return f"{head}: {message}" if message else head


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        return "".join(p.get("text", "") for p in value if isinstance(p, dict))
    return ""


def parse_message(raw: str, reply: Reply) -> None:
    try:
        message = json.loads(raw)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        reply.error = "reply is not a chat completion"
        return
    reply.content = _text(message.get("content"))
    reply.reasoning = "\n".join(
        _text(message.get(f)) for f in REASONING_FIELDS if _text(message.get(f))
    )
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        args = function.get("arguments", "")
        reply.tool_calls.append(
            NativeCall(
                name=str(function.get("name", "")),
                arguments=args if isinstance(args, str) else json.dumps(args),
            )
        )


def parse_stream(raw: str, reply: Reply) -> None:
    content: list[str] = []
    reasoning: dict[str, list[str]] = {f: [] for f in REASONING_FIELDS}
    calls: dict[int, NativeCall] = {}
    for line in raw.split("\n"):
        line = line.strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            event = json.loads(data)
        except ValueError:
            reply.error = "malformed stream event"
            continue
        if isinstance(event, dict) and event.get("error"):
            reply.error = f"stream error: {str(event['error'])[:200]}"
        for choice in (event.get("choices") or []) if isinstance(event, dict) else []:
            delta = choice.get("delta") or {}
            content.append(_text(delta.get("content")))
            for f in REASONING_FIELDS:
                reasoning[f].append(_text(delta.get(f)))
            for tc in delta.get("tool_calls") or []:
                call = calls.setdefault(int(tc.get("index", 0)), NativeCall("", ""))
                function = tc.get("function") or {}
                call.name += function.get("name") or ""
                call.arguments += function.get("arguments") or ""
    reply.content = "".join(content)
    reply.reasoning = "\n".join("".join(v) for v in reasoning.values() if "".join(v))
    reply.tool_calls = [calls[i] for i in sorted(calls)]


def transcript(target: Target, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The exchange as shown to operators: secrets redacted, sizes bounded."""
    secrets = target.secrets
    return {
        "request": {
            "method": "POST",
            "url": target.destination.display_url("/chat/completions"),
            "connected_to": str(target.destination.ip),
            "headers": redact.redact_headers(request_headers(target), secrets),
            "body": json.loads(redact.redact_text(json.dumps(body), secrets)),
        },
        "response": {
            "status": reply.status,
            "answered": reply.answered,
            "body": redact.bound(redact.redact_text(reply.raw, secrets)),
            # The reply as assembled from every event, which the raw body (bounded,
            # so a streamed reply shows only its first tokens) cannot show.
            "assembled": assembled(reply, secrets),
            "error": redact.redact_text(reply.error, secrets),
            "duration_ms": reply.duration_ms,
        },
    }


ASSEMBLED_CHARS = 16_000


def assembled(reply: Reply, secrets: list[str]) -> dict[str, Any]:
    def clean(text: str) -> str:
        # Decoded text can hold NUL or lone surrogates (JSON escapes them in `raw`).
        text = jsonsafe.sanitise_text(redact.redact_text(text, secrets))
        return redact.bound(text, ASSEMBLED_CHARS)

    return {
        "content": clean(reply.content),
        "reasoning": clean(reply.reasoning),
        "tool_calls": [
            {"name": clean(c.name), "arguments": clean(c.arguments)}
            for c in reply.tool_calls[:20]
        ],
    }
