"""A bounded on-disk FIFO of gzip batches that could not be delivered yet.

pi rotates its logs, so lines not read during a long outage would be gone; reading
them into the spool keeps them. The spool is bounded: past `max_bytes` the oldest
batches are dropped, and the caller counts and reports them.
"""

import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)
# `<seq>.<kind>[-<order>[_<epoch>]].gz`; a snapshot's tag is its X-Snapshot-Seq and
# X-Snapshot-Epoch, kept for re-sends.
# The agent makes its epochs as 16 hex digits (secrets.token_hex(8)).
SNAPSHOT_EPOCH = re.compile(r"[0-9a-f]{1,64}")
_NAME = re.compile(
    r"^(\d{12})\.(snapshot|events|corpus|stats)(?:-(\d+)(?:_([0-9a-f]{1,64}))?)?\.gz$"
)


@dataclass(frozen=True)
class SnapshotOrder:
    """A snapshot's place in the agent's send order (protocol.md): the counter, and
    the epoch created with it (a reinstalled agent starts a new epoch at 1)."""

    seq: int
    epoch: str | None = None

    def headers(self) -> dict[str, str]:
        sent = {"X-Snapshot-Seq": str(self.seq)}
        if self.epoch:
            sent["X-Snapshot-Epoch"] = self.epoch
        return sent

    def suffix(self) -> str:
        return f"-{self.seq}" + (f"_{self.epoch}" if self.epoch else "")


@dataclass(frozen=True)
class SpoolItem:
    seq: int
    kind: str
    size: int
    path: Path
    tag: SnapshotOrder | None = None

    def read(self) -> bytes:
        return self.path.read_bytes()

    @property
    def created_at(self) -> float:
        try:
            return self.path.stat().st_mtime
        except FileNotFoundError:
            return time.time()


class Spool:
    def __init__(self, directory: Path, *, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._items: list[SpoolItem] = []
        for path in directory.iterdir():
            m = _NAME.match(path.name)
            if m:
                tag = SnapshotOrder(int(m[3]), m[4]) if m[3] else None
                item = SpoolItem(int(m[1]), m[2], path.stat().st_size, path, tag)
                self._items.append(item)
            elif path.name.endswith(".tmp"):
                path.unlink(missing_ok=True)  # a push interrupted by a crash
        self._items.sort(key=lambda i: i.seq)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def total_bytes(self) -> int:
        return sum(i.size for i in self._items)

    def oldest(self) -> SpoolItem | None:
        return self._items[0] if self._items else None

    def push(
        self, kind: str, gz_body: bytes, *, tag: SnapshotOrder | None = None
    ) -> int:
        """Append a batch durably; return how many old batches were dropped for room."""
        seq = self._items[-1].seq + 1 if self._items else 1
        suffix = tag.suffix() if tag is not None else ""
        path = self.directory / f"{seq:012d}.{kind}{suffix}.gz"
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as fh:
            fh.write(gz_body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        self._items.append(SpoolItem(seq, kind, len(gz_body), path, tag))
        return self._trim()

    def remove(self, item: SpoolItem) -> None:
        item.path.unlink(missing_ok=True)
        self._items = [i for i in self._items if i.seq != item.seq]

    def _trim(self) -> int:
        dropped = 0
        total = self.total_bytes
        while total > self.max_bytes and len(self._items) > 1:
            old = self._items.pop(0)
            old.path.unlink(missing_ok=True)
            total -= old.size
            dropped += 1
        if dropped:
            log.warning(
                "spool over %d bytes: dropped the %d oldest batch(es)",
                self.max_bytes,
                dropped,
            )
        return dropped


def spool_usage(directory: Path) -> tuple[int, int]:
    """(batches, bytes) of a spool, read-only (for `status` beside a running agent)."""
    count = size = 0
    if directory.is_dir():
        for path in directory.iterdir():
            if _NAME.match(path.name):
                count += 1
                size += path.stat().st_size
    return count, size
