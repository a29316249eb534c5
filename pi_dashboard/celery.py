"""The Celery app. Tasks live in each app's `tasks.py`; schedules in celery-beat."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pi_dashboard.settings")

app = Celery("pi_dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
