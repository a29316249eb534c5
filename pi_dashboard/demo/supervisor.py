"""The demo's main loop: build the hosts once, start their agents, keep pi busy.

Layout under `var/demo/`:
`demo.json` (which agents belong to the demo), `<host>/state/` (the pi state
dir), `<host>/agent.json` (the agent's config), `<host>/agent-data/` (its spool
and offsets), `<host>/agent.log`, `model-server.log`.
"""

import contextlib
import json
import random
import shutil
import signal
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from pi_dashboard.agent.config import config_write
from pi_dashboard.demo import pifiles, setup
from pi_dashboard.demo.children import Child, python_module, stop_all
from pi_dashboard.demo.shift import DATA_DIR, build_state_dir, host_ids
from pi_dashboard.demo.simulator import DemoHost
from pi_dashboard.launcher.services import wait_for_port

MANIFEST = "demo.json"
DRIFT_KICK_SECONDS = 30.0


@dataclass(frozen=True)
class Options:
    var_dir: Path
    server_url: str
    tick_seconds: float
    model_server_port: int


class Stop(Exception):
    """SIGTERM / SIGINT: leave the loop and stop the children."""


def fingerprint(host: str) -> dict[str, Any]:
    """The host fingerprint pi wrote into the shipped store for `host`."""
    store = json.loads((DATA_DIR / host / "model-adaptation.json").read_bytes())
    entries = store["hosts"][host]
    return dict(next(iter(entries.values()))["host"])


def prepare(options: Options) -> list[str]:
    """Build (or resume) the demo hosts; returns their pi host ids."""
    root = options.var_dir
    manifest = root / MANIFEST
    hosts = host_ids()
    if manifest.exists():
        agents = json.loads(manifest.read_text()).get("agents", {})
        if setup.agents_exist(list(agents.values())):
            print("demo: resuming the demo fleet in var/demo", flush=True)
            return hosts
        print("demo: var/demo belongs to another database; rebuilding", flush=True)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    now = datetime.now(UTC)
    agents = {}
    for host in hosts:
        host_dir = root / host
        build_state_dir(host, host_dir / "state", now=now)
        agent_id, token = setup.agent_issue(name=f"demo-{host}")
        agents[host] = agent_id
        config_write(
            host_dir / "agent.json",
            {
                "server": options.server_url,
                "token": token,
                "state_dir": str(host_dir / "state"),
                "data_dir": str(host_dir / "agent-data"),
                # The agent runs here but speaks for the demo host
                # (docs/pi-host-pitfalls.md §4).
                "host_override": fingerprint(host),
                "heartbeat_interval": 10.0,
            },
        )
    manifest.write_text(json.dumps({"agents": agents, "created_at": now.isoformat()}))
    print(f"demo: built {len(hosts)} pi hosts under {root}", flush=True)
    return hosts


def agent_children(options: Options, hosts: list[str]) -> list[Child]:
    return [
        Child(
            name=f"agent {host}",
            argv=python_module(
                "pi_dashboard.agent",
                "--config",
                str(options.var_dir / host / "agent.json"),
                "run",
            ),
            log=options.var_dir / host / "agent.log",
        )
        for host in hosts
    ]


def raise_stop(signum: int, frame: FrameType | None) -> None:
    raise Stop


def run(options: Options) -> int:
    hosts = prepare(options)
    model_server = Child(
        name="scripted model server",
        argv=python_module(
            "pi_dashboard.demo.scripted_server",
            "--port",
            str(options.model_server_port),
        ),
        log=options.var_dir / "model-server.log",
    )
    children = [model_server, *agent_children(options, hosts)]
    simulated = [DemoHost(host, options.var_dir / host / "state") for host in hosts]
    signal.signal(signal.SIGTERM, raise_stop)
    signal.signal(signal.SIGINT, raise_stop)
    try:
        for child in children:
            child.start()
        # The first probes are sent at once: the model server must be listening.
        wait_for_port(options.model_server_port, timeout=20)
        setup.probes_register(port=options.model_server_port)
        print(
            f"demo: {len(hosts)} pi hosts live, agents shipping to "
            f"{options.server_url}; model server on :{options.model_server_port}",
            flush=True,
        )
        loop(children, simulated, options.tick_seconds)
    except Stop:
        pass
    finally:
        stop_all(children)
    return 0


def loop(children: list[Child], hosts: list[DemoHost], tick_seconds: float) -> None:
    """One simulated tool call on a random host every ~tick_seconds, forever."""
    rng = random.Random()
    # A second probe of the drifting endpoint soon after the first, so drift is
    # on the pages within the first minute rather than at the first schedule.
    drift_at: float | None = time.monotonic() + DRIFT_KICK_SECONDS
    while True:
        for child in children:
            child.check()
        host = rng.choice(hosts)
        # A busy writer (pi itself, in a real fleet) only delays this tick.
        with contextlib.suppress(OSError, pifiles.LockBusyError):
            host.tick()
        if drift_at is not None and time.monotonic() >= drift_at:
            setup.probes_drift_kick()
            drift_at = None
        time.sleep(tick_seconds * rng.uniform(0.5, 1.5))
