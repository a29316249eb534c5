"""The agent driving real pi: every command in RPC mode, a busy pi (13.3), and
the check after a stale-lock takeover (13.2, agent side)."""

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.agent import isotime
from pi_dashboard.agent.commands import command_apply
from pi_dashboard.agent.config import AgentConfig
from pi_dashboard.agent.lockfile import lock_path
from pi_dashboard.demo.scripted_server import ScriptedServer
from tests.support.realpi import STORE_FILE, RealPi, store_of

HOLDER = Path(__file__).with_name("lock_holder.py")
FRESH = isotime.iso(datetime.now(UTC) - timedelta(hours=2))
MODEL = "t/model"


def profile() -> dict[str, Any]:
    rule = {"mode": "a", "text": "t", "addedAt": FRESH, "lastFiredAt": FRESH}
    return {
        "rules": [rule, {**rule, "mode": "b"}],
        "protocol": {"version": 1, "variant": "tool-tag", "calibratedAt": FRESH},
        "teachStats": {"a": {"taught": 1, "recurrenceBefore": 3, "recurrenceAfter": 0}},
    }


def command(
    kind: str, model: str = MODEL, life: float = 60, **params: Any
) -> dict[str, Any]:
    return {
        "id": f"c-{kind}",
        "kind": kind,
        "model": model,
        "params": params,
        "expires_at": isotime.iso(datetime.now(UTC) + timedelta(seconds=life)),
    }


@pytest.fixture
def pi_agent(realpi: RealPi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch pi agent dir holding MODEL under this machine's bucket."""
    agent = realpi.agent_dir(
        tmp_path, store=store_of(realpi.host, {MODEL: profile()}, FRESH)
    )
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # pi writes under ~
    (tmp_path / "home").mkdir()
    return agent


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer(0).start()
    try:
        yield scripted
    finally:
        scripted.stop()


def loaded(realpi: RealPi, agent: Path) -> dict[str, Any]:
    models: dict[str, Any] = realpi.load(agent / "state" / STORE_FILE)[realpi.host_id]
    return models


def test_rpc_mode_drives_real_pi_for_each_command(
    realpi: RealPi,
    pi_agent: Path,
    server: ScriptedServer,
    make_config: Callable[..., AgentConfig],
) -> None:
    realpi.write_models(pi_agent, server.base_url, ["native-correct"])
    cfg = make_config(state_dir=pi_agent / "state", pi_command=realpi.pi_command)
    me = realpi.host_id

    ack = command_apply(cfg, me, command("remove_rule", mode="a"))
    assert (ack.status, ack.result) == ("applied", {"removed": True, "via": "rpc"})
    ack = command_apply(cfg, me, command("remove_rule", mode="a"))
    assert ack.result == {"removed": False, "via": "rpc"}
    ack = command_apply(cfg, me, command("reset_protocol"))
    assert ack.result == {"removed": True, "via": "rpc"}
    ack = command_apply(cfg, me, command("forget_mode", mode="a"))
    assert ack.result == {"cleared": True, "via": "file"}  # pi has no RPC for it
    entry = loaded(realpi, pi_agent)[MODEL]["profile"]
    assert [r["mode"] for r in entry["rules"]] == ["b"]
    assert "protocol" not in entry
    assert entry["teachStats"] == {}

    # A model pi's models.json knows but the store has never seen (13.5).
    ack = command_apply(cfg, me, command("probe", "scripted/native-correct", life=300))
    assert ack.status == "applied", ack.detail
    assert ack.result["verdict"] == "native"
    assert ack.result["via"] == "rpc"
    probed = loaded(realpi, pi_agent)["scripted/native-correct"]["profile"]
    assert probed["toolProbe"]["status"] == "native"
    assert any(r["path"].endswith("/chat/completions") for r in server.requests)
    # One its models.json does not know: pi's own refusal, as the ack's reason.
    ack = command_apply(cfg, me, command("probe", "nope/unknown"))
    assert ack.status == "failed"
    assert "Model not found: nope/unknown" in ack.detail


def hold_lock(store: Path, seconds: float) -> subprocess.Popen[bytes]:
    """A live holder of pi's lock on `store` (refreshing it, as pi does)."""
    holder = subprocess.Popen(
        [sys.executable, str(HOLDER), str(store), str(seconds), "nobody/x", "-"],
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == b"locked"
    return holder


def test_rpc_mode_retries_while_pi_is_busy(
    realpi: RealPi, pi_agent: Path, make_config: Callable[..., AgentConfig]
) -> None:
    cfg = make_config(state_dir=pi_agent / "state", pi_command=realpi.pi_command)
    store = pi_agent / "state" / STORE_FILE
    # Longer than pi's own ~3.3 s of lock retries: pi alone answers "already held".
    holder = hold_lock(store, 6)
    try:
        started = time.monotonic()
        ack = command_apply(cfg, realpi.host_id, command("remove_rule", mode="a"))
        took = time.monotonic() - started
    finally:
        holder.wait(20)
    assert (ack.status, ack.result) == ("applied", {"removed": True, "via": "rpc"})
    assert took >= 5
    assert [r["mode"] for r in loaded(realpi, pi_agent)[MODEL]["profile"]["rules"]] == [
        "b"
    ]


def test_rpc_mode_gives_up_when_the_command_expires(
    realpi: RealPi, pi_agent: Path, make_config: Callable[..., AgentConfig]
) -> None:
    cfg = make_config(state_dir=pi_agent / "state", pi_command=realpi.pi_command)
    holder = hold_lock(pi_agent / "state" / STORE_FILE, 12)
    try:
        ack = command_apply(
            cfg, realpi.host_id, command("remove_rule", life=6, mode="a")
        )
    finally:
        holder.kill()
        holder.wait()
        lock_path(pi_agent / "state" / STORE_FILE).rmdir()
    assert ack.status == "failed"
    assert "Lock file is already being held" in ack.detail
    assert "attempt" in ack.detail


def test_file_mode_waits_for_a_busy_pi_within_the_commands_lifetime(
    realpi: RealPi, pi_agent: Path, make_config: Callable[..., AgentConfig]
) -> None:
    # The config's own lock wait (1 s) is shorter than pi stays busy (3 s).
    cfg = make_config(state_dir=pi_agent / "state", lock_wait_seconds=1)
    holder = hold_lock(pi_agent / "state" / STORE_FILE, 3)
    try:
        ack = command_apply(cfg, realpi.host_id, command("remove_rule", mode="a"))
    finally:
        holder.wait(20)
    assert (ack.status, ack.result) == ("applied", {"removed": True, "via": "file"})
    assert [r["mode"] for r in loaded(realpi, pi_agent)[MODEL]["profile"]["rules"]] == [
        "b"
    ]


def stale_lock(store: Path) -> None:
    lock = lock_path(store)
    lock.mkdir()
    old = time.time() - 60
    import os

    os.utime(lock, (old, old))


@pytest.mark.parametrize("pi_writes_back", [False, True])
def test_after_a_stale_takeover_the_ack_says_whether_the_write_survived(
    realpi: RealPi,
    pi_agent: Path,
    make_config: Callable[..., AgentConfig],
    pi_writes_back: bool,
) -> None:
    store = pi_agent / "state" / STORE_FILE
    older_copy = store.read_bytes()
    stale_lock(store)  # pi's lock, unrefreshed past the stale time
    # pi was only slow, not dead: once we have written, it writes its older copy back.
    writer = threading.Thread(target=write_back_after_change, args=(store, older_copy))
    if pi_writes_back:
        writer.start()
    cfg = make_config(state_dir=pi_agent / "state", takeover_recheck_seconds=1.0)
    ack = command_apply(cfg, realpi.host_id, command("remove_rule", mode="a"))
    if pi_writes_back:
        writer.join(10)
    assert ack.status == "applied"
    assert ack.result["removed"] is True
    assert ack.result["took_over_stale_lock"] is True
    assert ack.result["write_survived"] is (not pi_writes_back)
    rules = [r["mode"] for r in loaded(realpi, pi_agent)[MODEL]["profile"]["rules"]]
    if pi_writes_back:
        assert rules == ["a", "b"]
        assert "the file does not hold this change" in ack.detail
    else:
        assert rules == ["b"]


def write_back_after_change(store: Path, older: bytes) -> None:
    deadline = time.monotonic() + 10
    while store.read_bytes() == older and time.monotonic() < deadline:
        time.sleep(0.01)
    tmp = store.with_name(store.name + ".pi.tmp")
    tmp.write_bytes(older)
    tmp.replace(store)
    json.loads(store.read_text())
