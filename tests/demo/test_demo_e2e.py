"""The demo fleet on `make run`: the whole loop live within a minute.

A real launcher (web, worker, beat, demo) on a throwaway database: three pi hosts'
data arrives through three real agents, probes give the scripted verdicts, drift
shows, and a rule removed through the control plane leaves the demo host's file.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.demo.shift import DATA_DIR, host_ids
from tests.support.launching import MARKS, launched, stop_cleanly
from tests.support.processes import ROOT, wait_until

pytestmark = MARKS

INTEL = "intel-r-xeon-r-gold-6338-cpu-2-00ghz-128c-512g"
DEEPSEEK = "openrouter/deepseek/deepseek-v3.2"


def django_json(db: str, code: str) -> Any:
    """Run `code` (which prints JSON) in a Django shell on the launcher's database."""
    env = {**os.environ, "DATABASE_URL": db}
    env.pop("DJANGO_TEST_DB_NAME", None)
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


ARRIVED = """
import json
from django.db.models import Count
from pi_dashboard.ingest.models import EventRecord
print(json.dumps(dict(EventRecord.objects.values_list("host__pi_id")
    .annotate(n=Count("id")).values_list("host__pi_id", "n"))))
"""

PROBES = """
import json
from pi_dashboard.probes.models import Drift, ProbeRun
runs = ProbeRun.objects.filter(state="done").order_by("id")
print(json.dumps({"verdicts": {r.endpoint.server_model: r.verdict for r in runs},
                  "drifts": Drift.objects.count()}))
"""

REMOVE = """
import json
from django.contrib.auth.models import User
from pi_dashboard.control import services
command = services.command_create(actor=User.objects.get(username="admin"),
    host="{host}", model="{model}", kind="remove_rule", params={{"mode": "{mode}"}})
print(json.dumps(str(command.id)))
"""

COMMAND = """
import json
from pi_dashboard.control.models import Command
c = Command.objects.get(id="{id}")
print(json.dumps({{"state": c.state, "result": c.result}}))
"""


def fixture_lines(host: str) -> int:
    return len(
        (DATA_DIR / host / "tool-recovery-events.jsonl").read_text().splitlines()
    )


def rule_modes(store: Path) -> list[str]:
    entry = json.loads(store.read_bytes())["hosts"][INTEL][DEEPSEEK]
    return [rule["mode"] for rule in entry["profile"]["rules"]]


@pytest.mark.timeout(180)
def test_demo_fleet_runs_the_whole_loop(tmp_path: Path) -> None:
    demo_dir = tmp_path / "demo"
    started = time.monotonic()
    with launched(
        env={"PI_DEMO_DIR": str(demo_dir)}, log=tmp_path / "launcher.log"
    ) as run:
        db, tail = run.db, run.log_tail

        # Every shipped line of every demo host arrives, plus the new ones.
        def everything_arrived() -> bool:
            counts = django_json(db, ARRIVED)
            return all(counts.get(h, 0) >= fixture_lines(h) for h in host_ids())

        assert wait_until(everything_arrived, timeout=60, interval=2), tail()
        assert time.monotonic() - started < 90

        # Probes of the scripted endpoints give the verdicts pi would record.
        def probed() -> dict[str, Any] | None:
            seen = django_json(db, PROBES)
            return seen if len(seen["verdicts"]) >= 7 else None

        assert wait_until(lambda: probed() is not None, timeout=30, interval=2), tail()
        verdicts = django_json(db, PROBES)["verdicts"]
        assert verdicts["native-correct@150"] == "native"
        assert verdicts["text-fenced-json@300"] == "text-protocol"
        assert verdicts["garbage@100"] == "none"

        # An operator removes a standing rule; it leaves the demo host's store file.
        store = demo_dir / INTEL / "state" / "model-adaptation.json"
        mode = rule_modes(store)[0]
        command_id = django_json(
            db, REMOVE.format(host=INTEL, model=DEEPSEEK, mode=mode)
        )
        assert wait_until(
            lambda: mode not in rule_modes(store), timeout=15, interval=0.1
        )
        applied = django_json(db, COMMAND.format(id=command_id))
        assert applied["state"] in {"applied", "confirmed"}
        assert applied["result"]["removed"] is True

        # The drifting endpoint flips its verdict at its second probe.
        assert wait_until(
            lambda: django_json(db, PROBES)["drifts"] >= 1, timeout=60, interval=3
        ), tail()

        stop_cleanly(run.proc, timeout=40)
