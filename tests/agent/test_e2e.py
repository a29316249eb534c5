"""End to end: a real server (gunicorn) and a real agent process on a temp pi state dir.

The agent ships everything; pi appends and rotates while it runs; the server goes away
and comes back; every line ends up stored exactly once. Then an operator removes a
rule through the API, and the agent applies it to the store file within 10 seconds.
"""

import json
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pi_dashboard.agent.config import config_write
from pi_dashboard.agent.spool import spool_usage
from pi_dashboard.agent.state import read_json
from pi_dashboard.control.models import Command
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.ingest.models import CorpusRecord, EventRecord, SessionStats, Snapshot
from tests.agent.conftest import (
    AMD,
    APPLE,
    XEON,
    bucket_text,
    move_to_today,
    seed_state_dir,
)
from tests.agent.e2e_support import (
    Server,
    agent_argv,
    free_port,
    new_records,
    pi_append,
    pi_rotate,
)
from tests.control.conftest import make_operator_token
from tests.support.processes import child_env, running, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

EVENTS = "tool-recovery-events.jsonl"
CORPUS = "failure-corpus.jsonl"


def stored() -> tuple[int, int]:
    host = {"host__pi_id": AMD}
    return (
        EventRecord.objects.filter(**host).count(),
        CorpusRecord.objects.filter(**host).count(),
    )


def api(server: Server, method: str, path: str, token: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        f"{server.url}/api/v1{path}",
        data=data,
        method=method,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 (loopback)
        return json.loads(resp.read())


class Written:
    """Every line pi wrote to a log during the test (the expected stored set)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = set(path.read_bytes().splitlines())
        self.template = sorted(self.lines)[:50]
        self.next = 0

    def append(self, count: int) -> None:
        lines = new_records(self.template, start=self.next, count=count)
        self.next += count
        pi_append(self.path, lines)
        self.lines.update(lines)


@pytest.fixture
def setup(
    transactional_db: None, tmp_path: Path, pi_fixtures: Path, operator: User
) -> dict[str, Any]:
    state = seed_state_dir(pi_fixtures, AMD, tmp_path / "pi")
    # A shared agent dir: the store holds all three hosts; only AMD's is ours.
    shutil.copyfile(
        pi_fixtures / "model-adaptation.json", state / "model-adaptation.json"
    )
    move_to_today(state / "model-adaptation.json")  # pi prunes rules by the clock
    _agent, token = fleet_services.agent_issue(name="e2e-amd", actor="test")
    server = Server(free_port(), tmp_path / "server.log")
    config = tmp_path / "agent.json"
    fp = json.loads((pi_fixtures / AMD / "model-adaptation.json").read_text())
    host = next(iter(fp["hosts"][AMD].values()))["host"]
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
        },
    )
    return {
        "state": state,
        "server": server,
        "config": config,
        "op_token": make_operator_token(operator),
        "data_dir": tmp_path / "agent-data",
        "agent_log": tmp_path / "agent.log",
    }


def test_agent_ships_everything_once_and_applies_a_command(
    setup: dict[str, Any],
) -> None:
    state: Path = setup["state"]
    server: Server = setup["server"]
    events, corpus = Written(state / EVENTS), Written(state / CORPUS)
    server.start()
    try:
        with running(
            agent_argv(setup["config"]), env=child_env(), log=setup["agent_log"]
        ) as agent:
            _ship_through_rotation_and_outage(setup, events, corpus)
            assert agent.poll() is None, setup["agent_log"].read_text()[-2000:]
            _remove_rule_end_to_end(setup)
    finally:
        server.stop()


def caught_up(data_dir: Path, log: Path, kind: str) -> bool:
    """The agent has read (and delivered or spooled) the whole log."""
    tails = read_json(data_dir / "state.json", {}).get("tails", {})
    pos = tails.get(kind, {})
    st = log.stat()
    return bool(pos.get("inode") == st.st_ino and pos.get("offset") == st.st_size)


def _all_stored(events: Written, corpus: Written) -> bool:
    return stored() == (len(events.lines), len(corpus.lines))


def _ship_through_rotation_and_outage(
    setup: dict[str, Any], events: Written, corpus: Written
) -> None:
    state, server = setup["state"], setup["server"]
    log = setup["agent_log"]
    # 1. Everything pi had written arrives.
    assert wait_until(lambda: _all_stored(events, corpus), timeout=60), (
        stored(),
        log.read_text()[-3000:],
    )
    sessions = SessionStats.objects.filter(host__pi_id=AMD)
    assert wait_until(lambda: sessions.count() == 22, timeout=10)
    assert Snapshot.objects.exists()
    # 2. pi keeps writing; it rotates both logs (old lines reappear in new files).
    events.append(40)
    corpus.append(15)
    assert wait_until(lambda: caught_up(setup["data_dir"], state / EVENTS, "events"))
    assert wait_until(lambda: caught_up(setup["data_dir"], state / CORPUS, "corpus"))
    pi_rotate(state / EVENTS, keep=120)
    pi_rotate(state / CORPUS, keep=60)
    events.append(10)
    assert wait_until(lambda: _all_stored(events, corpus), timeout=30), stored()
    # 3. The server goes away; pi writes, rotates, writes; the agent spools.
    server.stop()
    events.append(30)
    # pi rotates at 4 MiB, long after the agent read the lines (scan every 0.2 s);
    # a line rotated away before anyone read it is gone for any reader.
    assert wait_until(lambda: caught_up(setup["data_dir"], state / EVENTS, "events"))
    pi_rotate(state / EVENTS, keep=25)
    events.append(5)
    corpus.append(7)
    spooled = wait_until(lambda: spool_usage(setup["data_dir"] / "spool")[0] >= 2)
    assert spooled, log.read_text()[-2000:]
    time.sleep(2)
    # 4. The server is back: the spool drains, in order; every line exactly once.
    server.start()
    assert wait_until(lambda: _all_stored(events, corpus), timeout=60), (
        stored(),
        (len(events.lines), len(corpus.lines)),
        log.read_text()[-3000:],
    )
    time.sleep(1.5)  # nothing more trickles in (no duplicates stored later)
    assert stored() == (len(events.lines), len(corpus.lines))
    assert wait_until(lambda: spool_usage(setup["data_dir"] / "spool")[0] == 0)


def _remove_rule_end_to_end(setup: dict[str, Any]) -> None:
    store: Path = setup["state"] / "model-adaptation.json"
    before = store.read_text()
    model = "openai/gpt-5.1"
    mode = json.loads(before)["hosts"][AMD][model]["profile"]["rules"][0]["mode"]
    created = time.monotonic()
    cmd = api(
        setup["server"],
        "POST",
        "/commands",
        setup["op_token"],
        {"host": AMD, "model": model, "kind": "remove_rule", "params": {"mode": mode}},
    )

    def rule_gone() -> bool:
        doc = json.loads(store.read_text())
        return mode not in [
            r["mode"] for r in doc["hosts"][AMD][model]["profile"]["rules"]
        ]

    assert wait_until(rule_gone, timeout=10, interval=0.1), setup[
        "agent_log"
    ].read_text()[-2000:]
    assert time.monotonic() - created <= 10
    after = store.read_text()
    json.loads(after)  # still parses
    for host in (APPLE, XEON):
        assert bucket_text(after, host) == bucket_text(before, host)

    def settled(field: str) -> bool:
        row = Command.objects.get(pk=cmd["id"])
        return getattr(row, field) is not None

    assert wait_until(lambda: settled("finished_at"), timeout=10)
    shown = api(setup["server"], "GET", f"/commands/{cmd['id']}", setup["op_token"])
    assert shown["state"] == "applied"
    assert shown["result"] == {"removed": True, "via": "file"}
    # The agent ships the rewritten store; that snapshot confirms the command.
    assert wait_until(lambda: settled("confirmed_at"), timeout=15)
