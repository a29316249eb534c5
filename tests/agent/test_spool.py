"""The on-disk spool: FIFO, durable across restarts, bounded with counted drops."""

from pathlib import Path

from pi_dashboard.agent.spool import Spool, spool_usage


def test_fifo_across_restarts(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool", max_bytes=10_000)
    spool.push("events", b"one")
    spool.push("snapshot", b"two")
    reopened = Spool(tmp_path / "spool", max_bytes=10_000)
    first = reopened.oldest()
    assert first is not None
    assert (first.kind, first.read()) == ("events", b"one")
    reopened.remove(first)
    second = reopened.oldest()
    assert second is not None
    assert (second.kind, second.read()) == ("snapshot", b"two")
    reopened.push("corpus", b"three")  # numbering continues after the survivors
    assert [i.kind for i in reopened._items] == ["snapshot", "corpus"]
    assert spool_usage(tmp_path / "spool") == (2, 8)


def test_bound_drops_the_oldest_and_says_how_many(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool", max_bytes=250)
    for i in range(5):
        assert spool.push("events", bytes([i]) * 100) == (1 if i >= 2 else 0)
    assert len(spool) == 2
    assert spool.total_bytes == 200
    oldest = spool.oldest()
    assert oldest is not None
    assert oldest.read() == bytes([3]) * 100


def test_a_push_interrupted_by_a_crash_leaves_nothing_behind(tmp_path: Path) -> None:
    directory = tmp_path / "spool"
    directory.mkdir()
    (directory / "000000000001.events.tmp").write_bytes(b"half")
    spool = Spool(directory, max_bytes=100)
    assert len(spool) == 0
    assert list(directory.iterdir()) == []
