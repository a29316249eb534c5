import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pi_dashboard.settings")
application = get_wsgi_application()

# Load the project's Celery app, so tasks enqueued by views go to our broker
# (otherwise `shared_task`s bind to Celery's default app and its amqp:// broker).
import pi_dashboard.celery  # noqa: E402, F401
