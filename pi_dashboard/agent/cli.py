"""`pi-dashboard-agent`: enroll, run, once, status.

Exit codes: 0 ok, 1 other error, 2 usage, 3 config or pi state dir missing,
4 server unreachable (data stays spooled), 5 token rejected (unknown or revoked).
"""

import argparse
import json
import logging
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from pi_dashboard.agent import AGENT_VERSION
from pi_dashboard.agent.client import ApiClient
from pi_dashboard.agent.config import (
    DEFAULTS,
    config_load,
    config_write,
    default_config_path,
    default_data_dir,
    discover_state_dir,
)
from pi_dashboard.agent.errors import AgentError, ConfigError, ServerError
from pi_dashboard.agent.runner import Agent
from pi_dashboard.agent.status import status_collect, status_format

log = logging.getLogger("pi_dashboard.agent")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-dashboard-agent",
        description="Ship this host's pi state to pi-dashboard and apply its commands.",
    )
    parser.add_argument("--version", action="version", version=AGENT_VERSION)
    parser.add_argument(
        "--config", type=Path, help=f"config file (default {default_config_path()})"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    # `--config` and `-v` are accepted before or after the subcommand.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, dest="sub_config", help="config file")
    common.add_argument("-v", "--verbose", action="store_true", dest="sub_verbose")
    sub = parser.add_subparsers(dest="command", required=True)
    enroll = sub.add_parser(
        "enroll", parents=[common], help="check URL + token, write the config"
    )
    enroll.add_argument("--server", required=True, help="dashboard base URL")
    enroll.add_argument("--token", required=True, help="agent token (pid_ag_…)")
    enroll.add_argument("--state-dir", type=Path, help="pi's <agentDir>/state")
    enroll.add_argument("--data-dir", type=Path, help="the agent's offsets and spool")
    enroll.add_argument(
        "--pi-command", help='pi command line for RPC mode, e.g. "pi"; off if unset'
    )
    sub.add_parser(
        "run", parents=[common], help="ship and apply commands until stopped"
    )
    sub.add_parser(
        "once", parents=[common], help="one pass (heartbeat, ship, commands), then exit"
    )
    status = sub.add_parser(
        "status", parents=[common], help="what is seen, shipped and queued"
    )
    status.add_argument("--json", action="store_true", help="machine-readable")
    return parser


def cmd_enroll(args: argparse.Namespace, config_path: Path) -> int:
    client = ApiClient(args.server, args.token, timeout=15)
    try:
        who = client.get_json("/agent/whoami")
    except ServerError as exc:
        raise AgentError(
            f"{args.server} is not a pi-dashboard API (whoami answered HTTP "
            f"{exc.status}); check --server"
        ) from None
    finally:
        client.close()
    if not isinstance(who, dict) or "agent_id" not in who:
        raise AgentError(f"{args.server} answered whoami without an agent_id")
    state_dir = Path(args.state_dir or discover_state_dir())
    if not state_dir.is_dir():
        raise ConfigError(
            f"pi state dir {state_dir} does not exist; run pi once on this host, or "
            "pass --state-dir <pi's agentDir>/state (no config was written)"
        )
    values = {
        "server": args.server.rstrip("/"),
        "token": args.token,
        "state_dir": str(state_dir),
        "data_dir": str(args.data_dir or default_data_dir(config_path)),
        "pi_command": args.pi_command,
        **DEFAULTS,
    }
    config_write(config_path, values)
    print(
        f"enrolled as agent {who.get('name')} ({who['agent_id']}); config {config_path}"
    )
    return 0


def cmd_run(config_path: Path) -> int:
    agent = Agent(config_load(config_path))
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        agent.run(stop)
    finally:
        agent.close()
    return 0


def cmd_once(config_path: Path, *, verbose: bool) -> int:
    agent = Agent(config_load(config_path))
    try:
        commands = agent.once()
    finally:
        agent.close()
    if verbose:
        print(agent.shipper.shipped_summary())
        print(f"commands: {commands} carried out and acked")
    return 0


def cmd_status(args: argparse.Namespace, config_path: Path) -> int:
    cfg = config_load(config_path)
    report = status_collect(cfg)
    print(json.dumps(report, indent=2) if args.json else status_format(report))
    if not report["state_dir_found"]:
        print(f"error: pi state dir {cfg.state_dir} not found", file=sys.stderr)
        return 3
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.verbose = args.verbose or getattr(args, "sub_verbose", False)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    config_path = getattr(args, "sub_config", None) or args.config
    config_path = config_path or default_config_path()
    try:
        if args.command == "enroll":
            return cmd_enroll(args, config_path)
        if args.command == "run":
            return cmd_run(config_path)
        if args.command == "once":
            return cmd_once(config_path, verbose=args.verbose)
        return cmd_status(args, config_path)
    except AgentError as exc:
        print(f"pi-dashboard-agent: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
