from django.apps import AppConfig


class FleetConfig(AppConfig):
    name = "pi_dashboard.fleet"
    label = "fleet"
