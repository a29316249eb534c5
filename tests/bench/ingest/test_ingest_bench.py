"""Ingest throughput end to end over HTTP, beside a raw COPY of the same rows.

Run on demand (not part of the default run):
    .venv/bin/python -m pytest tests/bench/ingest -s -p no:cacheprovider

A real gunicorn (4 workers) serves the API against the test database; 4 client
threads post 1,000-line event batches. The same rows are then COPYed straight into
the same table (for another host, so that nothing conflicts) in the same run. Both
rates and their ratio are printed; the target is HTTP >= 0.5 x COPY.
"""

import json
import logging
import os
import socket
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection

from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Host
from pi_dashboard.ingest import lines, records
from pi_dashboard.ingest.models import EventRecord
from tests.conftest import PI_FIXTURES
from tests.support.processes import child_env, running, wait_until

CLIENTS = int(os.environ.get("BENCH_CLIENTS", "4"))
BATCHES_PER_CLIENT = 10
BATCH = 1000
WORKERS = 4
FINGERPRINT = {"id": "bench-host-8c-16g", "cpu": "bench", "cores": 8, "totalMemGb": 16}


logging.getLogger("httpx").setLevel(logging.WARNING)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def synthetic_lines(count: int) -> list[bytes]:
    """`count` distinct event lines shaped like the fixtures' (both kinds)."""
    base = [
        json.loads(raw)
        for path in sorted(PI_FIXTURES.glob("*/tool-recovery-events.jsonl"))
        for raw in path.read_bytes().splitlines()
        if raw.strip()
    ]
    start = datetime(2026, 9, 1, tzinfo=UTC)
    out = []
    for n in range(count):
        record = dict(base[n % len(base)])
        record["recordId"] = f"{record['sessionId']}:{100_000 + n}"
        stamp = start + timedelta(seconds=n)
        record["ts"] = stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        out.append(json.dumps(record, separators=(",", ":")).encode())
    return out


def copy_rows(host_id: int, raw_lines: list[bytes]) -> list[tuple[Any, ...]]:
    """The table rows the ingest path would write (built untimed, for COPY)."""
    accepted = []
    for start in range(0, len(raw_lines), BATCH):
        body = b"\n".join(raw_lines[start : start + BATCH])
        good, rejected = lines.lines_check(body, records.event_classify)
        assert not rejected
        accepted += good
    now = datetime.now(UTC)
    rows = []
    for record in accepted:
        prepared = records.event_prepare(record)
        assert isinstance(prepared, records.Prepared)
        rows.append((host_id, None, *prepared.row[1:], now))
    return rows


def timed_copy(rows: list[tuple[Any, ...]]) -> float:
    columns = (
        "host_id, model_id, content_hash, kind, ts, session_id, record_id, tool, "
        "outcome, phase, failure_code, is_text_protocol, payload, original, received_at"
    )
    connection.ensure_connection()
    raw = connection.connection
    started = time.perf_counter()
    sql = f"COPY ingest_eventrecord ({columns}) FROM STDIN"
    with raw.cursor() as cursor, cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)
    raw.commit()
    return time.perf_counter() - started


def timed_http(base_url: str, token: str, batches: list[bytes]) -> float:
    errors: list[str] = []
    per_client = [batches[i::CLIENTS] for i in range(CLIENTS)]

    def client(mine: list[bytes]) -> None:
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/x-ndjson",
        }
        with httpx.Client(base_url=base_url, timeout=120) as http:
            for body in mine:
                response = http.post(
                    "/api/v1/ingest/events", content=body, headers=headers
                )
                if response.status_code != 200 or response.json()["stored"] != BATCH:
                    errors.append(f"{response.status_code} {response.text[:200]}")

    threads = [threading.Thread(target=client, args=(mine,)) for mine in per_client]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    elapsed = time.perf_counter() - started
    assert not errors, errors[:3]
    return elapsed


@pytest.mark.timeout(600)
def test_http_ingest_against_copy(transactional_db: None, tmp_path: Path) -> None:
    if not PI_FIXTURES.is_dir():
        pytest.skip("shared pi fixtures not found")
    total = CLIENTS * BATCHES_PER_CLIENT * BATCH
    raw_lines = synthetic_lines(total)
    batches = [
        b"\n".join(raw_lines[i : i + BATCH]) + b"\n" for i in range(0, total, BATCH)
    ]

    copy_host = Host.objects.create(pi_id="bench-copy-host")
    rows = copy_rows(copy_host.pk, raw_lines)
    copy_seconds = timed_copy(rows)

    agent, token = fleet_services.agent_issue(name="bench", actor="bench")
    fleet_services.agent_heartbeat(
        agent=agent, beat={"hostname": "bench", "host": FINGERPRINT}
    )
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "gunicorn",
        "pi_dashboard.wsgi",
        "-w",
        str(WORKERS),
        "-b",
        f"127.0.0.1:{port}",
        "--timeout",
        "120",
    ]
    env = child_env(PI_INGEST_MAX_CONCURRENT="4", DJANGO_ALLOWED_HOSTS="127.0.0.1")
    base_url = f"http://127.0.0.1:{port}"
    with running(argv, env=env, log=tmp_path / "gunicorn.log"):
        assert wait_until(lambda: _up(base_url), timeout=30), (
            tmp_path / "gunicorn.log"
        ).read_text()
        http_seconds = timed_http(base_url, token, batches)

    stored = EventRecord.objects.filter(host__pi_id=FINGERPRINT["id"]).count()
    assert stored == total
    assert EventRecord.objects.filter(host=copy_host).count() == total
    copy_rate, http_rate = total / copy_seconds, total / http_seconds
    print(
        f"\ningest bench: {total} event rows, {CLIENTS} clients x {BATCH}-line "
        "batches, "
        f"gunicorn {WORKERS} workers\n"
        f"  raw COPY : {copy_rate:10.0f} rows/s ({copy_seconds:.2f} s)\n"
        f"  HTTP     : {http_rate:10.0f} rows/s ({http_seconds:.2f} s)\n"
        f"  ratio    : {http_rate / copy_rate:.2f} (target >= 0.5)"
    )


def _up(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/api/v1/schemas/", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
