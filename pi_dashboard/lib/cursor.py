"""The one keyset pager: lists newest first by (timestamp, id), opaque cursors."""

import base64
import binascii
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from pi_dashboard.lib.errors import DomainError
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


class InvalidCursor(DomainError):
    code = "invalid_cursor"


def keyset_page(
    rows: QuerySet[Any], *, cursor: str, limit: int, at_field: str
) -> tuple[list[Any], str | None]:
    """One page, newest first by (at_field, id), and the cursor of the next (older) one.

    The cursor is the key of the page's last row, so pages stay stable while rows are
    added. Raises InvalidCursor for a cursor we did not give out.
    """
    if cursor:
        decoded = cursor_decode(cursor)
        if decoded is None:
            raise InvalidCursor(
                "The cursor is not one this server gave out; start again without it."
            )
        at, pk = decoded
        rows = rows.filter(
            Q(**{f"{at_field}__lt": at}) | Q(**{at_field: at, "id__lt": pk})
        )
    page = list(rows.order_by(f"-{at_field}", "-id")[: limit + 1])
    if len(page) <= limit:
        return page, None
    last = page[limit - 1]
    return page[:limit], cursor_encode(getattr(last, at_field), last.pk)
