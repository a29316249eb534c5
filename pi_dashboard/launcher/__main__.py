"""`python -m pi_dashboard.launcher run|test|services`: behind make run/test."""

import argparse
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

from pi_dashboard.launcher.services import services

ROOT = Path(__file__).resolve().parents[2]
VAR = ROOT / "var"
PY = sys.executable


def secret_key() -> str:
    """A per-checkout secret key kept in var/, so sessions survive restarts."""
    path = VAR / "secret-key"
    if not path.exists():
        VAR.mkdir(exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([PY, str(ROOT / "manage.py"), *args], env=env, check=True)


def start(name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    print(f"  starting {name}: {' '.join(argv[:4])}…", flush=True)
    return subprocess.Popen(argv, env=env, cwd=ROOT, start_new_session=True)


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def command_run(env: dict[str, str], port: int) -> int:
    env = {**env, "PI_DASHBOARD_DEV": "1"}
    env.setdefault("DJANGO_SECRET_KEY", secret_key())
    env.setdefault("PI_PROBES_ALLOW_PRIVATE", "1")
    env.setdefault("PI_DASHBOARD_URL", f"http://127.0.0.1:{port}")
    manage("migrate", "--noinput", env=env)
    manage("ensure_admin", env=env)
    procs = [
        start(
            "web",
            [
                PY,
                "-m",
                "gunicorn",
                "pi_dashboard.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "8",
                "--timeout",
                "60",
                "--access-logfile",
                "-",
                "--access-logformat",
                "%(m)s %(U)s %(s)s %(M)sms",
            ],
            env,
        ),
        start(
            "worker",
            [
                PY,
                "-m",
                "celery",
                "-A",
                "pi_dashboard",
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                "4",
            ],
            env,
        ),
        start(
            "beat",
            [
                PY,
                "-m",
                "celery",
                "-A",
                "pi_dashboard",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(VAR / "celerybeat-schedule"),
            ],
            env,
        ),
    ]
    if (ROOT / "pi_dashboard" / "demo" / "__main__.py").exists():
        procs.append(start("demo", [PY, "-m", "pi_dashboard.demo", "--if-empty"], env))
    print(
        f"\npi-dashboard is up: http://127.0.0.1:{port}/  (Ctrl-C stops everything)\n",
        flush=True,
    )
    try:
        while all(p.poll() is None for p in procs[:3]):
            time.sleep(0.5)
        print("A process exited; stopping the rest.", flush=True)
        return 1
    except KeyboardInterrupt:
        print("\nStopping…", flush=True)
        return 0
    finally:
        stop_all(procs)


def command_test(env: dict[str, str], pytest_args: list[str]) -> int:
    env = {**env, "PI_DASHBOARD_DEV": "1"}
    steps = [
        [PY, "-m", "ruff", "check", "."],
        [PY, "-m", "ruff", "format", "--check", "."],
        [PY, "-m", "mypy", "pi_dashboard"],
        [PY, "-m", "pytest", *pytest_args],
    ]
    for step in steps:
        print(f"\n$ {' '.join(step[2:])}", flush=True)
        code = subprocess.run(step, env=env, cwd=ROOT).returncode
        if code != 0:
            return code
    return 0


def raise_interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops everything as Ctrl-C does, so the servers shut down cleanly."""
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_dashboard.launcher")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="set up and start web, worker and beat")
    run.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    test = sub.add_parser("test", help="lint, type-check and run the test suite")
    test.add_argument("pytest_args", nargs=argparse.REMAINDER)
    sub.add_parser("services", help="start the embedded servers and wait")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, raise_interrupt)

    VAR.mkdir(exist_ok=True)
    with services(VAR) as started:
        env = {**os.environ, **started}
        if args.command == "run":
            return command_run(env, args.port)
        if args.command == "test":
            extra = [a for a in args.pytest_args if a != "--"]
            return command_test(env, extra)
        for key, value in started.items():
            print(f"export {key}='{value}'", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
