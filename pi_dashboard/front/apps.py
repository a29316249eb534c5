from django.apps import AppConfig


class FrontConfig(AppConfig):
    """The fleet's pages and operator actions, above the services they call."""

    name = "pi_dashboard.front"
    label = "front"
