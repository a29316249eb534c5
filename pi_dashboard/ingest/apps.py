from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "pi_dashboard.ingest"
    label = "ingest"
