"""HTML forms of the alerts pages: posted text into service inputs."""

from typing import Any

from django import forms

from pi_dashboard.alerts.models import (
    AlertRule,
    Channel,
    MaintenanceWindow,
    ScopeKind,
    Signal,
)


class RuleForm(forms.Form):
    name = forms.CharField(max_length=200)
    signal = forms.ChoiceField(choices=Signal.choices)
    scope_kind = forms.ChoiceField(choices=ScopeKind.choices, label="Scope")
    scope_value = forms.CharField(
        max_length=600, required=False, help_text="provider, model key, host id or tag"
    )
    param = forms.CharField(
        max_length=300,
        required=False,
        help_text="failures: a phase (execute) or code:<failure code>",
    )
    threshold = forms.FloatField(min_value=0, initial=1)
    window_minutes = forms.IntegerField(min_value=1, initial=60)
    fire_after = forms.IntegerField(min_value=1, max_value=100, initial=1)
    resolve_after = forms.IntegerField(min_value=1, max_value=100, initial=1)
    remind_minutes = forms.IntegerField(min_value=0, initial=0)
    is_urgent = forms.BooleanField(required=False)
    is_enabled = forms.BooleanField(required=False, initial=True)
    channels = forms.ModelMultipleChoiceField(
        queryset=Channel.objects.all(), required=False
    )

    @classmethod
    def for_rule(cls, rule: AlertRule) -> "RuleForm":
        initial = {f: getattr(rule, f) for f in cls.base_fields if f != "channels"}
        initial["channels"] = list(rule.channels.all())
        return cls(initial=initial)


class ChannelForm(forms.Form):
    name = forms.CharField(max_length=200)
    url = forms.CharField(
        max_length=2000,
        required=False,
        label="Apprise URL",
        help_text="e.g. json://host/path, slack://…, mailto://user:pass@host; "
        "leave empty to keep the stored one",
    )
    is_enabled = forms.BooleanField(required=False, initial=True)


class SilenceForm(forms.Form):
    rule = forms.ModelChoiceField(
        queryset=AlertRule.objects.all(), required=False, empty_label="every rule"
    )
    scope_kind = forms.ChoiceField(choices=ScopeKind.choices, label="Scope")
    scope_value = forms.CharField(max_length=600, required=False)
    hours = forms.FloatField(min_value=0.01, max_value=24 * 90, initial=2)
    reason = forms.CharField(max_length=500, required=False)


class MaintenanceForm(forms.Form):
    name = forms.CharField(max_length=200)
    scope_kind = forms.ChoiceField(choices=ScopeKind.choices, label="Scope")
    scope_value = forms.CharField(max_length=600, required=False)
    starts_at = forms.DateTimeField(required=False, help_text="one-off (UTC)")
    ends_at = forms.DateTimeField(required=False)
    weekdays = forms.CharField(
        required=False, help_text="recurring: ISO weekdays, e.g. 6,7"
    )
    start_time = forms.TimeField(required=False, help_text="UTC, e.g. 02:00")
    duration_minutes = forms.IntegerField(min_value=0, initial=0, required=False)

    @staticmethod
    def initial_of(window: MaintenanceWindow) -> dict[str, Any]:
        """The form's fields as `window` holds them (the edit page)."""
        return {
            "name": window.name,
            "scope_kind": window.scope_kind,
            "scope_value": window.scope_value,
            "starts_at": window.starts_at,
            "ends_at": window.ends_at,
            "weekdays": ",".join(str(d) for d in window.weekdays),
            "start_time": window.start_time,
            "duration_minutes": window.duration_minutes,
        }

    def clean_weekdays(self) -> list[int]:
        raw = self.cleaned_data.get("weekdays") or ""
        try:
            return [int(d) for d in raw.replace(" ", "").split(",") if d]
        except ValueError as exc:
            raise forms.ValidationError("Weekdays are numbers 1-7.") from exc


class GraceForm(forms.Form):
    host = forms.CharField(max_length=200, required=False, help_text="pi host id")
    tag = forms.CharField(max_length=64, required=False)
    late_seconds = forms.IntegerField(min_value=1)
    down_seconds = forms.IntegerField(min_value=2)


class HostTagForm(forms.Form):
    host = forms.CharField(max_length=200, help_text="pi host id")
    tag = forms.CharField(max_length=64)
