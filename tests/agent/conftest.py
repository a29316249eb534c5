"""Helpers for agent tests: temporary pi state dirs seeded from the shared fixtures."""

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.agent.config import AgentConfig, config_load, config_write
from pi_dashboard.demo import shift

AMD = "amd-ryzen-9-7950x-16-core-processor-32c-64g"
APPLE = "apple-m3-max-16c-128g"
XEON = "intel-r-xeon-r-gold-6338-cpu-2-00ghz-128c-512g"
FAKE_PI = Path(__file__).with_name("fake_pi.py")
# Just after the fixtures were written: none of their rules is yet expired by the clock.
FIXTURE_NOW = shift.FIXTURE_NOW


def move_to_today(store: Path) -> None:
    """Shift every timestamp in `store` so the fixtures' "now" is the present (pi
    prunes rules by the real clock: the fixtures' rules are expired today)."""
    delta = shift.delta_to(datetime.now(UTC))
    store.write_text(shift.shift_text(store.read_text(), delta))


def seed_state_dir(fixtures: Path, host: str, agent_dir: Path) -> Path:
    """`<agent_dir>/state/` holding one fixture host's files (its own store slice)."""
    state = agent_dir / "state"
    shutil.copytree(fixtures / host, state)
    for report in state.glob("toolhealth*.txt"):
        report.unlink()
    return state


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    return tmp_path / "pi-agent"


@pytest.fixture
def amd_state(pi_fixtures: Path, agent_dir: Path) -> Path:
    return seed_state_dir(pi_fixtures, AMD, agent_dir)


@pytest.fixture
def shared_store(pi_fixtures: Path, amd_state: Path) -> Path:
    """The AMD state dir, but with the store holding all three hosts (a shared dir)."""
    store = amd_state / "model-adaptation.json"
    shutil.copyfile(pi_fixtures / "model-adaptation.json", store)
    return store


@pytest.fixture
def make_config(tmp_path: Path) -> Callable[..., AgentConfig]:
    def make(
        *,
        server: str = "http://127.0.0.1:9",
        token: str = "pid_ag_test",
        state_dir: Path,
        **extra: Any,
    ) -> AgentConfig:
        path = tmp_path / "agent-config.json"
        values = {
            "server": server,
            "token": token,
            "state_dir": str(state_dir),
            "data_dir": str(tmp_path / "agent-data"),
            "host_override": {
                "id": AMD,
                "cpu": "AMD Ryzen 9 7950X 16-Core Processor",
                "cores": 32,
                "totalMemGb": 64,
            },
            **extra,
        }
        config_write(path, values)
        return config_load(path)

    return make


def bucket_text(text: str, host: str) -> str:
    """The exact serialised text of one host's bucket inside a store file."""
    doc = json.loads(text)
    start = text.index(json.dumps(host) + ":{") + len(json.dumps(host)) + 1
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            out = text[start : i + 1]
            assert json.loads(out) == doc["hosts"][host]
            return out
    raise AssertionError("unbalanced")
