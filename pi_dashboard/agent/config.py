"""The agent's config file (JSON, mode 0600) and where pi keeps its state.

Config keys: `server` (base URL), `token` (`pid_ag_…`), optional `state_dir` (pi's
`<agentDir>/state`), `data_dir` (the agent's own offsets and spool), `pi_command`
(enables pi's RPC mode), `host_override`, and tuning knobs listed in `DEFAULTS`.
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_dashboard.agent.errors import ConfigError

ENV_AGENT_DIR = "PI_ADAPTATIVE_CODING_AGENT_DIR"
CONFIG_ENV = "PI_DASHBOARD_AGENT_CONFIG"

DEFAULTS: dict[str, Any] = {
    "scan_interval": 1.0,  # seconds between stat() checks of pi's files
    "heartbeat_interval": 30.0,
    # 0: short polls every poll_interval (safe with gunicorn sync workers)
    "long_poll_seconds": 0,
    "spool_max_bytes": 256 * 1024 * 1024,
    "lock_stale_seconds": 10.0,  # proper-lockfile's default `stale`
    "lock_wait_seconds": 15.0,  # for commands that do not expire
    # After taking over a stale lock, re-read the write again this much later.
    "takeover_recheck_seconds": 2.0,
    "rpc_timeout_seconds": 600.0,
    "http_timeout_seconds": 30.0,
}


def default_config_path() -> Path:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pi-dashboard-agent" / "config.json"


def default_data_dir(config_path: Path) -> Path:
    """Offsets and spool: XDG state dir for the default config, else beside the file."""
    if config_path == default_config_path():
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(base) / "pi-dashboard-agent"
    return config_path.parent / (config_path.stem + "-data")


def discover_state_dir() -> Path:
    """pi's rule: `$PI_ADAPTATIVE_CODING_AGENT_DIR`, else `~/.pi/agent`; + `state/`."""
    agent_dir = os.environ.get(ENV_AGENT_DIR) or str(Path.home() / ".pi" / "agent")
    return Path(agent_dir).expanduser() / "state"


@dataclass
class AgentConfig:
    server: str
    token: str
    path: Path
    state_dir: Path
    data_dir: Path
    pi_command: str | None = None
    host_override: dict[str, Any] | None = None
    tuning: dict[str, Any] = field(default_factory=lambda: dict(DEFAULTS))

    def knob(self, name: str) -> float:
        return float(self.tuning.get(name, DEFAULTS[name]))

    @property
    def agent_dir(self) -> Path:
        """pi's agentDir (parent of `state/`), for `PI_ADAPTATIVE_CODING_AGENT_DIR`."""
        return self.state_dir.parent


def config_load(path: Path) -> AgentConfig:
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(
            f"no config at {path}; run `pi-dashboard-agent enroll` first"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from None
    if not isinstance(raw, dict) or not raw.get("server") or not raw.get("token"):
        raise ConfigError(f"config {path} lacks `server` or `token`")
    state_dir = raw.get("state_dir")
    data_dir = raw.get("data_dir")
    override = raw.get("host_override")
    if override is not None and not isinstance(override, dict):
        raise ConfigError(f"config {path}: `host_override` must be an object")
    return AgentConfig(
        server=str(raw["server"]).rstrip("/"),
        token=str(raw["token"]),
        path=path,
        state_dir=Path(state_dir).expanduser() if state_dir else discover_state_dir(),
        data_dir=Path(data_dir).expanduser() if data_dir else default_data_dir(path),
        pi_command=raw.get("pi_command") or None,
        host_override=override,
        tuning={k: raw.get(k, v) for k, v in DEFAULTS.items()},
    )


def config_write(path: Path, values: dict[str, Any]) -> None:
    """Write the config readable by its owner only (it holds the agent's token)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(values, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
