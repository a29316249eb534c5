"""HTML forms of the probes pages; they turn posted text into service inputs."""

from typing import Any

from django import forms

from pi_dashboard.probes import services
from pi_dashboard.probes.models import (
    ScheduleKind,
    SelectionKind,
    TokenParam,
)


def split_tags(raw: str) -> list[str]:
    return [t.strip() for t in raw.replace("\n", ",").split(",") if t.strip()]


def parse_headers(raw: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in raw.splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise forms.ValidationError(
                f"Write headers as `Name: value`, not {line!r}."
            )
        headers[name.strip()] = value.strip()
    return headers


class EndpointForm(forms.Form):
    name = forms.CharField(max_length=200)
    base_url = forms.CharField(
        max_length=500, help_text="e.g. http://127.0.0.1:11434/v1"
    )
    server_model = forms.CharField(max_length=300, label="Model id on the server")
    model_key = forms.CharField(max_length=600, label="pi model key (provider/modelId)")
    api_key = forms.CharField(
        required=False,
        widget=forms.PasswordInput,
        help_text="Leave empty to keep the stored key.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")
    api_key_env = forms.CharField(
        required=False,
        label="…or read the key from this worker variable",
        help_text="Admins only; an allowed name (PI_PROBE_KEY_ENV_ALLOWED, by "
        "default PI_PROBE_KEY_…).",
    )
    headers = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="One `Name: value` per line; stored encrypted. "
        "Empty keeps the current ones.",
    )
    timeout_seconds = forms.FloatField(initial=60, min_value=0.1, max_value=600)
    token_param = forms.ChoiceField(choices=TokenParam.choices)
    is_streaming = forms.BooleanField(required=False, initial=True, label="Streaming")
    tags = forms.CharField(required=False, help_text="Comma-separated.")
    trials = forms.IntegerField(
        initial=1, min_value=1, max_value=10, label="Trials (k of k)"
    )
    max_concurrent_probes = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1000,
        label="Concurrent probes on its server",
        help_text="Empty: no limit of its own. 1 for llama.cpp-like servers, which "
        "abort a stream when another request arrives.",
    )
    is_enabled = forms.BooleanField(required=False, initial=True, label="Enabled")

    def clean_headers(self) -> dict[str, str] | None:
        raw = self.cleaned_data.get("headers", "")
        return parse_headers(raw) if raw.strip() else None

    def data_for_service(self) -> services.EndpointData:
        c: dict[str, Any] = self.cleaned_data
        api_key = "" if c["clear_api_key"] else (c["api_key"] or None)
        return services.EndpointData(
            name=c["name"],
            base_url=c["base_url"],
            server_model=c["server_model"],
            model_key=c["model_key"],
            api_key=api_key,
            api_key_env=c["api_key_env"],
            headers=c["headers"],
            timeout_seconds=c["timeout_seconds"],
            token_param=c["token_param"],
            is_streaming=c["is_streaming"],
            tags=split_tags(c["tags"]),
            trials=c["trials"],
            max_concurrent_probes=c["max_concurrent_probes"],
            is_enabled=c["is_enabled"],
        )


class ScheduleForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=ScheduleKind.choices, label="Runs")
    every_seconds = forms.IntegerField(
        required=False,
        min_value=services.MIN_INTERVAL_SECONDS,
        max_value=services.MAX_INTERVAL_SECONDS,
        label="Every (seconds)",
    )
    cron = forms.CharField(
        required=False, label="Cron (UTC)", help_text="e.g. */15 * * * *"
    )
    selection_kind = forms.ChoiceField(choices=SelectionKind.choices, label="Endpoints")
    selection_value = forms.CharField(required=False, label="Tag or provider")
    jitter_seconds = forms.IntegerField(initial=10, min_value=0, max_value=3600)
    is_paused = forms.BooleanField(required=False, label="Paused")

    # Fields that matter for one choice only: the page hides them for the others.
    SHOW_WHEN = {
        "every_seconds": "kind=interval",
        "cron": "kind=crontab",
        "selection_value": "selection_kind=tag|provider",
    }

    def data_for_service(self) -> services.ScheduleData:
        c: dict[str, Any] = self.cleaned_data
        return services.ScheduleData(
            name=c["name"],
            kind=c["kind"],
            every_seconds=c["every_seconds"],
            cron=c["cron"] or "",
            selection_kind=c["selection_kind"],
            selection_value=c["selection_value"] or "",
            jitter_seconds=c["jitter_seconds"] or 0,
            is_paused=c["is_paused"],
        )
