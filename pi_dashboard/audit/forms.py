"""The audit page's filter form: query strings are validated, never trusted."""

from django import forms

from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.audit.selectors import AuditFilters
from pi_dashboard.lib.dayrange import DayRangeForm


class AuditFilterForm(DayRangeForm):
    actor = forms.CharField(required=False, max_length=200)
    action = forms.CharField(required=False, max_length=64)
    outcome = forms.ChoiceField(
        required=False, choices=[("", "any outcome"), *AuditOutcome.choices]
    )
    host = forms.CharField(required=False, max_length=200)
    model = forms.CharField(required=False, max_length=600)
    cursor = forms.CharField(required=False, max_length=200)

    def filters(self) -> AuditFilters:
        """The selector's filters; dates are whole UTC days, `until` included."""
        data = self.cleaned_data if self.is_valid() else {}
        since, until = self.day_bounds()
        return AuditFilters(
            actor=data.get("actor", ""),
            action=data.get("action", ""),
            outcome=data.get("outcome", ""),
            host=data.get("host", ""),
            model=data.get("model", ""),
            since=since,
            until=until,
        )
