"""Writing pi's state files the way pi writes them (docs/pi-host-data.md §0.2, §2.1,
§4.1).

- `model-adaptation.json`: read-modify-write under a `<file>.lock` directory lock
  (proper-lockfile), then a temp sibling `<file>.<pid>.<uuid>.tmp` renamed over it.
- JSONL logs: complete lines appended under the same kind of lock; past the
  high-water mark the file is rewritten (temp + rename, a new inode) keeping the
  newest lines down to the low-water mark.
- `tool-recovery-stats/<id>.json`: temp `<file>.<pid>.tmp` + rename, no lock.

A shipper (the agent) has to cope with exactly these behaviours, so the demo
produces them rather than something tidier.
"""

import contextlib
import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_dashboard.agent import lockfile

# proper-lockfile's defaults as pi uses them: a lock untouched for 10 s is stale.
LOCK_STALE_SECONDS = 10.0
LOCK_WAIT_SECONDS = 15.0


class LockBusyError(RuntimeError):
    """Another live writer kept the lock longer than we were willing to wait."""


@dataclass(frozen=True)
class Bounds:
    """Rotation limits of one bounded JSONL file (docs/pi-host-data.md §2.1, §3)."""

    high_bytes: int
    high_records: int
    low_bytes: int


EVENT_LOG_BOUNDS = Bounds(4 * 1024 * 1024, 5000, 3 * 1024 * 1024)
CORPUS_BOUNDS = Bounds(512 * 1024, 1000, 384 * 1024)

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def js_dumps(value: Any) -> str:
    """JSON as JavaScript's `JSON.stringify` writes it: compact, raw non-ASCII,
    integral numbers without `.0`, lone surrogates as `\\udXXX` escapes."""
    text = json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"))
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _js_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    return value


@contextlib.contextmanager
def file_lock(path: Path, *, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold `<path>.lock` exactly as pi (proper-lockfile) and the agent do.

    The agent's implementation is the project's one copy of that protocol: a
    stale lock (untouched for 10 s) is taken over, a live holder is waited for.
    """
    try:
        with lockfile.locked(path, stale=LOCK_STALE_SECONDS, wait=wait):
            yield
    except lockfile.LockTimeout as exc:
        raise LockBusyError(str(exc)) from None


def replace_atomically(path: Path, data: bytes, *, tmp_name: str) -> None:
    tmp = path.with_name(tmp_name)
    with tmp.open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    tmp.replace(path)


def store_tmp_name(path: Path) -> str:
    return f"{path.name}.{os.getpid()}.{uuid.uuid4()}.tmp"


def append_records(path: Path, records: list[dict[str, Any]], bounds: Bounds) -> bool:
    """Append `records` as JSON lines; returns True when the file was rotated."""
    new = b"".join(js_dumps(r).encode("utf-8") + b"\n" for r in records)
    if len(new) > bounds.high_bytes:
        raise ValueError("a single batch larger than the file's high-water mark")
    with file_lock(path):
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = b""
        if len(old) > bounds.high_bytes:
            # pi replaces an oversized file by the new lines alone.
            replace_atomically(path, new, tmp_name=store_tmp_name(path))
            return True
        old_lines = [line for line in old.split(b"\n") if line.strip()]
        too_big = len(old) + len(new) > bounds.high_bytes
        if not too_big and len(old_lines) + len(records) <= bounds.high_records:
            with path.open("ab") as out:
                out.write(new)
            return False
        kept = keep_newest(old_lines + new.splitlines(), bounds)
        replace_atomically(path, kept, tmp_name=store_tmp_name(path))
        return True


def keep_newest(lines: list[bytes], bounds: Bounds) -> bytes:
    """The newest lines within the low-water size and the record cap; the newest
    line is always kept (docs/pi-host-data.md §2.1)."""
    kept: list[bytes] = []
    size = 0
    for line in reversed(lines):
        cost = len(line) + 1
        if kept and (
            size + cost > bounds.low_bytes or len(kept) >= bounds.high_records
        ):
            break
        kept.append(line)
        size += cost
    return b"".join(line + b"\n" for line in reversed(kept))


def read_store(path: Path) -> dict[str, Any]:
    """The store as pi reads it: anything unusable counts as empty
    (docs/pi-host-data.md §1.6)."""
    try:
        doc = json.loads(path.read_bytes())
    except (FileNotFoundError, ValueError):
        return {"version": 1, "hosts": {}}
    if not isinstance(doc, dict) or doc.get("version") != 1:
        return {"version": 1, "hosts": {}}
    if not isinstance(doc.get("hosts"), dict):
        doc["hosts"] = {}
    return doc


@contextlib.contextmanager
def store_bucket(path: Path, host_id: str) -> Iterator[dict[str, Any]]:
    """Locked read-modify-write of one host's bucket of `model-adaptation.json`.

    Every other host's section is written back exactly as it was read.
    """
    with file_lock(path):
        doc = read_store(path)
        bucket = doc["hosts"].setdefault(host_id, {})
        yield bucket
        data = (js_dumps(doc) + "\n").encode("utf-8")
        replace_atomically(path, data, tmp_name=store_tmp_name(path))


def write_stats_file(path: Path, document: dict[str, Any]) -> None:
    """Stats files: temp + rename, no lock (docs/pi-host-data.md §4.1)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = js_dumps(document).encode("utf-8")
    replace_atomically(path, data, tmp_name=f"{path.name}.{os.getpid()}.tmp")
