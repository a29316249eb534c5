"""`run` and `once`: wire config, shipper and command poller together."""

import fcntl
import logging
import os
import shlex
import socket
import subprocess
import threading
from pathlib import Path
from typing import IO

from pi_dashboard.agent.client import ApiClient
from pi_dashboard.agent.config import AgentConfig
from pi_dashboard.agent.errors import (
    AgentError,
    ServerUnreachable,
    StateDirMissing,
    Unauthorized,
)
from pi_dashboard.agent.hostid import (
    HostFingerprint,
    current_fingerprint,
    fingerprint_from_override,
)
from pi_dashboard.agent.poller import CommandPoller
from pi_dashboard.agent.shipper import Shipper
from pi_dashboard.agent.state import AgentState

log = logging.getLogger(__name__)
RETRY_AFTER_CRASH = 10.0


def fingerprint_for(cfg: AgentConfig) -> HostFingerprint:
    if cfg.host_override:
        return fingerprint_from_override(cfg.host_override)
    return current_fingerprint()


def require_state_dir(cfg: AgentConfig) -> None:
    if not cfg.state_dir.is_dir():
        raise StateDirMissing(
            f"pi state dir {cfg.state_dir} not found (set state_dir in "
            f"{cfg.path} or PI_ADAPTATIVE_CODING_AGENT_DIR; has pi run on this host?)"
        )


def pi_version(cfg: AgentConfig) -> str | None:
    if not cfg.pi_command:
        return None
    try:
        out = subprocess.run(
            [*shlex.split(cfg.pi_command), "--version"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[-1].strip()[:64] if out.returncode == 0 and lines else None


class InstanceLock:
    """One agent process per data dir: two would ship and spool the same offsets."""

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._fh: IO[str] = (data_dir / "agent.lock").open("a+")
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.close()
            raise AgentError(
                f"another pi-dashboard-agent is already running on {data_dir}"
            ) from None
        self._fh.truncate(0)
        self._fh.write(f"{os.getpid()}\n")
        self._fh.flush()

    def release(self) -> None:
        self._fh.close()


class Agent:
    def __init__(self, cfg: AgentConfig) -> None:
        require_state_dir(cfg)
        self.cfg = cfg
        self.lock = InstanceLock(cfg.data_dir)
        self.fingerprint = fingerprint_for(cfg)
        self.state = AgentState(cfg.data_dir)
        timeout = cfg.knob("http_timeout_seconds")
        self.shipper = Shipper(
            cfg=cfg,
            client=ApiClient(cfg.server, cfg.token, timeout=timeout),
            fingerprint=self.fingerprint,
            state=self.state,
            hostname=socket.gethostname(),
            pi_version=pi_version(cfg),
        )
        self.poller = CommandPoller(
            cfg=cfg,
            client=ApiClient(cfg.server, cfg.token, timeout=timeout),
            host_id=self.fingerprint.id,
            contact=self.state.contact,
            poll_interval=lambda: self.shipper.poll_interval,
            command_gate=self.shipper.command_gate,
        )
        self.shipper.on_reconnect = self.poller.nudge

    def close(self) -> None:
        self.shipper._save()
        self.shipper.client.close()
        self.poller.client.close()
        self.lock.release()

    def run(self, stop: threading.Event) -> None:
        """Ship and poll until `stop` is set; raises Unauthorized if the token dies."""
        log.info(
            "pi-dashboard-agent for host %s, state dir %s, server %s",
            self.fingerprint.id,
            self.cfg.state_dir,
            self.cfg.server,
        )
        self.shipper.heartbeat()
        thread = threading.Thread(
            target=self.poller.run, args=(stop,), name="commands", daemon=True
        )
        thread.start()
        try:
            while not stop.is_set():
                self._tick_safely(stop)
                stop.wait(self.cfg.knob("scan_interval"))
        finally:
            stop.set()
            thread.join(self.cfg.knob("http_timeout_seconds") + 5)
        if self.poller.fatal is not None:
            raise self.poller.fatal

    def _tick_safely(self, stop: threading.Event) -> None:
        """A pass that fails (disk full, unreadable file) is logged and retried later;
        only a rejected token ends the loop."""
        try:
            self.shipper.tick()
        except Unauthorized:
            raise
        except Exception:
            log.exception("shipping pass failed; retrying in %gs", RETRY_AFTER_CRASH)
            self.state.contact.failed("shipping pass failed (see the agent's log)")
            stop.wait(RETRY_AFTER_CRASH)

    def once(self) -> int:
        """Heartbeat, ship everything pending, apply pending commands; return how
        many commands were carried out."""
        self.shipper.heartbeat()
        self.shipper.tick()
        if not self.shipper.is_caught_up():
            raise ServerUnreachable(
                f"{self.state.contact.last_error}; {len(self.shipper.spool)} "
                f"batch(es) spooled in {self.shipper.spool.directory} for the next run"
            )
        commands = self.poller.poll_once(wait=0)
        if commands:
            self.shipper.tick()  # the store as the commands left it
        return commands
