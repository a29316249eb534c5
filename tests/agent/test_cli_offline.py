"""The CLI without a reachable server: clear one-line errors, exit codes, spooling."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_dashboard.agent.cli import main
from pi_dashboard.agent.config import AgentConfig
from tests.agent.conftest import AMD, APPLE, XEON
from tests.agent.e2e_support import free_port


def test_enroll_with_nothing_listening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    port = free_port()
    code = main(
        [
            "enroll",
            "--server",
            f"http://127.0.0.1:{port}",
            "--token",
            "pid_ag_x",
            "--config",
            str(config),
        ]
    )
    err = capsys.readouterr().err
    assert code == 4
    assert err.startswith("pi-dashboard-agent: error: cannot reach the server at")
    assert "refused" in err.lower()
    assert len(err.strip().splitlines()) == 1
    assert "pid_ag_x" not in err  # never echo the token
    assert not config.exists()


def test_enroll_rejects_a_non_http_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "enroll",
            "--server",
            "ftp://x",
            "--token",
            "t",
            "--config",
            str(tmp_path / "c.json"),
        ]
    )
    assert code == 3
    assert "must be http(s)://" in capsys.readouterr().err


def test_missing_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(tmp_path / "none.json"), "once"]) == 3
    assert "run `pi-dashboard-agent enroll` first" in capsys.readouterr().err


def test_missing_state_dir(
    make_config: Callable[..., AgentConfig],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = make_config(state_dir=tmp_path / "nowhere" / "state")
    assert main(["once", "--config", str(cfg.path)]) == 3
    err = capsys.readouterr().err
    assert f"pi state dir {tmp_path / 'nowhere' / 'state'} not found" in err
    assert main(["status", "--config", str(cfg.path)]) == 3
    out, err = capsys.readouterr()
    assert "(MISSING)" in out


def test_once_while_the_server_is_down_spools_everything(
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = make_config(state_dir=amd_state, server=f"http://127.0.0.1:{free_port()}")
    assert main(["once", "--config", str(cfg.path)]) == 4
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cannot reach the server" in err
    assert "spooled" in err
    assert main(["status", "--json", "--config", str(cfg.path)]) == 0
    status = json.loads(capsys.readouterr().out)
    # Everything was read into the spool, so pi's rotation can no longer lose it.
    assert status["files"]["tool-recovery-events.jsonl"]["bytes_behind"] == 0
    assert status["files"]["failure-corpus.jsonl"]["bytes_behind"] == 0
    assert status["spool"]["batches"] == 4  # snapshot, events, corpus, stats
    assert status["files"]["tool-recovery-stats"] == {"files": 22, "shipped": 22}
    assert status["last_error"].startswith("cannot reach the server")
    assert status["host"] == "amd-ryzen-9-7950x-16-core-processor-32c-64g"


def test_status_is_readable_by_people(
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = make_config(state_dir=amd_state)
    assert main(["status", "--config", str(cfg.path)]) == 0
    out = capsys.readouterr().out
    assert (
        "host id:     amd-ryzen-9-7950x-16-core-processor-32c-64g (host_override)"
        in out
    )
    assert "tool-recovery-events.jsonl: size=" in out
    assert "last contact: never" in out
    assert "pid_ag_test" not in out


def test_status_names_this_machines_id_and_the_ids_found(
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
    pi_fixtures: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A store copied from other machines: pi here reads none of it."""
    store = json.loads((pi_fixtures / "model-adaptation.json").read_text())
    del store["hosts"][AMD]
    (amd_state / "model-adaptation.json").write_text(json.dumps(store))
    cfg = make_config(state_dir=amd_state)
    assert main(["status", "--json", "--config", str(cfg.path)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["host"] == AMD
    assert status["store"] == {"status": "ok", "reason": "", "host_ids": [APPLE, XEON]}
    assert main(["status", "--config", str(cfg.path)]) == 0
    out = capsys.readouterr().out
    assert f"store:       ok; host ids in it: {APPLE}, {XEON}" in out
    assert f"PROBLEM:     this machine's id {AMD} is not among" in out


def test_status_of_a_healthy_store_names_no_problem(
    make_config: Callable[..., AgentConfig],
    shared_store: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = make_config(state_dir=shared_store.parent)
    assert main(["status", "--json", "--config", str(cfg.path)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["store"]["host_ids"] == [AMD, APPLE, XEON]
    assert status["store_problem"] is None
    assert status["capabilities"]["probe"] is False
    assert "no pi_command" in status["capabilities"]["why"]
