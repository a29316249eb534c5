"""Demo data shifting: every timestamp moves by one delta, nothing else changes."""

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pi_dashboard.demo.shift import (
    DATA_DIR,
    FIXTURE_NOW,
    ISO_RE,
    build_state_dir,
    delta_to,
    shift_text,
)
from tests.demo.pistate import check_state_dir

NOW = datetime(2027, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)


def stamps(text: str) -> list[datetime]:
    return [
        datetime.fromisoformat(m.group(0).replace("Z", "+00:00"))
        for m in ISO_RE.finditer(text)
    ]


def masked(text: str) -> str:
    return ISO_RE.sub("<ts>", text)


def test_every_timestamp_moves_by_the_same_delta(host: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    build_state_dir(host, state, now=NOW)

    source = DATA_DIR / host
    shipped = sorted(
        p.relative_to(source)
        for p in source.rglob("*")
        if p.is_file() and p.suffix in {".json", ".jsonl"}
    )
    built = sorted(p.relative_to(state) for p in state.rglob("*") if p.is_file())
    assert built == shipped
    moved = 0
    for rel in shipped:
        before = (source / rel).read_text("utf-8")
        after = (state / rel).read_text("utf-8")
        # Session ids, record ids, numbers, key order: byte for byte the same.
        assert masked(after) == masked(before), rel
        old, new = stamps(before), stamps(after)
        assert len(old) == len(new)
        assert {b - a for a, b in zip(old, new, strict=True)} <= {NOW - FIXTURE_NOW}
        moved += len(old)
    assert moved > 400


def test_fixture_now_becomes_the_present(host: str, tmp_path: Path) -> None:
    build_state_dir(host, tmp_path / "state", now=NOW)
    events = (tmp_path / "state" / "tool-recovery-events.jsonl").read_text()
    newest = max(stamps(events))
    # The live session ended less than an hour before the fixture's "now".
    assert NOW - timedelta(hours=2) < newest < NOW


def test_shifted_files_are_valid_for_the_ingest_schemas(
    host: str, tmp_path: Path, schema_check
) -> None:
    build_state_dir(host, tmp_path / "state", now=NOW)
    assert check_state_dir(tmp_path / "state", schema_check) > 300


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"at":"2026-08-18T17:30:00.000Z"', '"at":"2026-08-19T17:30:00.250Z"'),
        # Pass-through values without milliseconds keep their shape.
        ('"ts":"2026-08-18T17:30:00Z"', '"ts":"2026-08-19T17:30:00Z"'),
        ("no time here 2026-08-18", "no time here 2026-08-18"),
    ],
)
def test_shift_text_keeps_each_format(text: str, expected: str) -> None:
    assert shift_text(text, timedelta(days=1, milliseconds=250)) == expected


def test_delta_is_whole_milliseconds() -> None:
    odd = FIXTURE_NOW + timedelta(days=3, microseconds=1_234_567)
    assert delta_to(odd) == timedelta(days=3, milliseconds=1235)
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",
        shift_text("2026-08-18T17:30:00.000Z", delta_to(odd)),
    )
