#!/bin/sh
# pi-dashboard container entrypoint: `web` (migrate, then gunicorn), `worker`, `beat`,
# or any other command (e.g. `python manage.py createsuperuser`).
set -eu

case "${1:-web}" in
  web)
    python manage.py migrate --noinput
    exec gunicorn pi_dashboard.wsgi \
      --bind "0.0.0.0:${PORT:-8000}" \
      --workers "${WEB_CONCURRENCY:-3}" \
      --threads "${GUNICORN_THREADS:-8}" \
      --timeout 60 \
      --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1}" \
      --access-logfile - \
      --access-logformat '%(h)s %(m)s %(U)s %(s)s %(M)sms'
    ;;
  worker)
    exec celery -A pi_dashboard worker --loglevel "${LOG_LEVEL:-INFO}" \
      --concurrency "${CELERY_CONCURRENCY:-4}"
    ;;
  beat)
    exec celery -A pi_dashboard beat --loglevel "${LOG_LEVEL:-INFO}" \
      --schedule /app/var/beat/celerybeat-schedule
    ;;
  *)
    exec "$@"
    ;;
esac
