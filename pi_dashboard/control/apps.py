from django.apps import AppConfig


class ControlConfig(AppConfig):
    name = "pi_dashboard.control"
    label = "control"
