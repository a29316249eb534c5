"""Tail one of pi's JSON Lines logs by offset, surviving pi's rotation.

pi appends under a lock with a plain write (a reader may see a partial last line) and
rotates by writing the newest lines to a temp file renamed over the log (new inode,
smaller size, already shipped lines reappear; pitfalls §3). A position is therefore
(inode, offset, a fingerprint of the file's first bytes, hash of the last shipped
line). On rotation the tailer resumes just after the last shipped line if the new file
still holds it, else from the start; the server dedupes by content either way.
"""

import hashlib
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

MAX_LINES = 1000
MAX_BYTES = 5 * 1024 * 1024
PREFIX_LEN = 1024


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


@dataclass(frozen=True)
class TailPosition:
    inode: int = 0
    offset: int = 0
    prefix_len: int = 0
    prefix_hash: str = ""
    last_line_hash: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Any) -> "TailPosition":
        if not isinstance(raw, dict):
            return cls()
        fields = cls.__dataclass_fields__
        return cls(**{k: v for k, v in raw.items() if k in fields})


@dataclass(frozen=True)
class TailBatch:
    lines: list[bytes]
    position: TailPosition  # where the tail stands once this batch is delivered
    rotated: bool = False
    skipped_oversize: int = 0

    @property
    def body(self) -> bytes:
        return b"\n".join(self.lines) + b"\n" if self.lines else b""


class JsonlTailer:
    def __init__(
        self,
        path: Path,
        position: TailPosition,
        *,
        max_lines: int = MAX_LINES,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.path = path
        self.position = position
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._seen: tuple[int, int, int] | None = None

    def has_news(self) -> bool:
        """Cheap check (one stat): has the file changed since it was last read?"""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        return (st.st_ino, st.st_size, st.st_mtime_ns) != self._seen

    def forget_seen(self) -> None:
        """Make the next `has_news` true (after a batch that was not delivered)."""
        self._seen = None

    def bytes_behind(self) -> int:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return 0
        if st.st_ino != self.position.inode or st.st_size < self.position.offset:
            return st.st_size
        return st.st_size - self.position.offset

    def read_batch(self) -> TailBatch | None:
        """Up to `max_lines` complete lines after the position, or None if none."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            st = os.fstat(fd)
            self._seen = (st.st_ino, st.st_size, st.st_mtime_ns)
            start, rotated = self._start(fd, st.st_ino, st.st_size)
            return self._read_from(fd, st.st_ino, start, rotated)
        finally:
            os.close(fd)

    def commit(self, position: TailPosition) -> None:
        self.position = position

    def _start(self, fd: int, inode: int, size: int) -> tuple[int, bool]:
        pos = self.position
        if pos.inode == 0:
            return 0, False
        same = inode == pos.inode and size >= pos.offset
        if same and pos.prefix_len:
            same = _hash_range(fd, 0, pos.prefix_len) == pos.prefix_hash
        if same:
            return pos.offset, False
        return _resume_after(fd, size, pos.last_line_hash), True

    def _read_from(
        self, fd: int, inode: int, start: int, rotated: bool
    ) -> TailBatch | None:
        lines: list[bytes] = []
        offset, skipped, body_len = start, 0, 0
        data = os.pread(fd, self.max_bytes, start)
        cut = data.rfind(b"\n")
        if cut < 0 and len(data) == self.max_bytes:
            # One line longer than a whole batch: the server could never take it.
            end = _find_newline(fd, start + len(data))
            if end is None:
                return None
            offset, skipped = end + 1, 1
        for line in data[: cut + 1].split(b"\n")[:-1] if cut >= 0 else []:
            if (
                len(lines) >= self.max_lines
                or body_len + len(line) + 1 > self.max_bytes
            ):
                break
            offset += len(line) + 1
            if line.strip():
                lines.append(line)
                body_len += len(line) + 1
        if offset == start and not rotated:
            return None
        position = self._position_after(fd, inode, offset, lines)
        return TailBatch(lines, position, rotated=rotated, skipped_oversize=skipped)

    def _position_after(
        self, fd: int, inode: int, offset: int, lines: list[bytes]
    ) -> TailPosition:
        prefix_len = min(offset, PREFIX_LEN)
        last = line_hash(lines[-1]) if lines else self.position.last_line_hash
        if prefix_len == self.position.prefix_len and inode == self.position.inode:
            prefix_hash = self.position.prefix_hash
        else:
            prefix_hash = _hash_range(fd, 0, prefix_len)
        return replace(
            self.position,
            inode=inode,
            offset=offset,
            prefix_len=prefix_len,
            prefix_hash=prefix_hash,
            last_line_hash=last,
        )


def _hash_range(fd: int, start: int, length: int) -> str:
    return hashlib.sha256(os.pread(fd, length, start)).hexdigest()


def _find_newline(fd: int, pos: int) -> int | None:
    while True:
        chunk = os.pread(fd, 1024 * 1024, pos)
        if not chunk:
            return None
        idx = chunk.find(b"\n")
        if idx >= 0:
            return pos + idx
        pos += len(chunk)


def _resume_after(fd: int, size: int, last_hash: str) -> int:
    """Offset just past the last occurrence of the last shipped line, else 0."""
    if not last_hash:
        return 0
    data = os.pread(fd, size, 0)
    end = data.rfind(b"\n")
    offset, found = 0, 0
    for line in data[: end + 1].split(b"\n")[:-1] if end >= 0 else []:
        offset += len(line) + 1
        if line_hash(line) == last_hash:
            found = offset
    return found
