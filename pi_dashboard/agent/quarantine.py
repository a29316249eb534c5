"""Lines the server fails on every time, set aside on disk so the rest moves on.

A batch that keeps answering 500 would otherwise hold every later line behind it
forever (the spool drains oldest first). The shipper isolates the lines the server
fails on (`Shipper._isolate`) and moves them here; the file sits beside the spool,
one JSON object per line, and is bounded: past `max_bytes` the oldest entries go.
The line is kept exactly (bytes that are not UTF-8 as surrogate escapes), cut to
`MAX_KEPT_BYTES` so one huge line cannot evict everything else.
"""

import json
import os
from pathlib import Path
from typing import Any

from pi_dashboard.agent import isotime

QUARANTINE_DIR = "quarantine"
QUARANTINE_FILE = "lines.jsonl"
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
MAX_KEPT_BYTES = 256 * 1024


class Quarantine:
    def __init__(self, directory: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = directory / QUARANTINE_FILE
        self.max_bytes = max_bytes

    def add(self, *, kind: str, line: bytes, reason: str) -> None:
        entry = {
            "at": isotime.utc_now_iso(),
            "kind": kind,
            "reason": reason[:500],
            "bytes": len(line),
            "truncated": len(line) > MAX_KEPT_BYTES,
            "line": line[:MAX_KEPT_BYTES].decode("utf-8", "surrogateescape"),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, separators=(",", ":")) + "\n")
        if self.path.stat().st_size > self.max_bytes:
            self._trim()

    def _trim(self) -> None:
        """Keep the newest entries that fit in half the bound (amortised rewrites)."""
        kept: list[bytes] = []
        size = 0
        for raw in reversed(self.path.read_bytes().splitlines(keepends=True)):
            if size + len(raw) > self.max_bytes // 2:
                break
            kept.append(raw)
            size += len(raw)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(b"".join(reversed(kept)))
        os.replace(tmp, self.path)

    def entries(self) -> list[dict[str, Any]]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for text in raw.splitlines():
            try:
                out.append(json.loads(text))
            except ValueError:
                continue  # a line cut by a crash mid-append
        return out
