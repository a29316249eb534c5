"""Move the shipped pi data in time, so the fixture's "now" becomes the present.

Every ISO-8601 UTC timestamp in every file moves by one delta; everything else
(session ids, record ids, key order, number formatting, the bytes between
timestamps) stays exactly as pi wrote it. A textual rewrite keeps that promise
where a JSON round trip would not.
"""

import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

# The simulated clock the fixtures were generated at (their README).
FIXTURE_NOW = datetime(2026, 8, 18, 17, 30, tzinfo=UTC)
DATA_DIR = Path(__file__).resolve().parent / "data"

# pi writes `Date.toISOString()`: milliseconds and `Z`; pass-through values may
# lack the milliseconds (docs/pi-host-data.md §0.4), so both shapes are kept as they
# came.
ISO_RE = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,6})?Z")

# Only pi's own state files; the README and toolhealth reports are not pi state.
STATE_SUFFIXES = (".json", ".jsonl")


def delta_to(now: datetime) -> timedelta:
    """Whole milliseconds from the fixture's clock to `now`."""
    raw = now - FIXTURE_NOW
    return timedelta(milliseconds=round(raw / timedelta(milliseconds=1)))


def format_iso(moment: datetime, *, fraction_digits: int) -> str:
    base = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if fraction_digits == 0:
        return base + "Z"
    micro = f"{moment.microsecond:06d}"
    return f"{base}.{micro[:fraction_digits]}Z"


def shift_text(text: str, delta: timedelta) -> str:
    """Every timestamp in `text` moved by `delta`, in the format it had."""

    def replace(match: re.Match[str]) -> str:
        fraction = match.group(2) or ""
        stamp = datetime.fromisoformat(match.group(1) + fraction).replace(tzinfo=UTC)
        return format_iso(stamp + delta, fraction_digits=max(0, len(fraction) - 1))

    return ISO_RE.sub(replace, text)


def host_ids(data_dir: Path = DATA_DIR) -> list[str]:
    """The demo hosts: one folder per pi host in the shipped data."""
    return sorted(p.name for p in data_dir.iterdir() if p.is_dir())


def build_state_dir(host: str, target: Path, *, now: datetime) -> None:
    """Write `target` (a pi `state/` dir) from the shipped data of `host`."""
    source = DATA_DIR / host
    delta = delta_to(now)
    tmp = target.with_name(target.name + ".building")
    if tmp.exists():
        shutil.rmtree(tmp)
    for path in sorted(source.rglob("*")):
        if not path.is_file() or path.suffix not in STATE_SUFFIXES:
            continue
        out = tmp / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        # Bytes in, bytes out: surrogate escapes and non-ASCII stay untouched.
        out.write_bytes(shift_text(path.read_text("utf-8"), delta).encode("utf-8"))
    # Appear whole or not at all, so an interrupted build is simply redone.
    tmp.rename(target)
