"""A From/To pair of whole days in a filter form (audit log, failure corpus)."""

from datetime import date, datetime, time, timedelta

from django import forms
from django.http import HttpResponse
from django.utils import timezone


class DayRangeForm(forms.Form):
    since = forms.DateField(required=False, label="From")
    until = forms.DateField(required=False, label="To (inclusive)")

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            raise forms.ValidationError("“From” is after “To”.")
        return data

    def day_bounds(self) -> tuple[datetime | None, datetime | None]:
        """[start of From, end of To) as datetimes; None where not given."""
        data = self.cleaned_data if self.is_valid() else {}
        since, until = data.get("since"), data.get("until")
        return (
            day_start(since) if since else None,
            day_start(until) + timedelta(days=1) if until else None,
        )


def day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def bad_filter_response(form: forms.Form) -> HttpResponse:
    """A download's filter it cannot read: 400 with the reason, never all rows."""
    return HttpResponse(
        f"Bad filter: {form.errors.as_text()}",
        status=400,
        content_type="text/plain; charset=utf-8",
    )
