from django.apps import AppConfig


class AuditConfig(AppConfig):
    """Who did what, when, and was it stopped: the one log every app writes to."""

    name = "pi_dashboard.audit"
    label = "audit"
