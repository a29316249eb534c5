"""pi's RPC mode (`<pi_command> --mode rpc`): JSON lines on stdin/stdout (reference §6).

One short-lived pi process per command: send one request with an `id`, read stdout
lines (split on LF only), skip events and other responses, return the matching
response's `data`. Closing stdin shuts pi down.
"""

import contextlib
import itertools
import json
import os
import selectors
import shlex
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_dashboard.agent.config import ENV_AGENT_DIR
from pi_dashboard.agent.errors import AgentError

_ids = itertools.count(1)


# pi's answer when its store lock stays held past its own ~3.3 s of retries.
LOCK_BUSY = "Lock file is already being held"


class RpcError(AgentError):
    def __init__(self, message: str, *, pi_error: str | None = None) -> None:
        super().__init__(message)
        self.pi_error = pi_error  # pi's own `error`, when pi answered one

    @property
    def lock_busy(self) -> bool:
        return LOCK_BUSY in (self.pi_error or "")


def rpc_call(
    *,
    pi_command: str,
    agent_dir: Path,
    command: dict[str, Any],
    timeout: float,
) -> Any:
    """Run one RPC command in a fresh pi process; its `data`, or RpcError."""
    request_id = f"pid-agent-{os.getpid()}-{next(_ids)}"
    argv = [*shlex.split(pi_command), "--mode", "rpc", "--no-session"]
    env = {**os.environ, ENV_AGENT_DIR: str(agent_dir)}
    line = json.dumps({**command, "id": request_id}, ensure_ascii=False) + "\n"
    with tempfile.TemporaryFile() as stderr:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
            )
        except OSError as exc:
            raise RpcError(f"cannot start pi ({argv[0]}): {exc}") from None
        try:
            assert proc.stdin is not None
            proc.stdin.write(line.encode())
            proc.stdin.flush()
            response = _read_response(proc, request_id, timeout)
        except BrokenPipeError:
            response = None
        finally:
            _shutdown(proc)
        if response is None:
            stderr.seek(0)
            tail = stderr.read()[-400:].decode(errors="replace").strip()
            raise RpcError(
                f"pi --mode rpc exited (code {proc.returncode}) without answering "
                f"{command['type']}{': ' + tail if tail else ''}"
            )
    if not response.get("success"):
        error = str(response.get("error"))
        raise RpcError(f"pi {command['type']} failed: {error}", pi_error=error)
    return response.get("data")


def _read_response(
    proc: subprocess.Popen[bytes], request_id: str, timeout: float
) -> dict[str, Any] | None:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RpcError(f"pi did not answer within {timeout:g}s")
            if not sel.select(remaining):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                found = _match(raw, request_id)
                if found is not None:
                    return found


def _match(raw: bytes, request_id: str) -> dict[str, Any] | None:
    try:
        msg = json.loads(raw.rstrip(b"\r"))
    except ValueError:
        return None  # not ours (a log line)
    if (
        isinstance(msg, dict)
        and msg.get("type") == "response"
        and msg.get("id") == request_id
    ):
        return msg
    return None  # an event, or another request's response


def _shutdown(proc: subprocess.Popen[bytes]) -> None:
    for close in (proc.stdin, proc.stdout):
        if close is not None:
            with contextlib.suppress(OSError):
                close.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
