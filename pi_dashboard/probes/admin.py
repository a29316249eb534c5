from django.contrib import admin

from pi_dashboard.probes.models import (
    Drift,
    Endpoint,
    ProbeRun,
    ProbeSchedule,
)


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "model_key", "base_url", "last_verdict", "is_enabled"]
    # Secrets are edited through the probes pages, which encrypt them; the URL and
    # the key variable there too, whose services check them (issue 9.1, 9.9).
    exclude = ["api_key_encrypted", "headers_encrypted"]
    readonly_fields = ["base_url", "api_key_env"]


@admin.register(ProbeRun)
class ProbeRunAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["id", "endpoint", "trigger", "state", "verdict", "created_at"]
    list_filter = ["state", "verdict"]


admin.site.register(ProbeSchedule)
admin.site.register(Drift)
