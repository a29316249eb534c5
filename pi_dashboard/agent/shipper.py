"""Ship pi's state to the server: heartbeat, snapshot, log tails, stats files.

Delivery is at-least-once: a source's position is committed only after the server
accepted the batch or it was written to the spool. While the server is unreachable
(or asks to back off), new batches go to the spool; once it answers again the spool
is drained oldest first, before anything new, so the server sees pi's order.
"""

import gzip
import hashlib
import logging
import secrets
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from pi_dashboard.agent import AGENT_VERSION, isotime, store_health
from pi_dashboard.agent.backoff import Backoff
from pi_dashboard.agent.client import ApiClient, Response
from pi_dashboard.agent.config import AgentConfig
from pi_dashboard.agent.errors import ServerError, ServerUnreachable
from pi_dashboard.agent.hostid import HostFingerprint
from pi_dashboard.agent.quarantine import QUARANTINE_DIR, Quarantine
from pi_dashboard.agent.sources import (
    CORPUS_FILE,
    EVENTS_FILE,
    STATS_DIR,
    STORE_FILE,
    SnapshotWatcher,
    StatsDoc,
    StatsWatcher,
)
from pi_dashboard.agent.spool import SNAPSHOT_EPOCH, SnapshotOrder, Spool
from pi_dashboard.agent.state import AgentState
from pi_dashboard.agent.tailer import MAX_BYTES, MAX_LINES, JsonlTailer, TailPosition

log = logging.getLogger(__name__)

INGEST_PATHS = {
    "snapshot": "/ingest/snapshot",
    "events": "/ingest/events",
    "corpus": "/ingest/corpus",
    "stats": "/ingest/stats",
}
LOG_FILES = {"events": EVENTS_FILE, "corpus": CORPUS_FILE}
GZIP_LEVEL = 6
# A batch the server failed on this many times in a row is searched for the lines
# it fails on (bisect); a batch holding more of them than MAX_ISOLATED is taken as
# a server that is broken for everything, not as bad lines.
BISECT_AFTER = 3
MAX_ISOLATED = 8


class Retryable(Exception):
    """The server could not take a batch now; it was (or will be) spooled."""


def _line_suspect(exc: ServerError) -> bool:
    """A 5xx that a line may cause. 502/503/504 or a Retry-After: the server as a
    whole is unavailable (database down, overloaded), and no line is to blame."""
    return (
        exc.status >= 500
        and exc.status not in (502, 503, 504)
        and exc.retry_after is None
    )


class Shipper:
    def __init__(
        self,
        *,
        cfg: AgentConfig,
        client: ApiClient,
        fingerprint: HostFingerprint,
        state: AgentState,
        hostname: str,
        pi_version: str | None,
    ) -> None:
        self.cfg, self.client, self.state = cfg, client, state
        self.fingerprint, self.hostname, self.pi_version = (
            fingerprint,
            hostname,
            pi_version,
        )
        self.spool = Spool(
            cfg.data_dir / "spool", max_bytes=int(cfg.knob("spool_max_bytes"))
        )
        tails = state.get("tails", {})
        self.tailers = {
            kind: JsonlTailer(
                cfg.state_dir / name, TailPosition.from_json(tails.get(kind))
            )
            for kind, name in LOG_FILES.items()
        }
        self.snapshot = SnapshotWatcher(
            cfg.state_dir / STORE_FILE, state.get("snapshot_hash", "")
        )
        self.stats = StatsWatcher(cfg.state_dir / STATS_DIR, state.get("stats", {}))
        self.quarantine = Quarantine(cfg.data_dir / QUARANTINE_DIR)
        self._failing = ("", 0)  # (digest of the batch, 5xx answers in a row)
        self.backoff = Backoff(base=1.0, cap=60.0)
        self.retry_at = 0.0
        self.heartbeat_due = 0.0
        self.poll_interval = 2.0
        self.on_reconnect: Callable[[], None] | None = None
        self.command_gate = threading.Lock()  # held by the poller from apply to ack
        # What this process delivered: {kind: {"batches", "stored", ...}} (`once -v`).
        self.shipped: dict[str, Counter[str]] = defaultdict(Counter)

    # -- the pass -------------------------------------------------------------------

    @property
    def online(self) -> bool:
        return time.monotonic() >= self.retry_at

    def tick(self) -> None:
        """One pass: heartbeat when due, drain the spool, ship whatever pi wrote."""
        if self.online and time.monotonic() >= self.heartbeat_due:
            self.heartbeat()
        if self.online and len(self.spool):
            self._drain()
        self._collect()

    def heartbeat(self) -> None:
        try:
            resp = self.client.post_json("/agent/heartbeat", self.heartbeat_payload())
        except (ServerUnreachable, ServerError) as exc:
            self._went_offline(exc)
            return
        self.state.contact.ok()
        self._back_online()
        self.heartbeat_due = time.monotonic() + self.cfg.knob("heartbeat_interval")
        if isinstance(resp, dict) and isinstance(
            resp.get("poll_interval"), int | float
        ):
            self.poll_interval = max(0.5, float(resp["poll_interval"]))

    def heartbeat_payload(self) -> dict[str, Any]:
        return {
            "hostname": self.hostname,
            "host": self.fingerprint.as_json(),
            "agent_version": AGENT_VERSION,
            "pi_version": self.pi_version,
            "state_dir": str(self.cfg.state_dir),
            "lag": self.lag(),
            "store": store_health.store_inspect(self.cfg.state_dir / STORE_FILE),
            "capabilities": store_health.capabilities(
                self.cfg.pi_command, self.cfg.agent_dir
            ),
            "ingest": self.ingest_counters(),
        }

    def ingest_counters(self) -> dict[str, Any]:
        return ingest_counters(self.state)

    def _problem(self, text: str) -> None:
        self.state.raw["ingest_problem"] = {
            "text": text[:500],
            "at": isotime.utc_now_iso(),
        }

    def lag(self) -> dict[str, Any]:
        oldest = self.spool.oldest()
        return {
            "events_bytes_behind": self.tailers["events"].bytes_behind(),
            "corpus_bytes_behind": self.tailers["corpus"].bytes_behind(),
            "spool_batches": len(self.spool),
            "spool_bytes": self.spool.total_bytes,
            "oldest_unsent_at": isotime.iso_from_epoch(oldest.created_at)
            if oldest
            else None,
            "last_shipped_at": self.state.contact.last_shipped_at,
        }

    def shipped_summary(self) -> str:
        """One line: what this process delivered, per kind."""
        if not self.shipped:
            return "shipped: nothing new"
        parts = []
        for kind, n in self.shipped.items():
            counts = ", ".join(f"{v} {k}" for k, v in n.items() if k != "batches")
            batches = f"{n['batches']} batch{'es' if n['batches'] != 1 else ''}"
            parts.append(f"{kind} {batches}" + (f" ({counts})" if counts else ""))
        return "shipped: " + "; ".join(parts)

    def is_caught_up(self) -> bool:
        return self.online and not len(self.spool)

    # -- reading pi's files ---------------------------------------------------------

    def _collect(self) -> None:
        try:
            self._collect_snapshot()
            for kind, tailer in self.tailers.items():
                if tailer.has_news():
                    self._drain_tail(kind, tailer)
            self._collect_stats()
        except BaseException:
            # Whatever was read but not delivered must be read again next pass.
            self.snapshot.forget_seen()
            self.stats.forget_seen()
            for tailer in self.tailers.values():
                tailer.forget_seen()
            raise

    def _collect_snapshot(self) -> None:
        # Not while a command is being applied and acked: the server confirms a
        # command from the first snapshot after its ack, so that snapshot must
        # come after the ack (the next pass ships it).
        if not self.command_gate.acquire(blocking=False):
            return
        try:
            found = self.snapshot.poll()
            if found is not None:
                data, digest = found
                self._deliver("snapshot", data, tag=self._next_snapshot_seq())
                self.snapshot.commit(digest)
                self._save()
        finally:
            self.command_gate.release()

    def _collect_stats(self) -> None:
        for chunk in _chunks(self.stats.poll()):
            self._deliver("stats", b"".join(d.line + b"\n" for d in chunk))
            self.stats.commit(chunk)
            self._save()

    def _drain_tail(self, kind: str, tailer: JsonlTailer) -> None:
        while (batch := tailer.read_batch()) is not None:
            if batch.skipped_oversize:
                log.error("%s: skipped a line over %d bytes", kind, MAX_BYTES)
                self.state.bump("oversize_lines_skipped", batch.skipped_oversize)
            if batch.rotated:
                log.info("%s: file rotated by pi; resuming", kind)
            if batch.lines:
                self._deliver(kind, batch.body)
            tailer.commit(batch.position)
            self._save()

    def _save(self) -> None:
        self.state.save(
            tails={k: t.position.as_json() for k, t in self.tailers.items()},
            snapshot_hash=self.snapshot.shipped_hash,
            stats=self.stats.shipped,
            host=self.fingerprint.id,
        )

    # -- delivery -------------------------------------------------------------------

    def _next_snapshot_seq(self) -> SnapshotOrder:
        """X-Snapshot-Seq for a new snapshot: persisted before it is sent, so a
        number is never reused, even after a crash (CONTRACT.md). The epoch is
        created with the counter: a wiped state file starts a new epoch, which the
        server takes as a new order, not as stale snapshots."""
        seq = int(self.state.get("snapshot_seq", 0)) + 1
        epoch = self.state.get("snapshot_epoch", None)
        if not isinstance(epoch, str) or not SNAPSHOT_EPOCH.fullmatch(epoch):
            epoch = secrets.token_hex(8)
        self.state.save(snapshot_seq=seq, snapshot_epoch=epoch)
        return SnapshotOrder(seq, epoch)

    def _deliver(
        self, kind: str, body: bytes, *, tag: SnapshotOrder | None = None
    ) -> None:
        gz = gzip.compress(body, GZIP_LEVEL)
        if self.online and not len(self.spool):
            try:
                self._send(kind, gz, tag=tag)
                return
            except Retryable:
                pass
        dropped = self.spool.push(kind, gz, tag=tag)
        if dropped:
            self.state.bump("spool_dropped_batches", dropped)

    def _drain(self) -> None:
        sent = 0
        while (item := self.spool.oldest()) is not None:
            try:
                self._send(item.kind, item.read(), tag=item.tag)
            except Retryable:
                return
            self.spool.remove(item)
            sent += 1
        log.info("spool drained: %d batch(es) delivered", sent)

    def _post(
        self, kind: str, gz: bytes, *, tag: SnapshotOrder | None = None
    ) -> Response:
        ctype = "application/json" if kind == "snapshot" else "application/x-ndjson"
        seq = tag.headers() if tag is not None else None
        return self.client.request(
            "POST",
            INGEST_PATHS[kind],
            body=gz,
            content_type=ctype,
            gzipped=True,
            extra_headers=seq,
        )

    def _send(
        self,
        kind: str,
        gz: bytes,
        *,
        rebound: bool = False,
        tag: SnapshotOrder | None = None,
    ) -> None:
        """POST one batch; raise Retryable if it must wait; drop it if refused."""
        try:
            resp = self._post(kind, gz, tag=tag)
        except ServerUnreachable as exc:
            self._went_offline(exc)
            raise Retryable from None
        except ServerError as exc:
            if exc.code == "agent_not_bound" and not rebound:
                self.heartbeat()  # the server forgot or never saw our host
                if not self.online:
                    raise Retryable from None
                return self._send(kind, gz, rebound=True, tag=tag)
            if _line_suspect(exc) and self._failed_again(gz) >= BISECT_AFTER:
                return self._isolate(kind, gz, exc)
            if exc.is_retryable or exc.code == "agent_not_bound":
                self._went_offline(exc)
                raise Retryable from None
            if exc.status == 413 and kind != "snapshot":
                return self._send_halves(kind, gz)
            log.error("%s batch refused, dropped: %s", kind, exc)
            self.state.bump("batches_refused")
            self.shipped[kind]["refused"] += 1
            return None
        self.state.contact.ok(shipped=True)
        self._back_online()
        self._count(kind, resp.data)
        return None

    def _failed_again(self, gz: bytes) -> int:
        """How many times in a row this batch failed (spooled batches keep bytes)."""
        digest = hashlib.sha256(gz).hexdigest()
        count = self._failing[1] + 1 if self._failing[0] == digest else 1
        self._failing = (digest, count)
        return count

    # -- one line must not block the rest (issue 9 item 4) --------------------------

    def _isolate(self, kind: str, gz: bytes, exc: ServerError) -> None:
        """Deliver what the server takes of a batch it keeps failing on; quarantine
        the lines it fails on. Raises Retryable when the server fails on everything
        (then it is the server, and nothing is quarantined)."""
        self._failing = ("", 0)
        body = gzip.decompress(gz)
        lines = [body] if kind == "snapshot" else [x for x in body.splitlines() if x]
        bad: list[bytes] = []
        settled = 0
        if len(lines) > 1:
            mid = len(lines) // 2
            settled = self._bisect(kind, lines[:mid], bad)
            settled += self._bisect(kind, lines[mid:], bad)
        else:
            bad = lines
        if len(lines) > 1 and (settled == 0 or len(bad) > MAX_ISOLATED):
            self._went_offline(exc)
            raise Retryable from None
        for line in bad:
            self.quarantine.add(kind=kind, line=line, reason=str(exc))
        self.state.bump("quarantined_lines", len(bad))
        self._problem(f"{kind}: {len(bad)} line(s) quarantined after {exc}")
        self._save()  # `status` reads the counters from disk
        log.error(
            "%s: server fails on %d line(s) every time; quarantined in %s, moving on",
            kind,
            len(bad),
            self.quarantine.path,
        )

    def _bisect(self, kind: str, lines: list[bytes], bad: list[bytes]) -> int:
        """Send `lines`, halving on a line-suspect 5xx; a single line that fails is
        added to `bad`. Returns how many lines the server settled (took or refused)."""
        if len(bad) > MAX_ISOLATED:
            return 0
        try:
            body = b"\n".join(lines) + b"\n"
            resp = self._post(kind, gzip.compress(body, GZIP_LEVEL))
        except ServerUnreachable as exc:
            self._went_offline(exc)
            raise Retryable from None
        except ServerError as exc:
            if not _line_suspect(exc):
                if exc.is_retryable:
                    self._went_offline(exc)
                    raise Retryable from None
                log.error("%s batch refused, dropped: %s", kind, exc)
                self.state.bump("batches_refused")
                return len(lines)
            if len(lines) == 1:
                bad.append(lines[0])
                return 0
            mid = len(lines) // 2
            return self._bisect(kind, lines[:mid], bad) + self._bisect(
                kind, lines[mid:], bad
            )
        self._count(kind, resp.data)
        return len(lines)

    def _send_halves(self, kind: str, gz: bytes) -> None:
        lines = gzip.decompress(gz).splitlines()
        if len(lines) < 2:
            log.error("%s: one line refused as too large; dropped", kind)
            self.state.bump("batches_refused")
            return
        mid = len(lines) // 2
        for part in (lines[:mid], lines[mid:]):
            self._send(kind, gzip.compress(b"\n".join(part) + b"\n", GZIP_LEVEL))

    def _count(self, kind: str, data: Any) -> None:
        self.shipped[kind]["batches"] += 1
        if not isinstance(data, dict) or kind == "snapshot":
            return
        for key in ("stored", "duplicate", "rejected"):
            if isinstance(data.get(key), int):
                self.state.bump(f"{kind}_{key}", data[key])
                self.shipped[kind][key] += data[key]
        if data.get("rejected"):
            bad = [r for r in data.get("results", []) if r.get("status") == "rejected"]
            codes = sorted({str(r.get("code")) for r in bad})
            self._problem(
                f"{kind}: {data['rejected']} line(s) rejected ({', '.join(codes)})"
            )
            log.warning(
                "%s: server rejected %d line(s), e.g. %s",
                kind,
                data["rejected"],
                bad[:1],
            )

    def _back_online(self) -> None:
        if self.backoff.failures:
            self.backoff.reset()
            if self.on_reconnect is not None:
                self.on_reconnect()  # e.g. cut the command poller's backoff short

    def _went_offline(self, exc: Exception) -> None:
        retry_after = getattr(exc, "retry_after", None)
        delay = self.backoff.next_delay(retry_after)
        self.retry_at = time.monotonic() + delay
        self.state.contact.failed(str(exc))
        log.warning("%s; spooling, next attempt in %.1fs", exc, delay)


def ingest_counters(state: AgentState) -> dict[str, Any]:
    """The heartbeat's `ingest` (shared contract): cumulative, since install."""
    counters = state.get("counters", {})
    problem = state.get("ingest_problem", None) or {}
    return {
        "rejected_lines": sum(
            counters.get(f"{kind}_rejected", 0) for kind in INGEST_PATHS
        ),
        "quarantined_lines": counters.get("quarantined_lines", 0),
        "spool_dropped": counters.get("spool_dropped_batches", 0),
        "last_problem": problem.get("text"),
        "last_problem_at": problem.get("at"),
    }


def _chunks(docs: list[StatsDoc]) -> list[list[StatsDoc]]:
    chunks: list[list[StatsDoc]] = [[]]
    size = 0
    for doc in docs:
        if len(chunks[-1]) >= MAX_LINES or size + len(doc.line) + 1 > MAX_BYTES:
            chunks.append([])
            size = 0
        chunks[-1].append(doc)
        size += len(doc.line) + 1
    return [c for c in chunks if c]
