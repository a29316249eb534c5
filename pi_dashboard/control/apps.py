from django.apps import AppConfig


class ControlConfig(AppConfig):
    name = "pi_dashboard.control"
    label = "control"

    def ready(self) -> None:
        # Every Django process (web, manage.py commands, tests) must enqueue to our
        # broker: without the project's Celery app loaded, `shared_task`s bind to
        # Celery's default app and its amqp:// broker. Not in pi_dashboard/__init__.py,
        # because the host agent imports that package and must not need Celery.
        import pi_dashboard.celery  # noqa: F401
