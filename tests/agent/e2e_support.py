"""End-to-end helpers: a gunicorn child that can be stopped and started on one port,
and pi-style writers for the logs (lock + append; rotation by temp + rename)."""

import contextlib
import json
import os
import socket
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.processes import child_env, running, wait_until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Server:
    """gunicorn on a fixed port against the test database; stop() and start() again."""

    def __init__(self, port: int, log: Path) -> None:
        self.port = port
        self.log = log
        self.url = f"http://127.0.0.1:{port}"
        self._stack: contextlib.ExitStack | None = None

    def start(self) -> None:
        argv = [
            sys.executable, "-m", "gunicorn", "pi_dashboard.wsgi:application",
            "--bind", f"127.0.0.1:{self.port}", "--workers", "2",
            "--timeout", "60", "--graceful-timeout", "2",
        ]  # fmt: skip
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(running(argv, env=child_env(), log=self.log))
        if not wait_until(lambda: port_open(self.port), timeout=30):
            raise RuntimeError(f"gunicorn did not start; see {self.log}")

    def stop(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None


def agent_argv(config: Path) -> list[str]:
    return [sys.executable, "-m", "pi_dashboard.agent", "--config", str(config), "run"]


@contextlib.contextmanager
def pi_lock(path: Path):  # type: ignore[no-untyped-def]
    lock = Path(os.path.realpath(path) + ".lock")
    assert wait_until(lambda: _mkdir(lock), timeout=10, interval=0.02)
    try:
        yield
    finally:
        os.rmdir(lock)


def _mkdir(path: Path) -> bool:
    try:
        os.mkdir(path)
        return True
    except FileExistsError:
        return False


def pi_append(path: Path, lines: list[bytes]) -> None:
    """bounded-jsonl append: under the lock, a plain append."""
    with pi_lock(path), path.open("ab") as fh:
        fh.write(b"".join(line + b"\n" for line in lines))


def pi_rotate(path: Path, keep: int) -> None:
    """bounded-jsonl rotation: the newest `keep` lines to a temp file renamed over."""
    with pi_lock(path):
        lines = path.read_bytes().splitlines()[-keep:]
        tmp = path.with_name(f"{path.name}.{os.getpid()}.0e1f-rotate.tmp")
        tmp.write_bytes(b"".join(line + b"\n" for line in lines))
        os.replace(tmp, path)


def new_records(template: list[bytes], *, start: int, count: int) -> list[bytes]:
    """`count` new, distinct, valid records shaped like `template`'s lines.

    Record `n` (from `start`) gets timestamp 2026-08-19 + n seconds and, for event
    lines, sequence n: callers use disjoint ranges, so every line is new content.
    """
    base = datetime(2026, 8, 19, tzinfo=UTC)
    out = []
    for i in range(count):
        n = start + i
        record: dict[str, Any] = json.loads(template[i % len(template)])
        record["ts"] = (base + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        if "recordId" in record:
            record["recordId"] = f"{record['sessionId']}:{n}"
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        out.append(line.encode())
    return out
