from django.apps import AppConfig


class ProbesConfig(AppConfig):
    name = "pi_dashboard.probes"
    label = "probes"
