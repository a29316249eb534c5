"""Tailing pi's JSONL logs: complete lines only, rotation, restarts."""

import json
import os
from pathlib import Path

from pi_dashboard.agent.tailer import JsonlTailer, TailPosition


def rec(n: int) -> bytes:
    return json.dumps({"recordId": f"s:{n}", "ts": f"t{n}"}).encode()


def append(path: Path, *data: bytes) -> None:
    with path.open("ab") as fh:
        for chunk in data:
            fh.write(chunk)


def rotate_like_pi(path: Path, keep: list[bytes]) -> None:
    """bounded-jsonl: newest lines to a temp file, renamed over the log (new inode)."""
    tmp = path.with_name(f"{path.name}.123.abc.tmp")
    tmp.write_bytes(b"".join(line + b"\n" for line in keep))
    os.replace(tmp, path)


def drain(tailer: JsonlTailer) -> list[bytes]:
    got: list[bytes] = []
    while (batch := tailer.read_batch()) is not None:
        got += batch.lines
        tailer.commit(batch.position)
    return got


def test_ships_complete_lines_and_waits_for_a_partial_last_line(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, rec(1) + b"\n" + rec(2) + b"\n" + rec(3)[:10])
    tailer = JsonlTailer(log, TailPosition())
    assert drain(tailer) == [rec(1), rec(2)]
    assert tailer.read_batch() is None  # the partial line is not news yet
    assert tailer.bytes_behind() == 10
    append(log, rec(3)[10:] + b"\n")
    assert tailer.has_news()
    assert drain(tailer) == [rec(3)]
    assert not tailer.has_news()


def test_blank_lines_are_skipped_but_consumed(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, rec(1) + b"\n\n  \n" + rec(2) + b"\n")
    tailer = JsonlTailer(log, TailPosition())
    assert drain(tailer) == [rec(1), rec(2)]
    assert tailer.position.offset == log.stat().st_size


def test_batches_respect_line_and_byte_limits(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, *(rec(i) + b"\n" for i in range(25)))
    tailer = JsonlTailer(log, TailPosition(), max_lines=10, max_bytes=10_000)
    sizes = []
    while (batch := tailer.read_batch()) is not None:
        sizes.append(len(batch.lines))
        tailer.commit(batch.position)
    assert sizes == [10, 10, 5]
    tailer = JsonlTailer(log, TailPosition(), max_lines=1000, max_bytes=100)
    batch = tailer.read_batch()
    assert batch is not None
    assert len(batch.body) <= 100


def test_a_line_larger_than_a_batch_is_skipped(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, b"x" * 300 + b"\n" + rec(1) + b"\n")
    tailer = JsonlTailer(log, TailPosition(), max_bytes=100)
    first = tailer.read_batch()
    assert first is not None
    assert first.skipped_oversize == 1
    assert first.lines == []
    tailer.commit(first.position)
    assert drain(tailer) == [rec(1)]


def test_rotation_resumes_after_the_last_shipped_line(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, *(rec(i) + b"\n" for i in range(1, 7)))
    tailer = JsonlTailer(log, TailPosition())
    assert len(drain(tailer)) == 6
    inode = log.stat().st_ino
    # pi appends 7 and 8 but rotation keeps only 4..8: old lines reappear.
    rotate_like_pi(log, [rec(i) for i in range(4, 9)])
    assert log.stat().st_ino != inode
    batch = tailer.read_batch()
    assert batch is not None
    assert batch.rotated
    assert batch.lines == [rec(7), rec(8)]


def test_rotation_that_dropped_the_last_shipped_line_starts_over(
    tmp_path: Path,
) -> None:
    log = tmp_path / "events.jsonl"
    append(log, *(rec(i) + b"\n" for i in range(1, 4)))
    tailer = JsonlTailer(log, TailPosition())
    drain(tailer)
    # Over the high-water mark pi replaces the file with just the newest line.
    rotate_like_pi(log, [rec(99)])
    assert drain(tailer) == [rec(99)]


def test_truncate_in_place_is_noticed_by_size_and_prefix(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, *(rec(i) + b"\n" for i in range(1, 4)))
    tailer = JsonlTailer(log, TailPosition())
    drain(tailer)
    with log.open("r+b") as fh:  # same inode, shorter
        fh.truncate(0)
    append(log, rec(50) + b"\n")
    assert drain(tailer) == [rec(50)]
    # Same inode rewritten longer than the old offset: the first bytes differ.
    with log.open("r+b") as fh:
        fh.truncate(0)
    append(log, *(rec(i) + b"\n" for i in range(60, 70)))
    assert drain(tailer) == [rec(i) for i in range(60, 70)]


def test_position_survives_a_restart(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, rec(1) + b"\n" + rec(2) + b"\n")
    tailer = JsonlTailer(log, TailPosition())
    drain(tailer)
    saved = json.loads(json.dumps(tailer.position.as_json()))
    append(log, rec(3) + b"\n")
    again = JsonlTailer(log, TailPosition.from_json(saved))
    assert drain(again) == [rec(3)]


def test_a_batch_not_committed_is_read_again(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    append(log, rec(1) + b"\n")
    tailer = JsonlTailer(log, TailPosition())
    first = tailer.read_batch()
    assert first is not None
    tailer.forget_seen()  # delivery failed: nothing committed
    assert tailer.has_news()
    second = tailer.read_batch()
    assert second is not None
    assert second.lines == first.lines


def test_missing_file_is_quiet(tmp_path: Path) -> None:
    tailer = JsonlTailer(tmp_path / "absent.jsonl", TailPosition())
    assert not tailer.has_news()
    assert tailer.read_batch() is None
    assert tailer.bytes_behind() == 0
