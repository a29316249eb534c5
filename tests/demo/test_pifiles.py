"""The pi-like writer: bounded-file rotation and pi's lock protocol."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_dashboard.demo import pifiles
from pi_dashboard.demo.pifiles import Bounds, append_records, store_bucket
from pi_dashboard.demo.shift import DATA_DIR

SMALL = Bounds(high_bytes=2000, high_records=20, low_bytes=1500)


def record(n: int, pad: int = 40) -> dict:
    return {"kind": "tool_execution_failure", "recordId": f"s:{n}", "x": "y" * pad}


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_appends_in_place_below_the_high_water_mark(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append_records(log, [record(0)], SMALL)
    inode = log.stat().st_ino
    rotated = append_records(log, [record(1), record(2)], SMALL)
    assert not rotated
    assert log.stat().st_ino == inode
    assert [r["recordId"] for r in lines_of(log)] == ["s:0", "s:1", "s:2"]


def test_rotation_keeps_the_newest_lines_under_a_new_inode(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    rotations = 0
    inode = None
    for n in range(60):
        if log.exists():
            inode = log.stat().st_ino
        if append_records(log, [record(n)], SMALL):
            rotations += 1
            assert log.stat().st_ino != inode  # temp + rename, as pi rotates
        size = log.stat().st_size
        kept = lines_of(log)
        assert size <= SMALL.high_bytes
        assert len(kept) <= SMALL.high_records
        assert kept[-1]["recordId"] == f"s:{n}"  # the newest line is always kept
        ids = [int(r["recordId"].split(":")[1]) for r in kept]
        assert ids == list(range(ids[0], n + 1))  # the oldest go first, no gaps
    assert rotations >= 3
    assert not list(tmp_path.glob("*.tmp"))
    assert not (tmp_path / "events.jsonl.lock").exists()


def test_an_oversized_file_is_replaced_by_the_new_lines(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(b'{"old":1}\n' * 300)
    assert append_records(log, [record(7)], SMALL)
    assert [r["recordId"] for r in lines_of(log)] == ["s:7"]


def hold_lock(path: Path, seconds: float) -> subprocess.Popen[bytes]:
    """Another process holds pi's lock on `path` (refreshing it, as pi does)."""
    code = (
        "import sys, time, pathlib\n"
        "from pi_dashboard.agent.lockfile import locked\n"
        "with locked(pathlib.Path(sys.argv[1])):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(float(sys.argv[2]))\n"
        "    with open(sys.argv[1], 'ab') as f: f.write(b'{\"holder\":1}\\n')\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(path), str(seconds)], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"held\n"
    return proc


@pytest.mark.timeout(30)
def test_a_live_lock_delays_the_write_and_loses_nothing(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"")
    holder = hold_lock(log, 1.5)
    started = time.monotonic()
    append_records(log, [record(1)], SMALL)
    waited = time.monotonic() - started
    assert holder.wait(10) == 0
    assert waited >= 1.0
    # The holder's write landed first, ours after it: neither was lost.
    assert lines_of(log) == [{"holder": 1}, record(1)]


def test_a_stale_lock_is_taken_over(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    lock = tmp_path / "events.jsonl.lock"
    lock.mkdir()
    old = time.time() - pifiles.LOCK_STALE_SECONDS - 5
    os.utime(lock, (old, old))
    append_records(log, [record(1)], SMALL)
    assert lines_of(log) == [record(1)]
    assert not lock.exists()


def test_a_busy_lock_gives_up_after_the_wait(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    (tmp_path / "events.jsonl.lock").mkdir()  # fresh mtime: a live holder
    with pytest.raises(pifiles.LockBusyError), pifiles.file_lock(log, wait=0.3):
        pass
    assert not log.exists()


def test_store_rewrite_leaves_other_hosts_byte_for_byte(tmp_path: Path) -> None:
    store = tmp_path / "model-adaptation.json"
    store.write_bytes((DATA_DIR / "model-adaptation.json").read_bytes())
    original = json.loads(store.read_bytes())
    host = "apple-m3-max-16c-128g"
    with store_bucket(store, host) as bucket:
        bucket["openai/gpt-5.1"]["at"] = "2030-01-01T00:00:00.000Z"
    after = json.loads(store.read_bytes())
    for other in original["hosts"]:
        if other != host:
            assert pifiles.js_dumps(after["hosts"][other]) == pifiles.js_dumps(
                original["hosts"][other]
            )
    assert after["hosts"][host]["openai/gpt-5.1"]["at"] == "2030-01-01T00:00:00.000Z"
    assert store.read_bytes().endswith(b"}\n")
    assert not list(tmp_path.glob("*.tmp"))
