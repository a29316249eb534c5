"""Filter forms of the fleet pages: query strings are validated, never trusted."""

from django import forms

VERDICT_CHOICES = [
    ("", "any verdict"),
    ("native", "native"),
    ("text-protocol", "text-protocol"),
    ("none", "none"),
    ("unprobed", "unprobed"),
]
OVERVIEW_SORTS = ["failures", "host", "contact", "rules"]


class OverviewFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search")
    provider = forms.CharField(required=False, max_length=200)
    verdict = forms.ChoiceField(required=False, choices=VERDICT_CHOICES)
    host = forms.CharField(required=False, max_length=200)
    sort = forms.ChoiceField(
        required=False,
        choices=[(s, s) for s in OVERVIEW_SORTS]
        + [(f"-{s}", f"-{s}") for s in OVERVIEW_SORTS],
    )
    view = forms.ChoiceField(
        required=False, choices=[("matrix", "matrix"), ("list", "list")]
    )


EVENT_KIND_CHOICES = [
    ("", "any kind"),
    ("tool_argument_validation", "validation"),
    ("tool_execution_failure", "execution failure"),
]


class EventFilterForm(forms.Form):
    kind = forms.ChoiceField(required=False, choices=EVENT_KIND_CHOICES)
    outcome = forms.CharField(required=False, max_length=16)
    phase = forms.CharField(required=False, max_length=32)
    failure_code = forms.CharField(required=False, max_length=300)
    tool = forms.CharField(required=False, max_length=300)
    cursor = forms.CharField(required=False, max_length=100)
