"""Applying commands: file mode, refusals, expiry, and what real pi cannot be made
to do (crash before answering: the fake pi). RPC mode against real pi is in
test_realpi_commands.py."""

import json
import shlex
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.agent.commands import AckOutbox, command_apply
from pi_dashboard.agent.config import AgentConfig
from tests.agent.conftest import (
    AMD,
    FAKE_PI,
    move_to_today,
)

FAKE_PI_COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_PI))}"


def command(kind: str, model: str = "openai/gpt-5.1", **params: Any) -> dict[str, Any]:
    # Built at collection time for parametrize: far enough ahead for a long run.
    soon = datetime.now(UTC) + timedelta(days=1)
    return {
        "id": "0d7b4a4e-0000-4000-8000-000000000001",
        "kind": kind,
        "model": model,
        "params": params,
        "created_at": datetime.now(UTC).isoformat(),
        "expires_at": soon.isoformat().replace("+00:00", "Z"),
    }


def rules(store: Path, model: str = "openai/gpt-5.1") -> list[str]:
    doc = json.loads(store.read_text())
    return [r["mode"] for r in doc["hosts"][AMD][model]["profile"]["rules"]]


@pytest.fixture
def file_cfg(
    make_config: Callable[..., AgentConfig], shared_store: Path
) -> AgentConfig:
    return make_config(state_dir=shared_store.parent)


@pytest.fixture
def rpc_cfg(
    make_config: Callable[..., AgentConfig],
    shared_store: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AgentConfig:
    monkeypatch.setenv("FAKE_PI_HOST_ID", AMD)
    return make_config(state_dir=shared_store.parent, pi_command=FAKE_PI_COMMAND)


def test_remove_rule_in_file_mode(file_cfg: AgentConfig, shared_store: Path) -> None:
    move_to_today(shared_store)
    mode = rules(shared_store)[0]
    ack = command_apply(file_cfg, AMD, command("remove_rule", mode=mode))
    assert ack.status == "applied"
    assert ack.result == {"removed": True, "via": "file"}
    assert mode not in rules(shared_store)
    again = command_apply(file_cfg, AMD, command("remove_rule", mode=mode))
    assert (again.status, again.result) == (
        "applied",
        {"removed": False, "via": "file"},
    )


def test_forget_mode_clears_teach_stats(
    file_cfg: AgentConfig, shared_store: Path
) -> None:
    model = "ollama/qwen3-coder:30b"
    stats = json.loads(shared_store.read_text())["hosts"][AMD][model]["profile"][
        "teachStats"
    ]
    mode = next(iter(stats))
    ack = command_apply(file_cfg, AMD, command("forget_mode", model, mode=mode))
    assert (ack.status, ack.result) == ("applied", {"cleared": True, "via": "file"})
    after = json.loads(shared_store.read_text())["hosts"][AMD][model]["profile"]
    assert mode not in after["teachStats"]


def test_an_expired_command_is_never_applied(
    file_cfg: AgentConfig, shared_store: Path
) -> None:
    before = shared_store.read_bytes()
    cmd = command("remove_rule", mode=rules(shared_store)[0])
    cmd["expires_at"] = "2020-01-01T00:00:00.000Z"
    ack = command_apply(file_cfg, AMD, cmd)
    assert ack.status == "failed"
    assert "expired" in ack.detail
    assert shared_store.read_bytes() == before


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        (command("probe"), "probe needs pi's RPC mode"),
        (command("remove_rule"), "remove_rule needs params.mode"),
        (command("reboot"), "unknown command kind"),
        (command("reset_protocol", model="no-slash"), "no valid model key"),
    ],
)
def test_commands_that_cannot_be_applied_fail_with_a_reason(
    file_cfg: AgentConfig, cmd: dict[str, Any], reason: str
) -> None:
    ack = command_apply(file_cfg, AMD, cmd)
    assert ack.status == "failed"
    assert reason in ack.detail


def test_rpc_failures_are_reported(
    rpc_cfg: AgentConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Real pi cannot be made to crash on demand: the fake pi does.
    # (pi's own refusals, e.g. "Model not found", are in test_realpi_commands.py.)
    monkeypatch.setenv("FAKE_PI_CRASH", "1")
    ack = command_apply(rpc_cfg, AMD, command("remove_rule", mode="x"))
    assert ack.status == "failed"
    assert "exited (code 1) without answering" in ack.detail
    assert "crashing on purpose" in ack.detail


def test_missing_pi_binary_is_a_clear_failure(
    make_config: Callable[..., AgentConfig], shared_store: Path
) -> None:
    cfg = make_config(state_dir=shared_store.parent, pi_command="/nonexistent/pi")
    ack = command_apply(cfg, AMD, command("probe"))
    assert ack.status == "failed"
    assert "cannot start pi" in ack.detail


def test_outbox_keeps_results_for_redelivery(tmp_path: Path) -> None:
    outbox = AckOutbox(tmp_path)
    from pi_dashboard.agent.commands import Ack

    outbox.record("c1", Ack("applied", {"removed": True, "via": "file"}, "removed"))
    assert AckOutbox(tmp_path).unsent() == ["c1"]
    outbox.mark_sent("c1")
    reopened = AckOutbox(tmp_path)
    assert reopened.unsent() == []
    ack = reopened.get("c1")
    assert ack is not None
    assert ack.result == {"removed": True, "via": "file"}
