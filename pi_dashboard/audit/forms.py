"""The audit page's filter form: query strings are validated, never trusted."""

from datetime import date, datetime, time, timedelta

from django import forms
from django.utils import timezone

from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.audit.selectors import AuditFilters


class AuditFilterForm(forms.Form):
    actor = forms.CharField(required=False, max_length=200)
    action = forms.CharField(required=False, max_length=64)
    outcome = forms.ChoiceField(
        required=False, choices=[("", "any outcome"), *AuditOutcome.choices]
    )
    host = forms.CharField(required=False, max_length=200)
    model = forms.CharField(required=False, max_length=600)
    since = forms.DateField(required=False, label="From")
    until = forms.DateField(required=False, label="To (inclusive)")
    cursor = forms.CharField(required=False, max_length=200)

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            raise forms.ValidationError("“From” is after “To”.")
        return data

    def filters(self) -> AuditFilters:
        """The selector's filters; dates are whole UTC days, `until` included."""
        data = self.cleaned_data if self.is_valid() else {}
        since, until = data.get("since"), data.get("until")
        return AuditFilters(
            actor=data.get("actor", ""),
            action=data.get("action", ""),
            outcome=data.get("outcome", ""),
            host=data.get("host", ""),
            model=data.get("model", ""),
            since=_day_start(since) if since else None,
            until=_day_start(until) + timedelta(days=1) if until else None,
        )


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())
