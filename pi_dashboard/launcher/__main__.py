"""`python -m pi_dashboard.launcher run|test|services`: behind make run/test."""

import argparse
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from pi_dashboard.launcher.procs import port_in_use, spawn, stop_all
from pi_dashboard.launcher.services import services, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
VAR = ROOT / "var"
# While `make run` serves, the URLs of its embedded servers, so that `make manage`
# talks to the same ones instead of starting (and then stopping) a second set.
RUNNING_ENV = VAR / "running-services.json"
PY = sys.executable
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


class LaunchError(Exception):
    """A problem the user can fix; printed without a traceback."""


def secret_key() -> str:
    """A per-checkout secret key kept in var/, so sessions survive restarts."""
    path = VAR / "secret-key"
    if not path.exists():
        VAR.mkdir(exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


def manage(*args: str, env: dict[str, str]) -> None:
    code = subprocess.run([PY, str(ROOT / "manage.py"), *args], env=env).returncode
    if code != 0:
        raise LaunchError(f"`manage.py {' '.join(args)}` failed (exit {code})")


def dev_env(env: dict[str, str]) -> dict[str, str]:
    """What `make run` adds: development mode and the checkout's own secret key."""
    env = {**env, "PI_DASHBOARD_DEV": "1"}
    env.setdefault("DJANGO_SECRET_KEY", secret_key())
    return env


def running_services() -> dict[str, str] | None:
    """The embedded servers of a live `make run`, if there is one."""
    try:
        started: dict[str, str] = json.loads(RUNNING_ENV.read_text())
    except (OSError, ValueError):
        return None
    port = started.get("REDIS_URL", "").rsplit(":", 1)[-1].split("/")[0]
    if not port.isdigit():
        return None
    try:
        wait_for_port(int(port), timeout=0.5)
    except RuntimeError:
        return None  # left behind by a launcher that was killed
    return started


def command_manage(env: dict[str, str], args: list[str]) -> int:
    """`manage.py ARGS` with the settings `make run` uses (`make manage ARGS=...`)."""
    if not args:
        args = ["help"]
    return subprocess.run(
        [PY, str(ROOT / "manage.py"), *args], env=dev_env(env)
    ).returncode


def start(name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    print(f"  starting {name}: {' '.join(argv[2:5])}…", flush=True)
    return spawn(argv, env=env, cwd=ROOT)


def server_argvs(port: int) -> dict[str, list[str]]:
    celery = [PY, "-m", "celery", "-A", "pi_dashboard"]
    return {
        "web": [
            *(PY, "-m", "gunicorn", "pi_dashboard.wsgi"),
            *("--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "8"),
            # Agents poll every few seconds; their requests would drown the
            # console, so the access log (path only, never query strings) is a file.
            *("--timeout", "60", "--access-logfile", str(VAR / "web-access.log")),
            *("--access-logformat", "%(t)s %(m)s %(U)s %(s)s %(M)sms"),
        ],
        "worker": [*celery, "worker", "--loglevel", "INFO", "--concurrency", "4"],
        "beat": [
            *(*celery, "beat", "--loglevel", "INFO"),
            *("--schedule", str(VAR / "celerybeat-schedule")),
        ],
    }


def demo_argv(env: dict[str, str]) -> list[str]:
    """How `make run` runs the demo: PI_DEMO=0 pauses it, PI_DEMO=always runs it
    beside real hosts, anything else runs it on an empty (or demo) database."""
    demo = [PY, "-m", "pi_dashboard.demo"]
    wanted = env.get("PI_DEMO", "1").strip().lower()
    if not (ROOT / "pi_dashboard" / "demo" / "__main__.py").exists():
        return []
    if wanted in FALSE_WORDS:
        return [*demo, "--pause"]
    return demo if wanted == "always" else [*demo, "--if-empty"]


def command_run(env: dict[str, str], port: int) -> int:
    if port_in_use(port):
        raise LaunchError(
            f"port {port} is already in use; pick another: `PORT={port + 1} make run`"
        )
    env = dev_env(env)
    env.setdefault("PI_PROBES_ALLOW_PRIVATE", "1")  # the demo's model server is local
    env.setdefault("PI_DASHBOARD_URL", f"http://127.0.0.1:{port}")
    manage("migrate", "--noinput", env=env)
    manage("ensure_admin", env=env)
    # Static files are served from the source tree (finders); an absent STATIC_ROOT
    # only makes whitenoise warn on every start.
    Path(env.get("DJANGO_STATIC_ROOT") or VAR / "static").mkdir(
        parents=True, exist_ok=True
    )
    procs = [start(name, argv, env) for name, argv in server_argvs(port).items()]
    started = {k: env[k] for k in ("DATABASE_URL", "REDIS_URL") if k in env}
    RUNNING_ENV.write_text(json.dumps(started))
    demo = demo_argv(env)
    if demo and demo[-1] == "--pause":
        subprocess.run(demo, env=env, cwd=ROOT, check=False)
    elif demo:
        procs.append(start("demo", demo, env))
    print(
        f"\npi-dashboard is up: http://127.0.0.1:{port}/  (Ctrl-C stops everything;"
        " requests are logged to var/web-access.log)\n",
        flush=True,
    )
    try:
        # web, worker and beat are essential; the demo may come and go.
        while all(p.poll() is None for p in procs[:3]):
            time.sleep(0.5)
        print("A server process exited; stopping the rest.", flush=True)
        return 1
    except KeyboardInterrupt:
        print("\nStopping…", flush=True)
        return 0
    finally:
        RUNNING_ENV.unlink(missing_ok=True)
        stop_all(procs)


def command_test(env: dict[str, str], pytest_args: list[str]) -> int:
    """Lint, format check, type check and the suite; every step runs, so one
    report shows all that is wrong."""
    env = {**env, "PI_DASHBOARD_DEV": "1"}
    steps = {
        "ruff check": [PY, "-m", "ruff", "check", "."],
        "ruff format": [PY, "-m", "ruff", "format", "--check", "."],
        "mypy": [PY, "-m", "mypy", "pi_dashboard"],
        "pytest": [PY, "-m", "pytest", *pytest_args],
    }
    failed: dict[str, int] = {}
    for name, step in steps.items():
        print(f"\n$ {' '.join(step[2:])}", flush=True)
        code = subprocess.run(step, env=env, cwd=ROOT).returncode
        if code != 0:
            failed[name] = code
    if failed:
        print(f"\nmake test: FAILED: {', '.join(failed)}", flush=True)
        return next(iter(failed.values()))
    print("\nmake test: all passed", flush=True)
    return 0


def command_pytest(env: dict[str, str], pytest_args: list[str]) -> int:
    env = {**env, "PI_DASHBOARD_DEV": "1"}
    return subprocess.run(
        [PY, "-m", "pytest", *pytest_args], env=env, cwd=ROOT
    ).returncode


def command_services(started: dict[str, str]) -> int:
    for key, value in started.items():
        print(f"export {key}='{value}'", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


STOPPING = threading.Event()


def raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops everything as Ctrl-C does, so the servers shut down cleanly.

    Only the first signal: SIGTERM to make's process group arrives twice (make
    forwards it to us), and a second interrupt would abort the ordered stop, taking
    PostgreSQL and Redis down under the servers still running.
    """
    if STOPPING.is_set():
        return
    STOPPING.set()
    raise KeyboardInterrupt


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m pi_dashboard.launcher")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="set up and start web, worker, beat and demo")
    run.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    test = sub.add_parser("test", help="lint, type-check and run the test suite")
    test.add_argument("pytest_args", nargs=argparse.REMAINDER)
    only = sub.add_parser("pytest", help="only pytest (benchmarks: make bench)")
    only.add_argument("pytest_args", nargs=argparse.REMAINDER)
    sub.add_parser("services", help="start the embedded servers and wait")
    manage_cmd = sub.add_parser(
        "manage", help="manage.py with make run's settings and servers"
    )
    manage_cmd.add_argument("manage_args", nargs=argparse.REMAINDER)
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    # SIGINT too: a launcher started from a script may inherit SIGINT ignored, and
    # Ctrl-C must still stop everything.
    signal.signal(signal.SIGTERM, raise_interrupt)
    signal.signal(signal.SIGINT, raise_interrupt)
    VAR.mkdir(exist_ok=True)
    try:
        if args.command == "manage":
            extra = [a for a in args.manage_args if a != "--"]
            live = running_services()
            with contextlib.nullcontext(live) if live else services(VAR) as started:
                return command_manage({**os.environ, **started}, extra)
        with services(VAR) as started:
            env = {**os.environ, **started}
            if args.command == "run":
                return command_run(env, args.port)
            if args.command in {"test", "pytest"}:
                extra = [a for a in args.pytest_args if a != "--"]
                if args.command == "pytest":
                    env["PI_DASHBOARD_DEV"] = "1"
                    return subprocess.run(
                        [PY, "-m", "pytest", *extra], env=env
                    ).returncode
                return command_test(env, extra)
            return command_services(started)
    except LaunchError as exc:
        print(f"\nmake: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
