"""The Celery app. Tasks live in each app's `tasks.py`; schedules in celery-beat.

Every task is `@app.task(name=...)`: this app, not `shared_task`, so enqueueing from
any process (web, tests, management commands) uses the configured broker, not
Celery's default; and a fixed name, which beat's stored schedules rely on.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pi_dashboard.settings")

app = Celery("pi_dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def send_by_name(name: str, args: tuple[Any, ...], **options: Any) -> None:
    """Send a task by its name, so a service need not import the tasks module that
    imports it (an import circle); in eager mode run it inline, as delay() would."""
    if app.conf.task_always_eager:
        # send_task ignores eager mode.
        app.loader.import_default_modules()
        app.tasks[name].apply_async(args, **options)
        return
    app.send_task(name, args, **options)


@task_prerun.connect
def _drop_stale_connections(**kwargs: object) -> None:
    """Like a request does: drop connections past CONN_MAX_AGE or broken ones."""
    from django.db import close_old_connections

    close_old_connections()
