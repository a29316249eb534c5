"""Snapshots, command creations and acks at once never deadlock into a 5xx (9.8).

Real PostgreSQL, one connection per thread, committed transactions: the lock order
(host, then its host × model rows by id) and the deadlock retry are what is tested.
"""

import copy
import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from pi_dashboard.control.models import Command
from tests.control.conftest import AMD, make_operator_token
from tests.ingest.support import AgentClient, fingerprint_of

ROUNDS = 25
pytestmark = pytest.mark.django_db(transaction=True)


def variants(shared: dict[str, Any]) -> list[bytes]:
    """Two versions of the AMD bucket, each touching every model's rules."""
    bucket = shared["hosts"][AMD]
    full = json.dumps({"version": 1, "hosts": {AMD: bucket}}).encode()
    fewer = copy.deepcopy(bucket)
    for entry in fewer.values():
        entry["profile"]["rules"] = entry["profile"]["rules"][1:]
    return [full, json.dumps({"version": 1, "hosts": {AMD: fewer}}).encode()]


def run_all(workers: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded(work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=guarded, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


def test_concurrent_snapshots_and_commands_answer_no_5xx(
    pi_fixtures: Path, operator: Any
) -> None:
    shared = json.loads((pi_fixtures / "model-adaptation.json").read_bytes())
    bucket = shared["hosts"][AMD]
    agent = AgentClient.enroll("amd-busy")
    agent.client = Client(raise_request_exception=False)
    assert agent.heartbeat(fingerprint_of(pi_fixtures / AMD)).status_code == 200
    bodies = variants(shared)
    assert agent.snapshot(bodies[0], seq=0).status_code == 200
    token = make_operator_token(operator)
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def note(status: int) -> None:
        with lock:
            statuses[status] += 1

    def snapshots() -> None:
        for n in range(1, ROUNDS * 2):
            note(agent.snapshot(bodies[n % 2], seq=n).status_code)

    def creations(key: str) -> Callable[[], None]:
        rules = [r["mode"] for r in bucket[key]["profile"]["rules"]]
        client = Client(raise_request_exception=False)

        def work() -> None:
            for n in range(ROUNDS):
                body = {
                    "host": AMD,
                    "model": key,
                    "kind": "remove_rule" if n % 3 else "probe",
                    "params": {"mode": rules[n % len(rules)]} if n % 3 else {},
                }
                response = client.post(
                    "/api/v1/commands",
                    json.dumps(body),
                    content_type="application/json",
                    HTTP_AUTHORIZATION=f"Bearer {token}",
                )
                note(response.status_code)

        return work

    def acks() -> None:
        client = Client(raise_request_exception=False)
        headers = {"HTTP_AUTHORIZATION": f"Bearer {agent.token}"}
        for _ in range(ROUNDS):
            pulled = client.get("/api/v1/agent/commands?wait=0", **headers)
            note(pulled.status_code)
            for command in pulled.json().get("commands", [])[:5]:
                answer = client.post(
                    f"/api/v1/agent/commands/{command['id']}/ack",
                    json.dumps({"status": "applied", "result": {"removed": True}}),
                    content_type="application/json",
                    **headers,
                )
                note(answer.status_code)

    keys = sorted(bucket)[:3]
    errors = run_all([snapshots, acks, *(creations(key) for key in keys)])
    assert errors == []
    assert not [s for s in statuses if s >= 500], statuses
    # The work was real: snapshots applied, commands created and acked.
    assert statuses[200] >= ROUNDS
    assert statuses[201] > 0
    assert Command.objects.filter(state="applied").exists()
