"""Ingest throughput end to end over HTTP, beside a raw COPY of the same rows.

Run on demand (not part of the default run):
    .venv/bin/python -m pytest tests/bench/ingest -s -p no:cacheprovider

A real gunicorn serves the API against the test database; 4 client threads post
1,000-line event batches. The same rows are COPYed straight into the same table (for
other hosts, so that nothing conflicts), measured the same way: 4 connections, each
1,000-row batch its own COPY and commit, rows built before the clock starts. Both
sides are warmed up first (workers import and connect, validators compile), and
each of several rounds uses fresh rows, alternating which side runs first (the
table grows). Per-round rates and the median ratio are printed; target >= 0.5.

Both sides keep this box's cores busy, so the ratio is about CPU: the CPU each side
spends per 1,000 rows is printed too, by role (this process's client threads, the
web server's processes, PostgreSQL's sessions and its background processes).

Knobs: BENCH_CLIENTS (4), BENCH_ROUNDS (5), BENCH_WORKERS (= clients) and
BENCH_HOSTS (1): the clients post as that many agents, each bound to its own pi
host (4 = one agent per client, as in a fleet; more hosts mean more rollup cells).
"""

import contextlib
import json
import logging
import os
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Host
from pi_dashboard.ingest import lines, records, store
from pi_dashboard.ingest.models import EventRecord
from tests.conftest import PI_FIXTURES
from tests.support import processes
from tests.support.processes import child_env, running, wait_until

CLIENTS = int(os.environ.get("BENCH_CLIENTS", "4"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
BATCHES_PER_CLIENT = 10
BATCH = 1000
# One sync worker per concurrent client. Ingest is CPU-bound, but a sync worker sits
# idle for about half of each batch while PostgreSQL inserts and commits; with one
# worker per core (2 here) the box idles then (measured under load: 2 workers 0.25,
# 3 workers 0.32, 4 workers 0.39 of COPY). More workers than clients would only wait.
WORKERS = int(os.environ.get("BENCH_WORKERS", str(CLIENTS)))
HOSTS = int(os.environ.get("BENCH_HOSTS", "1"))
COLUMNS = (
    "host_id, model_id, content_hash, kind, ts, session_id, record_id, tool, "
    "outcome, phase, failure_code, is_text_protocol, payload, original, received_at"
)

logging.getLogger("httpx").setLevel(logging.WARNING)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def synthetic_lines(count: int, offset: int = 0) -> list[bytes]:
    """`count` distinct event lines shaped like the fixtures' (both kinds)."""
    base = [
        json.loads(raw)
        for path in sorted(PI_FIXTURES.glob("*/tool-recovery-events.jsonl"))
        for raw in path.read_bytes().splitlines()
        if raw.strip()
    ]
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    out = []
    for n in range(offset, offset + count):
        record = dict(base[n % len(base)])
        record["recordId"] = f"{record['sessionId']}:{100_000 + n}"
        stamp = start + timedelta(seconds=n)
        record["ts"] = stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        out.append(json.dumps(record, separators=(",", ":")).encode())
    return out


def copy_chunks(
    host_ids: list[int], raw_lines: list[bytes]
) -> list[list[tuple[Any, ...]]]:
    """The table rows the ingest path would write, in 1,000-row batches (untimed).

    Batch k goes to client k mod CLIENTS on both sides; its rows get that client's
    host, as its agent's would over HTTP.
    """
    now = datetime.now(UTC)
    chunks = []
    for k, start in enumerate(range(0, len(raw_lines), BATCH)):
        body = b"\n".join(raw_lines[start : start + BATCH])
        good, rejected = lines.lines_check(body, records.event_classify)
        assert not rejected
        prepared = [records.event_prepare(record) for record in good]
        rows = [p for p in prepared if isinstance(p, records.Prepared)]
        models = store.models_ensure(p.model_key for p in rows if p.model_key)
        host_id = host_ids[k % CLIENTS % len(host_ids)]
        chunks.append(
            [(host_id, models.get(p.model_key or ""), *p.row[1:], now) for p in rows]
        )
    return chunks


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_by_role(web_pid: int) -> dict[str, float]:
    """CPU seconds used so far by PostgreSQL, the web server's processes and us."""
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    names: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # exited meanwhile
        pid = int(text.split(" ", 1)[0])
        names[pid] = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        parents[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def under_web(pid: int) -> bool:
        while pid > 1:
            if pid == web_pid:
                return True
            pid = parents.get(pid, 0)
        return False

    roles = {"client": used.get(os.getpid(), 0.0), "web": 0.0, "db": 0.0, "db-bg": 0.0}
    for pid, seconds in used.items():
        if names[pid] == "postgres":
            roles["db" if _is_session(pid) else "db-bg"] += seconds
        elif under_web(pid):
            roles["web"] += seconds
    return roles


def _is_session(pid: int) -> bool:
    """A PostgreSQL backend serving a client, not autovacuum, WAL or checkpoints."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"(" in title  # "postgres: … user db 127.0.0.1(port) idle"


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {role: after[role] - before[role] for role in before}


def run_clients(
    work: list[Any], job: Callable[[int, list[Any], list[str]], None]
) -> float:
    """Split `work` over CLIENTS threads, start them together; wall seconds."""
    per_client = [work[i::CLIENTS] for i in range(CLIENTS)]
    errors: list[str] = []
    gate = threading.Barrier(CLIENTS + 1)

    def client(index: int, mine: list[Any]) -> None:
        gate.wait(60)
        try:
            job(index, mine, errors)
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(repr(exc))

    threads = [
        threading.Thread(target=client, args=(n, mine))
        for n, mine in enumerate(per_client)
    ]
    for thread in threads:
        thread.start()
    gate.wait(60)
    started = time.perf_counter()
    for thread in threads:
        thread.join(300)
    elapsed = time.perf_counter() - started
    assert not errors, errors[:3]
    return elapsed


def timed_copy(
    conns: list[psycopg.Connection], chunks: list[list[tuple[Any, ...]]]
) -> float:
    """COPY each chunk on its own commit, one connection per client (open already,
    like the web workers' connections, so that their CPU is measured)."""
    sql = f"COPY ingest_eventrecord ({COLUMNS}) FROM STDIN"

    def job(index: int, mine: list[list[tuple[Any, ...]]], errors: list[str]) -> None:
        conn = conns[index]
        for chunk in mine:
            with conn.cursor() as cursor, cursor.copy(sql) as copy:
                for row in chunk:
                    copy.write_row(row)
            conn.commit()

    return run_clients(chunks, job)


@contextlib.contextmanager
def copy_connections() -> Iterator[list[psycopg.Connection]]:
    conns = [psycopg.connect(processes.test_database_url()) for _ in range(CLIENTS)]
    try:
        yield conns
    finally:
        for conn in conns:
            conn.close()


def timed_http(base_url: str, tokens: list[str], batches: list[bytes]) -> float:
    """Client n posts as agent n (mod the number of agents), one batch at a time."""

    def job(index: int, mine: list[bytes], errors: list[str]) -> None:
        headers = {
            "Authorization": f"Bearer {tokens[index % len(tokens)]}",
            "Content-Type": "application/x-ndjson",
        }
        with httpx.Client(base_url=base_url, timeout=120) as http:
            for body in mine:
                response = http.post(
                    "/api/v1/ingest/events", content=body, headers=headers
                )
                if response.status_code != 200 or response.json()["stored"] != BATCH:
                    errors.append(f"{response.status_code} {response.text[:200]}")

    return run_clients(batches, job)


def batches_of(raw_lines: list[bytes]) -> list[bytes]:
    return [
        b"\n".join(raw_lines[i : i + BATCH]) + b"\n"
        for i in range(0, len(raw_lines), BATCH)
    ]


def gunicorn_argv(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "pi_dashboard.wsgi",
        *("-w", str(WORKERS), "-b", f"127.0.0.1:{port}", "--timeout", "120"),
    ]


@pytest.mark.timeout(900)
def test_http_ingest_against_copy(transactional_db: None, tmp_path: Path) -> None:
    if not PI_FIXTURES.is_dir():
        pytest.skip("shared pi fixtures not found")
    total = CLIENTS * BATCHES_PER_CLIENT * BATCH
    tokens = [agent_enrolled(f"bench-{n}") for n in range(HOSTS)]
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = child_env(PI_INGEST_MAX_CONCURRENT="4", DJANGO_ALLOWED_HOSTS="127.0.0.1")
    log = tmp_path / "gunicorn.log"
    figures: list[tuple[float, float]] = []
    cpu: dict[str, list[dict[str, float]]] = {"COPY": [], "HTTP": []}
    with (
        running(gunicorn_argv(port), env=env, log=log) as web,
        copy_connections() as conns,
    ):

        def measured(side: str, run: Callable[[], float]) -> float:
            before = cpu_by_role(web.pid)
            seconds = run()
            cpu[side].append(cpu_delta(before, cpu_by_role(web.pid)))
            return seconds

        assert wait_until(lambda: _up(base_url), timeout=30), log.read_text()
        warm = synthetic_lines(2 * CLIENTS * BATCH, offset=10_000_000)
        timed_http(base_url, tokens, batches_of(warm))
        # Like the agents' hosts, the COPY side's hosts keep their rows from round to
        # round: both sides insert into indexes that grow alike.
        host_ids = copy_hosts()
        timed_copy(conns, copy_chunks(host_ids, warm))
        for round_ in range(ROUNDS):
            raw_lines = synthetic_lines(total, offset=round_ * total)
            chunks = copy_chunks(host_ids, raw_lines)
            bodies = batches_of(raw_lines)
            sides = {
                "COPY": lambda chunks=chunks: timed_copy(conns, chunks),
                "HTTP": lambda bodies=bodies: timed_http(base_url, tokens, bodies),
            }
            order = ["HTTP", "COPY"] if round_ % 2 else ["COPY", "HTTP"]
            seconds = {side: measured(side, sides[side]) for side in order}
            copied = EventRecord.objects.filter(host_id__in=host_ids).count()
            assert copied == total * (round_ + 1) + len(warm)
            figures.append((total / seconds["COPY"], total / seconds["HTTP"]))
    stored = EventRecord.objects.filter(host__pi_id__startswith="bench-host-").count()
    assert stored == total * ROUNDS + len(warm)
    _report(total, figures, cpu)


def agent_enrolled(name: str) -> str:
    """A new agent bound to its own pi host; its token."""
    agent, token = fleet_services.agent_issue(name=name, actor="bench")
    host = {"id": f"bench-host-{name}", "cpu": "bench", "cores": 8, "totalMemGb": 16}
    fleet_services.agent_heartbeat(agent=agent, beat={"hostname": name, "host": host})
    return token


def copy_hosts() -> list[int]:
    """Hosts for the COPY side's rows, as many as the HTTP side's agents."""
    return [Host.objects.create(pi_id=f"bench-copy-{n}").pk for n in range(HOSTS)]


def _report(
    total: int,
    figures: list[tuple[float, float]],
    cpu: dict[str, list[dict[str, float]]],
) -> None:
    print(
        f"\ningest bench: {ROUNDS} rounds x {total} event rows, {CLIENTS} clients "
        f"as {HOSTS} agent(s) (one pi host each) x "
        f"{BATCH}-line batches, gunicorn {WORKERS} sync workers, "
        f"loadavg {Path('/proc/loadavg').read_text().strip()}"
    )
    batches = total / BATCH
    for n, (copy_rate, http_rate) in enumerate(figures, start=1):
        web, db = (cpu["HTTP"][n - 1][role] * 1000 / batches for role in ("web", "db"))
        print(
            f"  round {n}: COPY {copy_rate:8.0f} rows/s  HTTP {http_rate:8.0f} rows/s"
            f"  ratio {http_rate / copy_rate:.2f}  (HTTP web {web:4.1f} db {db:4.1f})"
        )
    ratios = [http / copy for copy, http in figures]
    print(
        f"  median : COPY {statistics.median(c for c, _ in figures):8.0f} rows/s  "
        f"HTTP {statistics.median(h for _, h in figures):8.0f} rows/s  "
        f"ratio {statistics.median(ratios):.2f} (target >= 0.5)"
    )
    # Both sides are CPU-bound on a small box: where each spends it explains the ratio.
    print("  CPU ms per 1,000 rows (all rounds):")
    for side, deltas in cpu.items():
        per_batch = {
            role: 1000 * sum(d[role] for d in deltas) / (ROUNDS * total / BATCH)
            for role in ("client", "web", "db", "db-bg")
        }
        parts = "  ".join(f"{role} {ms:5.1f}" for role, ms in per_batch.items())
        print(f"    {side}: {parts}  total {sum(per_batch.values()):5.1f}")


def _up(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/api/v1/schemas/", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
