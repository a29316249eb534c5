from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "pi_dashboard.alerts"
    label = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        # Connects the worker heartbeat and task-outcome signals (readyz, metrics).
        from pi_dashboard.alerts import signals  # noqa: F401
