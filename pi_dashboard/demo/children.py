"""Child processes of the demo: one agent per demo host, the scripted model server.

Started like the launcher starts its own (a session each, and a parent-death signal),
so none outlives the demo even if the demo is killed outright.
"""

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pi_dashboard.launcher import procs

RESTART_AFTER_SECONDS = 5.0


@dataclass
class Child:
    """A process the demo keeps running; restarted (after a pause) when it dies."""

    name: str
    argv: list[str]
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    died_at: float | None = None

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.proc = procs.spawn(self.argv, stdout=out)
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
            self.start()


def stop_all(children: list[Child]) -> None:
    procs.stop_all([c.proc for c in children if c.proc is not None], grace=10.0)


def python_module(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]
