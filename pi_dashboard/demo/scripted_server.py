"""A scripted OpenAI-compatible model server, for tests, the benchmark and the demo.

`python -m pi_dashboard.demo.scripted_server --port 8765 [--latency 0.3]`

The model id picks the behaviour: `<behaviour>[@<latency ms>][#<anything>]`, e.g.
`native-correct`, `text-tool-call@300`, `garbage#17`. Behaviours:

- native-correct: provider-native calls with the right arguments (verdict native)
- native-echo-only: no read call, a correct native echo call; prose for calibration
- native-wrong-args: native calls with wrong arguments; prose for calibration
- text-tool-tag / text-tool-call / text-fenced-json / text-function-xml: no native
  calls; a correct envelope in that dialect, but only when primed for that dialect
  (pi's parser reads every dialect, so a model answering in any dialect would pass at
  the first rung)
- text-sloppy-json: tool-tag envelope with single-quoted, bare-key JSON and a trailing
  comma, which pi does not repair (verdict none)
- envelope-in-reasoning_content: empty content, the envelope in reasoning_content
- garbage, empty, http-500, slow (sleeps --slow-seconds before answering)
- drifting: alternates native-correct and text-tool-tag on every probe (for drift demos)
- redirect: answers 307 to a cloud metadata URL (a probe must not follow it)

Streaming (`stream: true`) answers with server-sent events, splitting content, reasoning
and tool-call arguments over several chunks as real servers do.
"""

import argparse
import contextlib
import json
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pi_dashboard.probes import textproto

BEHAVIOURS = (
    "native-correct",
    "native-echo-only",
    "native-wrong-args",
    "text-tool-tag",
    "text-tool-call",
    "text-fenced-json",
    "text-function-xml",
    "text-sloppy-json",
    "envelope-in-reasoning_content",
    "garbage",
    "empty",
    "http-500",
    "slow",
    "drifting",
    "redirect",
)
DIALECT_OF = {f"text-{v}": v for v in textproto.VARIANTS}
PATH = re.compile(r'path exactly "([^"]*)"')
DATA = re.compile(r'data exactly "([^"]*)"')


class Answer:
    def __init__(
        self,
        content: str = "",
        reasoning: str = "",
        calls: list[tuple[str, Any]] | None = None,
        status: int = 200,
    ) -> None:
        self.content = content
        self.reasoning = reasoning
        self.calls = calls or []
        self.status = status


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def primed_variant(system: str) -> str:
    line = system.split("\n")[1] if "\n" in system else ""
    if line.startswith("<pi:call"):
        return textproto.TOOL_TAG
    if line.startswith("<tool_call>"):
        return textproto.TOOL_CALL
    if line.startswith("```tool_call"):
        return textproto.FENCED_JSON
    if line.startswith("<function"):
        return textproto.FUNCTION_XML
    return ""


class Script:
    """Decides the answer of one behaviour to one request."""

    def __init__(self) -> None:
        self.drift_counter: dict[str, int] = {}
        self.lock = threading.Lock()

    def answer(self, behaviour: str, model: str, body: dict[str, Any]) -> Answer:
        messages = body.get("messages") or [{}]
        system = message_text(messages[0]) if messages[0].get("role") != "user" else ""
        user = message_text(messages[-1])
        if behaviour == "drifting":
            behaviour = self._drift(model, user)
        if behaviour == "http-500":
            return Answer(status=500)
        if behaviour == "empty":
            return Answer()
        if behaviour == "garbage":
            return Answer(
                content='}{<pi:call name=echo>{{"data": <tool_call>\x00%$#',
                calls=[("read", '{"path": ')],
            )
        if user.startswith("Native tool-call capability probe: task-scale read"):
            return self._native(behaviour, "read", "path", PATH, user)
        if user.startswith("Native tool-call capability probe: echo-only"):
            return self._native(behaviour, "echo", "data", DATA, user)
        if user.startswith("Text tool protocol calibration trial"):
            return self._calibration(behaviour, primed_variant(system), user)
        return Answer(content="Hello from the scripted model server.")

    def _drift(self, model: str, user: str) -> str:
        with self.lock:
            if "task-scale read" in user:
                self.drift_counter[model] = self.drift_counter.get(model, 0) + 1
            count = self.drift_counter.get(model, 1)
        return "native-correct" if count % 2 == 1 else "text-tool-tag"

    def _native(
        self, behaviour: str, tool: str, arg: str, pattern: re.Pattern[str], user: str
    ) -> Answer:
        match = pattern.search(user)
        wanted = match.group(1) if match else ""
        if behaviour in {"native-correct", "slow"}:
            return Answer(content="", calls=[(tool, {arg: wanted})])
        if behaviour == "native-echo-only":
            if tool == "echo":
                return Answer(calls=[("echo", {"data": wanted})])
            return Answer(content="I cannot read files.")
        if behaviour == "native-wrong-args":
            return Answer(calls=[(tool, {arg: wanted + "-wrong"})])
        if behaviour == "envelope-in-reasoning_content":
            return Answer(reasoning="The user wants a tool call; I have no tools.")
        # Text-protocol models write prose instead of a native call.
        return Answer(content=f"I would call {tool} with {arg}={wanted!r}.")

    def _calibration(self, behaviour: str, primed: str, user: str) -> Answer:
        match = DATA.search(user)
        token = match.group(1) if match else ""
        if behaviour in {"native-correct", "slow", "text-tool-tag"}:
            return Answer(
                content=textproto.envelope(
                    primed or "tool-tag", "echo", {"data": token}
                )
            )
        if behaviour in DIALECT_OF:
            if primed == DIALECT_OF[behaviour]:
                return Answer(
                    content=textproto.envelope(primed, "echo", {"data": token})
                )
            return Answer(content="I do not know that format.")
        if behaviour == "text-sloppy-json":
            return Answer(
                content=f"Sure.\n<pi:call name=\"echo\">{{data: '{token}',}}</pi:call>"
            )
        if behaviour == "envelope-in-reasoning_content":
            env = textproto.envelope(textproto.TOOL_TAG, "echo", {"data": token})
            return Answer(content="", reasoning=f"I must answer with:\n{env}")
        return Answer(content="OK.")


def completion(model: str, answer: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.content or None}
    if answer.reasoning:
        message["reasoning_content"] = answer.reasoning
    if answer.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for i, (name, args) in enumerate(answer.calls)
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if answer.calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_events(model: str, answer: Answer) -> list[dict[str, Any]]:
    base: dict[str, Any] = {
        "id": "chatcmpl-s",
        "object": "chat.completion.chunk",
        "model": model,
    }
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": p} for p in pieces(answer.reasoning)]
    deltas += [{"content": p} for p in pieces(answer.content)]
    for i, (name, args) in enumerate(answer.calls):
        raw = args if isinstance(args, str) else json.dumps(args)
        half = len(raw) // 2
        head = {"index": i, "id": f"call_{i}", "type": "function"}
        deltas.append(
            {
                "tool_calls": [
                    {**head, "function": {"name": name, "arguments": raw[:half]}}
                ]
            }
        )
        deltas.append(
            {"tool_calls": [{"index": i, "function": {"arguments": raw[half:]}}]}
        )
    events = [{**base, "choices": [{"index": 0, "delta": d}]} for d in deltas]
    finish = "tool_calls" if answer.calls else "stop"
    events.append(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    )
    events.append({**base, "choices": [], "usage": {"total_tokens": 15}})
    return events


class Handler(BaseHTTPRequestHandler):
    server: "ScriptedServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return  # keep test output quiet

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": b, "object": "model"} for b in BEHAVIOURS]
            return self._json(200, {"object": "list", "data": data})
        self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            return self._json(400, {"error": {"message": "invalid JSON"}})
        self.server.record(self, body)
        with self.server.concurrency():
            self._complete(body)

    def _complete(self, body: dict[str, Any]) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": {"message": "not found"}})
        key = self.server.api_key
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            return self._json(401, {"error": {"message": "invalid api key"}})
        model = str(body.get("model", ""))
        behaviour, latency = parse_model(model, self.server.latency)
        if behaviour not in BEHAVIOURS:
            return self._json(404, model_not_found(model))
        time.sleep(self.server.slow_seconds if behaviour == "slow" else latency)
        if behaviour == "redirect":
            self.send_response(307)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        answer = self.server.script.answer(behaviour, model, body)
        if answer.status != 200:
            return self._json(answer.status, {"error": {"message": "scripted failure"}})
        if body.get("stream"):
            return self._stream(model, answer)
        self._json(200, completion(model, answer))

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, model: str, answer: Answer) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for event in stream_events(model, answer):
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def model_not_found(model: str) -> dict[str, Any]:
    """OpenAI's answer for a model it does not serve (llama.cpp and vLLM alike)."""
    return {
        "error": {
            "message": f"The model `{model}` does not exist",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }


def parse_model(model: str, default_latency: float) -> tuple[str, float]:
    name = model.split("#", 1)[0]
    behaviour, _, ms = name.partition("@")
    try:
        return behaviour, float(ms) / 1000 if ms else default_latency
    except ValueError:
        return behaviour, default_latency


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(
        self,
        port: int = 0,
        *,
        latency: float = 0.0,
        slow_seconds: float = 10.0,
        api_key: str = "",
        host: str = "127.0.0.1",
    ) -> None:
        super().__init__((host, port), Handler)
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.api_key = api_key
        self.script = Script()
        # The last requests seen (headers and body), for tests to inspect.
        self.requests: deque[dict[str, Any]] = deque(maxlen=200)
        # Completions being answered now, and the most seen at once (a llama.cpp
        # server aborts a stream when a second request arrives).
        self.in_flight = self.max_in_flight = 0
        self._count_lock = threading.Lock()

    @contextlib.contextmanager
    def concurrency(self) -> Iterator[None]:
        with self._count_lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._count_lock:
                self.in_flight -= 1

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out hang up mid-reply (the `slow` behaviour): not an error.
        return

    def record(self, handler: Handler, body: dict[str, Any]) -> None:
        self.requests.append(
            {"path": handler.path, "headers": dict(handler.headers), "body": body}
        )

    def start(self) -> "ScriptedServer":
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m pi_dashboard.demo.scripted_server")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per reply")
    parser.add_argument("--slow-seconds", type=float, default=10.0)
    parser.add_argument("--api-key", default="", help="require this bearer key")
    args = parser.parse_args()
    server = ScriptedServer(
        args.port,
        latency=args.latency,
        slow_seconds=args.slow_seconds,
        api_key=args.api_key,
        host=args.host,
    )
    print(f"scripted model server on {server.base_url}", flush=True)  # noqa: T201
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
