"""Delivery rules against a scripted HTTP stub (status codes the real server rarely
gives on demand): Retry-After on 429, 413 splitting, refused batches, rebinding."""

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.agent.client import ApiClient
from pi_dashboard.agent.config import AgentConfig
from pi_dashboard.agent.hostid import fingerprint_from_override
from pi_dashboard.agent.shipper import Shipper
from pi_dashboard.agent.state import AgentState

Reply = tuple[int, dict[str, Any], dict[str, str]]


class Stub:
    """Answers each request with `script(path, lines)`; records what it received."""

    def __init__(self, script: Callable[[str, list[bytes]], Reply]) -> None:
        self.script = script
        self.received: list[tuple[str, list[bytes], float]] = []
        self.seqs: list[tuple[str, str | None]] = []  # (path, X-Snapshot-Seq)
        self.epochs: list[str | None] = []  # X-Snapshot-Epoch of each snapshot
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                path = self.path.removeprefix("/api/v1")
                lines = body.splitlines()
                stub.received.append((path, lines, time.monotonic()))
                stub.seqs.append((path, self.headers.get("X-Snapshot-Seq")))
                if path == "/ingest/snapshot":
                    stub.epochs.append(self.headers.get("X-Snapshot-Epoch"))
                status, data, headers = stub.script(path, lines)
                payload = json.dumps(data).encode()
                self.send_response(status)
                for k, v in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def paths(self) -> list[str]:
        return [p for p, _, _ in self.received]


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[str, list[bytes]], Reply]], Stub]]:
    stubs: list[Stub] = []

    def start(script: Callable[[str, list[bytes]], Reply]) -> Stub:
        stub = Stub(script)
        threading.Thread(target=stub.httpd.serve_forever, daemon=True).start()
        stubs.append(stub)
        return stub

    yield start
    for stub in stubs:
        stub.httpd.shutdown()


def ok(path: str, lines: list[bytes]) -> Reply:
    if path == "/agent/heartbeat":
        return 200, {"poll_interval": 2, "host": "h", "server_time": "x"}, {}
    if path == "/ingest/snapshot":
        return 200, {"status": "stored", "hosts": 1, "models": 1, "changes": 0}, {}
    n = len([line for line in lines if line.strip()])
    return 200, {"stored": n, "duplicate": 0, "rejected": 0, "results": []}, {}


def shipper_for(cfg: AgentConfig) -> Shipper:
    assert cfg.host_override is not None
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    return Shipper(
        cfg=cfg,
        client=ApiClient(cfg.server, cfg.token),
        fingerprint=fingerprint_from_override(cfg.host_override),
        state=AgentState(cfg.data_dir),
        hostname="test-box",
        pi_version=None,
    )


def test_429_retry_after_is_honoured_then_the_spool_drains_in_order(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    busy_until = time.monotonic() + 1.0

    def script(path: str, lines: list[bytes]) -> Reply:
        if path.startswith("/ingest/") and time.monotonic() < busy_until:
            return 429, {"detail": "busy", "code": "overloaded"}, {"Retry-After": "1"}
        return ok(path, lines)

    stub = serve(script)
    shipper = shipper_for(make_config(server=stub.url, state_dir=amd_state))
    shipper.tick()
    assert stub.paths() == ["/agent/heartbeat", "/ingest/snapshot"]
    assert len(shipper.spool) == 4  # the rest waited in the spool, not re-sent
    assert shipper.retry_at - time.monotonic() > 0.8  # Retry-After: 1 respected
    shipper.tick()
    assert len(stub.received) == 2  # still inside the Retry-After window
    time.sleep(max(0.0, shipper.retry_at - time.monotonic()) + 0.05)
    shipper.tick()
    sent = stub.paths()[2:]
    assert sent[:4] == ["/ingest/snapshot", "/ingest/events", "/ingest/corpus",
                        "/ingest/stats"]  # fmt: skip
    assert len(shipper.spool) == 0
    assert stub.received[2][2] - stub.received[1][2] >= 1.0
    events = [lines for p, lines, _ in stub.received if p == "/ingest/events"]
    assert sum(len(lines) for lines in events) == 380


def test_413_splits_the_batch_until_it_fits(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    def script(path: str, lines: list[bytes]) -> Reply:
        if path == "/ingest/events" and len(lines) > 100:
            return 413, {"detail": "too many lines", "code": "too_large"}, {}
        return ok(path, lines)

    stub = serve(script)
    shipper = shipper_for(make_config(server=stub.url, state_dir=amd_state))
    shipper.tick()
    accepted = [
        line
        for p, lines, _ in stub.received
        if p == "/ingest/events" and len(lines) <= 100
        for line in lines
    ]
    assert (
        accepted == (amd_state / "tool-recovery-events.jsonl").read_bytes().splitlines()
    )
    assert len(shipper.spool) == 0


def test_a_refused_batch_is_dropped_and_counted_not_retried_forever(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    def script(path: str, lines: list[bytes]) -> Reply:
        if path == "/ingest/snapshot":
            return 400, {"detail": "not a store", "code": "invalid_snapshot"}, {}
        return ok(path, lines)

    stub = serve(script)
    shipper = shipper_for(make_config(server=stub.url, state_dir=amd_state))
    shipper.tick()
    shipper.tick()
    assert stub.paths().count("/ingest/snapshot") == 1
    assert shipper.state.get("counters", {})["batches_refused"] == 1
    assert shipper.state.get("counters", {})["events_stored"] == 380


def test_an_unbound_agent_heartbeats_and_retries(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    bound = threading.Event()

    def script(path: str, lines: list[bytes]) -> Reply:
        if path == "/agent/heartbeat":
            if len(stub.received) > 1:
                bound.set()
            return ok(path, lines)
        if not bound.is_set():
            return 409, {"detail": "heartbeat first", "code": "agent_not_bound"}, {}
        return ok(path, lines)

    stub = serve(script)
    shipper = shipper_for(make_config(server=stub.url, state_dir=amd_state))
    shipper.heartbeat()
    shipper.tick()
    assert stub.paths()[:4] == [
        "/agent/heartbeat", "/ingest/snapshot", "/agent/heartbeat", "/ingest/snapshot"
    ]  # fmt: skip
    assert len(shipper.spool) == 0
    beat = json.loads(stub.received[0][1][0])
    assert beat["host"]["id"] == "amd-ryzen-9-7950x-16-core-processor-32c-64g"
    assert beat["lag"]["events_bytes_behind"] > 0  # nothing shipped yet
    assert beat["pi_version"] is None


def test_a_failed_spool_write_loses_nothing(
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.agent.e2e_support import free_port

    shipper = shipper_for(
        make_config(server=f"http://127.0.0.1:{free_port()}", state_dir=amd_state)
    )
    real_push = shipper.spool.push

    def disk_full(kind: str, gz: bytes, **_: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shipper.spool, "push", disk_full)
    with pytest.raises(OSError, match="No space left"):
        shipper.tick()
    assert shipper.snapshot.shipped_hash == ""  # nothing was marked as shipped
    monkeypatch.setattr(shipper.spool, "push", real_push)
    shipper.tick()
    assert [item.kind for item in shipper.spool._items] == [
        "snapshot", "events", "corpus", "stats"
    ]  # fmt: skip
    assert shipper.tailers["events"].bytes_behind() == 0


def test_no_snapshot_is_shipped_between_applying_a_command_and_its_ack(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    stub = serve(ok)
    shipper = shipper_for(make_config(server=stub.url, state_dir=amd_state))
    with shipper.command_gate:  # the command poller is between apply and ack
        shipper.tick()
    assert "/ingest/snapshot" not in stub.paths()
    assert "/ingest/events" in stub.paths()
    shipper.tick()  # the next pass ships the store as the command left it
    assert stub.paths().count("/ingest/snapshot") == 1


def test_snapshots_carry_a_persisted_sequence_kept_by_re_sends(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    refuse = {"snapshot": True}

    def script(path: str, lines: list[bytes]) -> Reply:
        if path == "/ingest/snapshot" and refuse["snapshot"]:
            return 503, {"detail": "down", "code": "unavailable"}, {"Retry-After": "0"}
        return ok(path, lines)

    stub = serve(script)
    cfg = make_config(server=stub.url, state_dir=amd_state)
    shipper = shipper_for(cfg)
    shipper.tick()  # snapshot 1 refused: spooled
    refuse["snapshot"] = False
    shipper.retry_at = 0.0
    shipper.tick()  # the spooled snapshot 1 is re-sent with its own number
    store = amd_state / "model-adaptation.json"
    store.write_text(store.read_text().replace('"version":1', '"version": 1', 1))
    shipper.tick()  # pi wrote again: snapshot 2
    restarted = shipper_for(cfg)  # the counter survives a restart
    store.write_text(store.read_text() + "\n")
    restarted.tick()

    snapshots = [seq for path, seq in stub.seqs if path == "/ingest/snapshot"]
    assert snapshots == ["1", "1", "2", "3"]
    assert all(seq is None for path, seq in stub.seqs if path != "/ingest/snapshot")
    # One epoch, created with the counter and kept in state.json across the restart.
    epoch = AgentState(cfg.data_dir).get("snapshot_epoch", None)
    assert isinstance(epoch, str)
    assert len(epoch) == 16
    assert stub.epochs == [epoch] * 4


def test_a_wiped_state_file_starts_a_new_snapshot_epoch(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    stub = serve(ok)
    cfg = make_config(server=stub.url, state_dir=amd_state)
    shipper_for(cfg).tick()
    first = AgentState(cfg.data_dir).get("snapshot_epoch", None)
    (cfg.data_dir / "state.json").unlink()  # the agent reinstalled
    shipper_for(cfg).tick()
    second = AgentState(cfg.data_dir).get("snapshot_epoch", None)
    snapshots = [seq for path, seq in stub.seqs if path == "/ingest/snapshot"]
    assert snapshots == ["1", "1"]
    assert first
    assert second
    assert first != second
    assert stub.epochs == [first, second]


def test_a_spooled_snapshot_keeps_its_epoch_across_a_restart(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    refuse = {"snapshot": True}

    def script(path: str, lines: list[bytes]) -> Reply:
        if path == "/ingest/snapshot" and refuse["snapshot"]:
            return 503, {"detail": "down", "code": "unavailable"}, {"Retry-After": "0"}
        return ok(path, lines)

    stub = serve(script)
    cfg = make_config(server=stub.url, state_dir=amd_state)
    shipper_for(cfg).tick()  # refused: spooled, named with its order
    epoch = AgentState(cfg.data_dir).get("snapshot_epoch", None)
    refuse["snapshot"] = False
    restarted = shipper_for(cfg)  # the spool is read back from disk
    restarted.retry_at = 0.0
    restarted.tick()
    assert stub.epochs == [epoch, epoch]
    assert [s for p, s in stub.seqs if p == "/ingest/snapshot"] == ["1", "1"]


def test_the_heartbeat_reports_the_store_and_capabilities(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    stub = serve(ok)
    store = amd_state / "model-adaptation.json"
    shipper = shipper_for(make_config(server=stub.url, state_dir=amd_state))
    shipper.heartbeat()
    store.write_text('{"version":2,"hosts":{}}')
    shipper.heartbeat()
    first, second = (
        json.loads(lines[0]) for p, lines, _ in stub.received if p == "/agent/heartbeat"
    )
    assert first["store"] == {
        "status": "ok",
        "reason": "",
        "host_ids": ["amd-ryzen-9-7950x-16-core-processor-32c-64g"],
    }
    assert second["store"]["status"] == "unreadable"
    assert second["store"]["reason"] == "version is 2, pi reads only 1"
    assert first["capabilities"] == {
        "probe": False,
        "rpc": False,
        "why": "no pi_command in the agent config: commands edit pi's store file "
        "and probes cannot run (enroll with --pi-command pi)",
    }


def test_the_heartbeat_names_the_models_pis_models_json_adds(
    serve: Callable[..., Stub],
    make_config: Callable[..., AgentConfig],
    amd_state: Path,
) -> None:
    """Offered on the host page for a probe of a model not yet in the store."""
    stub = serve(ok)
    cfg = make_config(server=stub.url, state_dir=amd_state)
    (cfg.agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "ollama": {
                        "baseUrl": "http://localhost:11434/v1",
                        "models": [{"id": "llama3.1:8b"}, {"id": "gpt-oss:20b"}],
                    },
                    "broken": {"models": [{"name": "no id"}, "x"]},
                }
            }
        )
    )
    shipper = shipper_for(cfg)
    shipper.heartbeat()
    (cfg.agent_dir / "models.json").write_text("{not json")
    shipper.heartbeat()
    first, second = (
        json.loads(lines[0]) for p, lines, _ in stub.received if p == "/agent/heartbeat"
    )
    assert first["capabilities"]["models"] == [
        "ollama/llama3.1:8b",
        "ollama/gpt-oss:20b",
    ]
    assert "models" not in second["capabilities"]
