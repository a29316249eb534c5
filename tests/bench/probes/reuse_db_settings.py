"""Bench-only settings variant: the project's settings plus CELERY_DB_REUSE_MAX.

Celery's Django fixup closes the database connection before and after every task
unless CELERY_DB_REUSE_MAX is set, so each probe opens a new PostgreSQL connection
(a server process fork). This variant shows what the one-line setting would gain:

    BENCH_WORKER_SETTINGS=tests.bench.probes.reuse_db_settings \
        .venv/bin/python -m pytest tests/bench/probes -s -p no:cacheprovider
"""

from pi_dashboard.settings import *  # noqa: F403

CELERY_DB_REUSE_MAX = 1000
