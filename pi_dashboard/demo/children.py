"""Child processes of the demo: one agent per demo host, the scripted model server.

They stay in the demo's process group, so stopping the demo's group (what the
launcher does) stops them too; the demo also stops them itself on exit.
"""

import contextlib
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

RESTART_AFTER_SECONDS = 5.0


@dataclass
class Child:
    """A process the demo keeps running; restarted (after a pause) when it dies."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str] | None = None
    proc: subprocess.Popen[bytes] | None = None
    died_at: float | None = None
    restarts: int = field(default=0)

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env
            )
        self.died_at = None

    def check(self) -> None:
        """Restart a dead child, at most once per RESTART_AFTER_SECONDS."""
        if self.proc is None or self.proc.poll() is None:
            return
        now = time.monotonic()
        if self.died_at is None:
            self.died_at = now
            print(
                f"demo: {self.name} exited with {self.proc.returncode} "
                f"(log: {self.log}); restarting",
                flush=True,
            )
        elif now - self.died_at >= RESTART_AFTER_SECONDS:
            self.restarts += 1
            self.start()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def stop_all(children: list[Child]) -> None:
    for child in children:
        with contextlib.suppress(ProcessLookupError):
            if child.proc is not None and child.proc.poll() is None:
                child.proc.send_signal(signal.SIGTERM)
    for child in children:
        child.stop()


def python_module(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]
