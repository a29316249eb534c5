"""The CLI against a live server: enroll, once (ship + commands), revoked tokens."""

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from pi_dashboard.agent.cli import main
from pi_dashboard.agent.config import config_load
from pi_dashboard.control import services as control_services
from pi_dashboard.control.models import Command, CommandState
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Agent
from pi_dashboard.ingest.models import EventRecord
from tests.agent.conftest import AMD, move_to_today


@pytest.fixture
def issued(transactional_db: None) -> tuple[Agent, str]:
    return fleet_services.agent_issue(name="cli-amd", actor="test")


def enroll(live_server: Any, token: str, tmp_path: Path, state: Path) -> Path:
    config = tmp_path / "cfg" / "agent.json"
    code = main(
        ["enroll", "--server", live_server.url, "--token", token,
         "--config", str(config), "--state-dir", str(state)]
    )  # fmt: skip
    assert code == 0
    return config


@pytest.fixture
def config(
    live_server: Any, issued: tuple[Agent, str], tmp_path: Path, amd_state: Path
) -> Path:
    """An enrolled agent's config, on the AMD host's pi state."""
    return enroll(live_server, issued[1], tmp_path, amd_state)


def amd_profile(state: Path, model: str) -> dict[str, Any]:
    store = json.loads((state / "model-adaptation.json").read_text())
    profile: dict[str, Any] = store["hosts"][AMD][model]["profile"]
    return profile


def impersonate_amd(config: Path) -> None:
    raw = json.loads(config.read_text())
    raw["host_override"] = {
        "id": AMD, "cpu": "AMD Ryzen 9 7950X 16-Core Processor",
        "cores": 32, "totalMemGb": 64,
    }  # fmt: skip
    config.write_text(json.dumps(raw))


def test_enroll_writes_a_private_config(
    live_server: Any,
    issued: tuple[Agent, str],
    tmp_path: Path,
    amd_state: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    agent, token = issued
    config = enroll(live_server, token, tmp_path, amd_state)
    assert f"enrolled as agent cli-amd ({agent.pk})" in capsys.readouterr().out
    assert stat.S_IMODE(config.stat().st_mode) == 0o600  # it holds the token
    cfg = config_load(config)
    assert (cfg.server, cfg.token, cfg.state_dir) == (live_server.url, token, amd_state)
    assert cfg.pi_command is None


def test_enroll_at_a_url_without_the_api(
    live_server: Any,
    issued: tuple[Agent, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["enroll", "--server", live_server.url + "/nothing-here", "--token",
         issued[1], "--config", str(tmp_path / "c.json")]
    )  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "is not a pi-dashboard API (whoami answered HTTP 404)" in err


def test_once_ships_then_applies_a_command(
    config: Path, amd_state: Path, operator: User, capsys: pytest.CaptureFixture[str]
) -> None:
    impersonate_amd(config)
    move_to_today(amd_state / "model-adaptation.json")  # pi prunes by the clock
    assert main(["once", "--config", str(config)]) == 0
    assert EventRecord.objects.filter(host__pi_id=AMD).count() == 380
    mode = amd_profile(amd_state, "openai/gpt-5.1")["rules"][0]["mode"]
    cmd = control_services.command_create(
        actor=operator, host=AMD, model="openai/gpt-5.1", kind="remove_rule",
        params={"mode": mode},
    )  # fmt: skip
    assert main(["once", "--config", str(config)]) == 0
    cmd = Command.objects.get(pk=cmd.pk)
    assert cmd.state == CommandState.APPLIED
    assert cmd.result == {"removed": True, "via": "file"}
    assert mode not in json.dumps(amd_profile(amd_state, "openai/gpt-5.1")["rules"])
    capsys.readouterr()
    assert main(["status", "--json", "--config", str(config)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["last_contact_at"] is not None
    assert status["spool"] == {"batches": 0, "bytes": 0}
    assert status["unsent_acks"] == 0
    assert status["counters"]["events_stored"] == 380


def test_a_revoked_token_is_a_clear_error(
    live_server: Any,
    issued: tuple[Agent, str],
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    agent, token = issued
    fleet_services.agent_revoke(agent=agent, actor="test")
    capsys.readouterr()
    assert main(["once", "--config", str(config)]) == 5
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"pi-dashboard-agent: error: the server at {live_server.url} rejected the "
        "agent token (unknown or revoked)"
    )
    assert len(err.splitlines()) == 1
    assert token not in err
    code = main(
        ["enroll", "--server", live_server.url, "--token", token, "--config",
         str(tmp_path / "again.json")]
    )  # fmt: skip
    assert code == 5
    # The long-running loop stops too, with the same message and exit code.
    proc = subprocess.run(
        [sys.executable, "-m", "pi_dashboard.agent", "--config", str(config), "run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 5
    assert "rejected the agent token (unknown or revoked)" in proc.stderr


def test_long_poll_picks_a_command_up_as_it_is_created(
    config: Path, amd_state: Path, operator: User
) -> None:
    import threading
    import time

    from pi_dashboard.agent.client import ApiClient
    from pi_dashboard.agent.poller import CommandPoller
    from pi_dashboard.agent.state import Contact

    impersonate_amd(config)
    assert main(["once", "--config", str(config)]) == 0  # binds and ships
    cfg = config_load(config)
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    poller = CommandPoller(
        cfg=cfg,
        client=ApiClient(cfg.server, cfg.token),
        host_id=AMD,
        contact=Contact(),
        poll_interval=lambda: 2.0,
    )

    def create_soon() -> None:
        time.sleep(1.0)
        try:
            control_services.command_create(
                actor=operator, host=AMD, model="llamacpp/glm-4.6",
                kind="reset_protocol", params={},
            )  # fmt: skip
        finally:
            connection.close()  # this thread's own connection

    creator = threading.Thread(target=create_soon)
    started = time.monotonic()
    creator.start()
    handled = poller.poll_once(wait=10)
    creator.join()
    assert handled == 1
    assert time.monotonic() - started < 6  # answered when the command appeared
    assert "protocol" not in amd_profile(amd_state, "llamacpp/glm-4.6")


def test_enroll_with_a_missing_state_dir_exits_3(
    live_server: Any,
    issued: tuple[Agent, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "cfg" / "agent.json"
    missing = tmp_path / "no-pi-here" / "state"
    code = main(
        ["enroll", "--server", live_server.url, "--token", issued[1],
         "--config", str(config), "--state-dir", str(missing)]
    )  # fmt: skip
    assert code == 3
    err = capsys.readouterr().err
    assert f"pi state dir {missing} does not exist" in err
    assert "--state-dir" in err
    assert not config.exists()


def test_once_verbose_says_what_was_shipped(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    impersonate_amd(config)
    capsys.readouterr()
    assert main(["-v", "once", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "snapshot 1 batch" in out
    assert "events 1 batch (380 stored, 0 duplicate, 0 rejected)" in out
    assert "commands: 0 carried out" in out
    # As the agent's README writes it: `once -v` (the re-walk found it refused).
    assert main(["once", "-v", "--config", str(config)]) == 0
    assert "shipped: nothing new" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"version":1,"hosts":{', "invalid JSON at line 1, column 23"),
        ('{"version":2,"hosts":{}}', "version is 2, pi reads only 1"),
    ],
)
def test_status_reports_an_unreadable_store_not_shipped(
    config: Path,
    amd_state: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    reason: str,
) -> None:
    impersonate_amd(config)
    (amd_state / "model-adaptation.json").write_text(content)
    assert main(["once", "--config", str(config)]) == 0
    capsys.readouterr()
    assert main(["status", "--json", "--config", str(config)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["files"]["model-adaptation.json"]["shipped"] is False
    assert status["store"]["status"] == "unreadable"
    assert reason in status["store"]["reason"]
    assert "pi treats it as empty" in status["store_problem"]
    assert main(["status", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"store:       UNREADABLE: {reason}" in out
    assert "PROBLEM:" in out
