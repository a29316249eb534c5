"""Opaque keyset cursors for lists ordered newest first by (timestamp, id)."""

import base64
import binascii
from datetime import datetime

from pi_dashboard.lib.isotime import parse_iso


def cursor_encode(at: datetime, pk: int) -> str:
    raw = f"{at.isoformat()}|{pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def cursor_decode(cursor: str) -> tuple[datetime, int] | None:
    """The (timestamp, id) a cursor stands for, or None when it is not one of ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at_text, _, pk_text = raw.rpartition("|")
        at = parse_iso(at_text)
        pk = int(pk_text)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return (at, pk) if at is not None else None
