"""The time range every page reads from the query string: `?range=24h|7d|30d|90d`."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.http import HttpRequest
from django.utils import timezone


@dataclass(frozen=True)
class TimeRange:
    key: str
    label: str
    hours: int
    # Charts group hourly rollups into buckets of this many hours.
    bucket_hours: int

    def since(self, now: datetime | None = None) -> datetime:
        """Start of the range, on an hour boundary so that it matches rollup buckets."""
        now = now or timezone.now()
        start = now - timedelta(hours=self.hours - 1)
        return start.replace(minute=0, second=0, microsecond=0)


RANGES: dict[str, TimeRange] = {
    r.key: r
    for r in (
        TimeRange("24h", "24 h", 24, 1),
        TimeRange("7d", "7 d", 7 * 24, 6),
        TimeRange("30d", "30 d", 30 * 24, 24),
        # Beyond 30 days (issue 12 item 13): hourly rollups are kept 400 days.
        TimeRange("90d", "90 d", 90 * 24, 72),
    )
}
DEFAULT_RANGE = RANGES["24h"]


def range_from_request(request: HttpRequest) -> TimeRange:
    """The requested range; an unknown value falls back to the default."""
    return RANGES.get(request.GET.get("range", ""), DEFAULT_RANGE)
