"""`python -m pi_dashboard.demo [--if-empty]`: run the demo fleet until stopped.

`make run` starts it with `--if-empty`: the demo runs on a database without hosts,
or resumes on the database it filled before; a database with real hosts is left
alone, except that the demo's probe endpoints and schedule are paused there (its
model server is gone). `--pause` only does that (`PI_DEMO=0 make run`).
"""

import argparse
import os
import sys
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_dashboard.demo")
    parser.add_argument(
        "--if-empty",
        action="store_true",
        help="only when the database has no hosts (or only this demo's hosts)",
    )
    parser.add_argument(
        "--pause",
        action="store_true",
        help="only pause the demo's probe endpoints and schedule, then exit",
    )
    parser.add_argument(
        "--var",
        type=Path,
        default=Path(os.environ.get("PI_DEMO_DIR") or ROOT / "var" / "demo"),
        help="where the demo keeps its pi hosts (default var/demo, or $PI_DEMO_DIR)",
    )
    parser.add_argument(
        "--server",
        default=os.environ.get("PI_DASHBOARD_URL", "http://127.0.0.1:8000"),
        help="the dashboard the demo agents ship to",
    )
    parser.add_argument("--tick", type=float, default=2.0, help="seconds per call")
    parser.add_argument("--model-server-port", type=int, default=0)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pi_dashboard.settings")
    django.setup()
    # The probe endpoints' first run is enqueued from here: use our broker.
    import pi_dashboard.celery  # noqa: F401
    from pi_dashboard.demo import setup, supervisor
    from pi_dashboard.launcher.services import free_port

    if args.pause:
        paused = setup.probes_pause()
        print(
            f"demo: off; paused its probes ({paused} endpoints/schedules)", flush=True
        )
        return 0
    if args.if_empty and not setup.fleet_is_empty_or_demo():
        paused = setup.probes_pause()
        print(
            "demo: the database already has real hosts; no demo"
            + (f" (paused its probes: {paused} endpoints/schedules)" if paused else "")
            + ". Beside the real hosts: `PI_DEMO=always make run`.",
            flush=True,
        )
        return 0
    options = supervisor.Options(
        var_dir=args.var.resolve(),
        server_url=args.server.rstrip("/"),
        tick_seconds=args.tick,
        model_server_port=args.model_server_port or free_port(),
    )
    return supervisor.run(options)


if __name__ == "__main__":
    sys.exit(main())
