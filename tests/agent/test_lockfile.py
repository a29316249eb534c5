"""pi's lock protocol: live holders are waited for, dead ones are taken over."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_dashboard.agent import store_edit
from pi_dashboard.agent.lockfile import LockCompromised, LockTimeout, lock_path, locked
from tests.agent.conftest import AMD, APPLE, FIXTURE_NOW, bucket_text

HOLDER = Path(__file__).with_name("lock_holder.py")


def first_rule(store: Path) -> str:
    doc = json.loads(store.read_text())
    return str(doc["hosts"][AMD]["openai/gpt-5.1"]["profile"]["rules"][0]["mode"])


def test_a_live_holder_delays_the_write_and_keeps_its_own(shared_store: Path) -> None:
    mode = first_rule(shared_store)
    apple_before = bucket_text(shared_store.read_text(), APPLE)
    # Holds longer than the stale threshold (2 s here), refreshing like pi does.
    holder = subprocess.Popen(
        [
            sys.executable,
            str(HOLDER),
            str(shared_store),
            "3.5",
            "ollama/gpt-oss:20b",
            "HOLDER-WAS-HERE",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == b"locked"
        started = time.monotonic()
        changed = store_edit.store_edit_entry(
            path=shared_store,
            host_id=AMD,
            model="openai/gpt-5.1",
            edit=store_edit.remove_rule(mode),
            stale=2,
            wait=15,
            now=FIXTURE_NOW,
        )
        waited = time.monotonic() - started
        assert holder.wait(10) == 0  # the holder finished normally: never broken
    finally:
        holder.kill()
    assert changed
    assert waited >= 3.0
    after = json.loads(shared_store.read_text())
    # The holder's write survived, and ours came on top of it.
    assert after["hosts"][APPLE]["ollama/gpt-oss:20b"]["at"] == "HOLDER-WAS-HERE"
    assert mode not in [
        r["mode"] for r in after["hosts"][AMD]["openai/gpt-5.1"]["profile"]["rules"]
    ]
    assert bucket_text(shared_store.read_text(), APPLE) != apple_before


def test_a_stale_lock_is_taken_over(shared_store: Path) -> None:
    lock = lock_path(shared_store)
    lock.mkdir()
    old = time.time() - 30
    os.utime(lock, (old, old))  # its holder died 30 s ago
    started = time.monotonic()
    assert store_edit.store_edit_entry(
        path=shared_store,
        host_id=AMD,
        model="openai/gpt-5.1",
        edit=store_edit.remove_rule(first_rule(shared_store)),
        stale=10,
        wait=5,
        now=FIXTURE_NOW,
    )
    assert time.monotonic() - started < 1
    assert not lock.exists()


def test_a_fresh_lock_that_never_goes_away_times_out(shared_store: Path) -> None:
    lock = lock_path(shared_store)
    lock.mkdir()
    before = shared_store.read_bytes()
    with pytest.raises(LockTimeout, match="locked by another process"):
        store_edit.store_edit_entry(
            path=shared_store,
            host_id=AMD,
            model="openai/gpt-5.1",
            edit=store_edit.remove_rule(first_rule(shared_store)),
            stale=10,
            wait=0.5,
        )
    assert shared_store.read_bytes() == before
    assert lock.is_dir()  # someone else's lock is left alone


def test_holding_refreshes_the_mtime_and_notices_a_takeover(tmp_path: Path) -> None:
    target = tmp_path / "model-adaptation.json"
    target.write_text("{}")
    with locked(target, stale=2) as held:
        lock = lock_path(target)
        first = lock.stat().st_mtime_ns
        time.sleep(1.3)
        assert lock.stat().st_mtime_ns > first  # refreshed while held
        held.check()
        os.rmdir(lock)  # another process decided we were stale and took over
        os.mkdir(lock)
        time.sleep(1.3)
        with pytest.raises(LockCompromised):
            held.check()
    assert lock.is_dir()  # the new owner's lock is not removed on our release
