"""Filter forms of the control pages: query strings are validated, never trusted."""

from django import forms

from pi_dashboard.control.models import CommandKind, CommandState


class CommandFilterForm(forms.Form):
    host = forms.CharField(required=False, max_length=200)
    model = forms.CharField(required=False, max_length=600)
    state = forms.ChoiceField(
        required=False, choices=[("", "any state"), *CommandState.choices]
    )
    kind = forms.ChoiceField(
        required=False, choices=[("", "any kind"), *CommandKind.choices]
    )
