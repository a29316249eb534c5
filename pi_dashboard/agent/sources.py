"""Change detection for pi's whole-file state: the store snapshot and session stats.

Both are replaced by pi with temp file + rename, so a plain read always sees a complete
document. Change detection is stat-based; content hashes decide what is news.
"""

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

STORE_FILE = "model-adaptation.json"
EVENTS_FILE = "tool-recovery-events.jsonl"
CORPUS_FILE = "failure-corpus.jsonl"
STATS_DIR = "tool-recovery-stats"
FULL_RESCAN_SECONDS = 60.0


def _stat_key(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class SnapshotWatcher:
    """`model-adaptation.json`: its bytes whenever they differ from the last sent."""

    def __init__(self, path: Path, shipped_hash: str) -> None:
        self.path = path
        self.shipped_hash = shipped_hash
        self._seen: tuple[int, int, int] | None = None

    def poll(self) -> tuple[bytes, str] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        if _stat_key(st) == self._seen:
            return None
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        self._seen = _stat_key(st)
        digest = content_hash(data)
        return None if digest == self.shipped_hash else (data, digest)

    def commit(self, digest: str) -> None:
        self.shipped_hash = digest

    def forget_seen(self) -> None:
        self._seen = None


@dataclass(frozen=True)
class StatsDoc:
    name: str
    line: bytes
    digest: str


class StatsWatcher:
    """`tool-recovery-stats/*.json`: each changed file as one compact JSON line.

    pi writes these via rename into the directory, which bumps the directory's mtime,
    so an unchanged directory mtime means nothing to do (plus a periodic full rescan).
    """

    def __init__(self, directory: Path, shipped: dict[str, str]) -> None:
        self.directory = directory
        self.shipped = dict(shipped)
        self._dir_seen: int | None = None
        self._files_seen: dict[str, tuple[int, int, int]] = {}
        self._rescan_at = 0.0

    def poll(self) -> list[StatsDoc]:
        try:
            dir_mtime = os.stat(self.directory).st_mtime_ns
        except FileNotFoundError:
            return []
        now = time.monotonic()
        if dir_mtime == self._dir_seen and now < self._rescan_at:
            return []
        self._dir_seen, self._rescan_at = dir_mtime, now + FULL_RESCAN_SECONDS
        docs: list[StatsDoc] = []
        present: set[str] = set()
        with os.scandir(self.directory) as entries:
            for entry in entries:
                if not entry.name.endswith(".json") or not entry.is_file():
                    continue  # skips `<file>.<pid>.tmp` while pi writes
                present.add(entry.name)
                doc = self._read_if_changed(entry)
                if doc is not None:
                    docs.append(doc)
        for gone in set(self._files_seen) - present:
            del self._files_seen[gone]
        for gone in set(self.shipped) - present:
            del self.shipped[gone]  # pruned by pi (90 days / 1,000 files)
        return sorted(docs, key=lambda d: d.name)

    def _read_if_changed(self, entry: os.DirEntry[str]) -> StatsDoc | None:
        try:
            key = _stat_key(entry.stat())
            if self._files_seen.get(entry.name) == key:
                return None
            data = Path(entry.path).read_bytes()
        except FileNotFoundError:
            return None
        self._files_seen[entry.name] = key
        digest = content_hash(data)
        if self.shipped.get(entry.name) == digest:
            return None
        line = one_line(data)
        if line is None:
            self.shipped[entry.name] = digest  # not JSON: never retried, never sent
            return None
        return StatsDoc(entry.name, line, digest)

    def commit(self, docs: list[StatsDoc]) -> None:
        for doc in docs:
            self.shipped[doc.name] = doc.digest

    def forget_seen(self) -> None:
        self._dir_seen = None
        self._files_seen.clear()


def one_line(data: bytes) -> bytes | None:
    """The document as one line: unchanged when pi wrote it compact (it does)."""
    stripped = data.strip()
    if b"\n" not in stripped and b"\r" not in stripped:
        return stripped or None
    try:
        doc = json.loads(stripped)
    except ValueError:
        return None
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
