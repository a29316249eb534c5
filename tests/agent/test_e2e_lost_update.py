"""End to end, the lost update of issue 13.2: pi holds its lock past the stale time,
the agent takes the lock over, removes the rule and acks; pi then writes its older
copy back. The command ends `reverted` and the page shows the file's truth.

A real server and a real agent process; pi's part (a slow holder that never refreshed
its lock, then writes back what it read) is played by this test, since real pi
cannot be made to stall inside its lock on demand.
"""

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pi_dashboard.agent.config import config_write
from pi_dashboard.agent.lockfile import lock_path
from pi_dashboard.control import services as control_services
from pi_dashboard.control.models import Command
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import HostModel
from tests.agent.conftest import AMD, move_to_today, seed_state_dir
from tests.agent.e2e_support import Server, agent_argv, free_port
from tests.support.processes import child_env, running, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]
MODEL = "openai/gpt-5.1"
PAGE = f"/hosts/{AMD}/models/{MODEL}/"


def rules_in(store: Path) -> list[str]:
    doc = json.loads(store.read_text())
    return [r["mode"] for r in doc["hosts"][AMD][MODEL]["profile"]["rules"]]


def shown_rules() -> list[str]:
    row = HostModel.objects.filter(host__pi_id=AMD, model__key=MODEL).first()
    return [r["mode"] for r in row.entry["profile"]["rules"]] if row else []


def test_an_older_copy_written_back_after_a_takeover_reverts_the_command(
    transactional_db: None, tmp_path: Path, pi_fixtures: Path, operator: User
) -> None:
    state = seed_state_dir(pi_fixtures, AMD, tmp_path / "pi")
    store = state / "model-adaptation.json"
    move_to_today(store)  # pi prunes rules by the clock
    mode = rules_in(store)[0]
    _agent, token = fleet_services.agent_issue(name="e2e-amd", actor="test")
    server = Server(free_port(), tmp_path / "server.log")
    config = tmp_path / "agent.json"
    host = json.loads(store.read_text())["hosts"][AMD][MODEL]["host"]
    config_write(
        config,
        {
            "server": server.url,
            "token": token,
            "state_dir": str(state),
            "data_dir": str(tmp_path / "agent-data"),
            "host_override": host,
            "scan_interval": 0.2,
            "heartbeat_interval": 2,
            "takeover_recheck_seconds": 0.5,
        },
    )
    log = tmp_path / "agent.log"
    server.start()
    try:
        with running(agent_argv(config), env=child_env(), log=log):
            assert wait_until(lambda: mode in shown_rules(), timeout=60), tail(log)
            # pi reads the store under its lock, then stalls without refreshing it.
            older_copy = store.read_bytes()
            lock = lock_path(store)
            lock.mkdir()
            stale = time.time() - 60
            os.utime(lock, (stale, stale))

            command = control_services.command_create(
                actor=operator, host=AMD, model=MODEL, kind="remove_rule",
                params={"mode": mode},
            )  # fmt: skip
            row = Command.objects.filter(pk=command.pk)
            assert wait_until(lambda: row.get().confirmed_at is not None, timeout=30), (
                tail(log)
            )
            applied = row.get()
            assert applied.result["removed"] is True
            assert applied.result["took_over_stale_lock"] is True
            assert applied.result["write_survived"] is True  # so far
            assert mode not in shown_rules()

            # pi wakes up and writes back the copy it read (temp + rename).
            tmp = store.with_name(f"{store.name}.{os.getpid()}.pi.tmp")
            tmp.write_bytes(older_copy)
            tmp.replace(store)
            assert wait_until(lambda: row.get().state == "reverted", timeout=30), tail(
                log
            )
    finally:
        server.stop()

    reverted = row.get()
    assert reverted.revert_cause == "overwritten"
    assert mode in shown_rules()  # the dashboard shows the file's truth
    client = Client()
    client.force_login(operator)
    page = client.get(PAGE).content.decode()
    assert "reverted" in page
    assert "the file was overwritten" in page
    assert f"There is no {mode} rule" not in page
    # And the rule can be removed again (it is there).
    again = control_services.command_create(
        actor=operator, host=AMD, model=MODEL, kind="remove_rule",
        params={"mode": mode},
    )  # fmt: skip
    assert again.pk != command.pk


def tail(log: Path) -> Any:
    return log.read_text()[-3000:] if log.exists() else "(no agent log)"
