"""The time range every page reads from the query string.

`?range=24h|7d|30d|90d` runs up to now; `?since=YYYY-MM-DD&until=YYYY-MM-DD` is a
custom range of whole days (To inclusive, cut at now), kept in the URL like the
presets. A custom range that cannot be read falls back to the default range and
carries the reason in `error`, which the range switcher shows.
"""

from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from django import forms
from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from django.utils.http import urlencode

from pi_dashboard.lib import dayrange

# Chart buckets, in hours: the smallest that keeps a chart under MAX_POINTS points.
BUCKET_HOURS = (1, 3, 6, 12, 24, 72, 168)
MAX_POINTS = 48
CUSTOM_PARAMS = ("since", "until")


def bucket_for(hours: int) -> int:
    return next((b for b in BUCKET_HOURS if hours / b <= MAX_POINTS), BUCKET_HOURS[-1])


def hour_end(now: datetime) -> datetime:
    """The end of the hour `now` is in: where a range running up to now stops."""
    return now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)


@dataclass(frozen=True)
class TimeRange:
    key: str
    label: str
    hours: int
    # Charts group hourly rollups into buckets of this many hours.
    bucket_hours: int
    # Custom ranges: their exclusive end and the days the user asked for.
    end: datetime | None = None
    first_day: date | None = None
    last_day: date | None = None
    error: str = ""

    def end_at(self, now: datetime | None = None) -> datetime:
        return self.end or hour_end(now or timezone.now())

    def since(self, now: datetime | None = None) -> datetime:
        """Start of the range, on an hour boundary so that it matches rollup buckets."""
        return self.end_at(now) - timedelta(hours=self.hours)

    @property
    def is_custom(self) -> bool:
        return self.first_day is not None

    @property
    def params(self) -> dict[str, str]:
        """The query parameters that select this range again."""
        if self.first_day is None or self.last_day is None:
            return {"range": self.key}
        return {"since": self.first_day.isoformat(), "until": self.last_day.isoformat()}

    @property
    def query(self) -> str:
        return urlencode(self.params)

    @property
    def span_text(self) -> str:
        """What the figures cover: "the last 24 h", "1 Nov – 3 Dec 2026"."""
        return self.label if self.is_custom else f"the last {self.label}"


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


class CustomRangeForm(dayrange.DayRangeForm):
    def clean(self) -> dict[str, object]:
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        today = timezone.localdate()
        if until and not since:
            raise forms.ValidationError("Give a “From” day as well.")
        if isinstance(since, date) and since > today:
            raise forms.ValidationError("“From” is in the future.")
        keep = settings.PI_ROLLUP_RETENTION_DAYS
        if isinstance(since, date) and (today - since).days >= keep:
            raise forms.ValidationError(
                f"“From” is more than {keep} days ago: older data is not kept."
            )
        return data


def day_label(day: date) -> str:
    return f"{day.day} {day:%b %Y}"


def custom_range(first: date, last: date, now: datetime) -> TimeRange:
    """Whole days from `first` to `last` inclusive, ending no later than now's hour."""
    start = dayrange.day_start(first)
    end = min(dayrange.day_start(last) + timedelta(days=1), hour_end(now))
    hours = int((end - start).total_seconds() // 3600)
    label = day_label(first)
    if last != first:
        label += f" – {day_label(last)}"
    return TimeRange(
        "custom",
        label,
        hours,
        bucket_for(hours),
        end=end,
        first_day=first,
        last_day=last,
    )


def range_from_request(request: HttpRequest) -> TimeRange:
    """The requested range; an unknown preset falls back to the default, an unreadable
    custom range too, with the reason."""
    if not any(request.GET.get(name) for name in CUSTOM_PARAMS):
        return RANGES.get(request.GET.get("range", ""), DEFAULT_RANGE)
    form = CustomRangeForm(request.GET)
    if not form.is_valid():
        reasons = " ".join(
            str(error) if name == "__all__" else f"{form.fields[name].label}: {error}"
            for name, errors in form.errors.items()
            for error in errors
        )
        return replace(
            DEFAULT_RANGE,
            error=f"Custom range not shown: {reasons} Showing the last 24 h instead.",
        )
    now = timezone.now()
    first = form.cleaned_data["since"]
    last = min(form.cleaned_data["until"] or timezone.localdate(), now.date())
    return custom_range(first, last, now)
