"""Settings for pi-dashboard. Every deployment knob is an environment variable.

`docker/.env.example` lists them all; `make run` and `make test` fill in DATABASE_URL
and REDIS_URL with embedded servers when they are unset.
"""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from pi_dashboard.lib.env import (
    database_from_url,
    env_bool,
    env_int,
    env_list,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and not env_bool("PI_DASHBOARD_DEV"):
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("DJANGO_BEHIND_TLS_PROXY") else None
)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "django_celery_beat",
    # Only for its templates and static files: /api/v1/docs loads Swagger UI from
    # here, not from a CDN, so the docs work offline (issue 12 item 3).
    "ninja",
    "pi_dashboard.accounts",
    "pi_dashboard.fleet",
    "pi_dashboard.audit",
    "pi_dashboard.ingest",
    "pi_dashboard.control",
    "pi_dashboard.probes",
    "pi_dashboard.front",
    "pi_dashboard.alerts",
]

MIDDLEWARE = [
    "pi_dashboard.alerts.middleware.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "pi_dashboard.lib.middleware.RequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "pi_dashboard.lib.page_errors.DomainErrorPages",
]

ROOT_URLCONF = "pi_dashboard.urls"
WSGI_APPLICATION = "pi_dashboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "pi_dashboard.accounts.context_processors.role",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL")
if not DATABASE_URL:
    raise ImproperlyConfigured(
        "DATABASE_URL is not set. Use `make run` / `make test`, which start an "
        "embedded "
        "PostgreSQL when it is unset, or point it at your server."
    )
DATABASES = {"default": database_from_url(DATABASE_URL)}
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Lets parallel test runs on one server use separate databases.
if env_str("DJANGO_TEST_DB_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": env_str("DJANGO_TEST_DB_NAME")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "pid",
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "fleet:overview"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", str(BASE_DIR / "var" / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = True

# Celery: Redis is the broker; PostgreSQL stays the source of truth for every result.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 540)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 900}
# Keep each worker thread's database connection between tasks (Celery's Django fixup
# otherwise reconnects around every task, a PostgreSQL fork per probe). Connections
# are still health-checked and aged out by CONN_MAX_AGE before each task
# (pi_dashboard/celery.py).
CELERY_DB_REUSE_MAX = 1000
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER")

# Ingest limits (issue #2): a batch is at most this many lines and bytes, after gunzip.
PI_INGEST_MAX_LINES = env_int("PI_INGEST_MAX_LINES", 1000)
PI_INGEST_MAX_BYTES = env_int("PI_INGEST_MAX_BYTES", 5 * 1024 * 1024)
# Concurrent ingest requests per server process before answering 429.
PI_INGEST_MAX_CONCURRENT = env_int("PI_INGEST_MAX_CONCURRENT", 8)
DATA_UPLOAD_MAX_MEMORY_SIZE = PI_INGEST_MAX_BYTES + 64 * 1024

# Retention (ingest): hourly sweep. Snapshots received within this many hours are
# kept (and each agent's newest always); event and corpus lines older than this many
# days by `ts` are deleted (0 keeps them forever), and lines older than what was
# deleted are then answered "duplicate"/`expired`; hourly rollups older than this many
# days are deleted (0 keeps them forever).
PI_SNAPSHOT_RETENTION_HOURS = env_int("PI_SNAPSHOT_RETENTION_HOURS", 48)
PI_EVENT_RETENTION_DAYS = env_int("PI_EVENT_RETENTION_DAYS", 90)
PI_ROLLUP_RETENTION_DAYS = env_int("PI_ROLLUP_RETENTION_DAYS", 400)

# Commands expire when no agent has applied them within this many seconds.
PI_COMMAND_TTL_SECONDS = env_int("PI_COMMAND_TTL_SECONDS", 3600)
# How often agents are told to poll for commands, in seconds.
PI_AGENT_POLL_SECONDS = env_int("PI_AGENT_POLL_SECONDS", 2)

# Probes: private (RFC 1918, loopback, ULA) destinations need this; link-local and
# cloud metadata addresses are always refused.
PI_PROBES_ALLOW_PRIVATE = env_bool("PI_PROBES_ALLOW_PRIVATE")
# Worker variables an endpoint may name as its API key (`api_key_env`): names, or
# `PREFIX_*` patterns. The probe sends the value to the endpoint's URL, so anything
# else on the worker (DJANGO_SECRET_KEY, DATABASE_URL) must stay unnamable.
PI_PROBE_KEY_ENV_ALLOWED = env_list("PI_PROBE_KEY_ENV_ALLOWED", "PI_PROBE_KEY_*")
# Key for API keys at rest (Fernet, urlsafe base64 of 32 bytes). Derived from
# SECRET_KEY when unset, so rotating SECRET_KEY then needs the keys re-entered.
PI_FIELD_ENCRYPTION_KEY = env_str("PI_FIELD_ENCRYPTION_KEY")

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "pi-dashboard@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # Request lines can carry tokens in query strings; keep them out of logs.
        "django.server": {"level": "WARNING"},
    },
}

# Probes (issue #5, probes part): probes in flight at once across all workers; lease
# grace before an abandoned probe may be taken over; a pending run older than this is
# re-sent by the sweep.
PI_PROBES_MAX_CONCURRENCY = env_int("PI_PROBES_MAX_CONCURRENCY", 50)
PI_PROBES_LEASE_GRACE_SECONDS = env_int("PI_PROBES_LEASE_GRACE_SECONDS", 30)
PI_PROBES_STALE_PENDING_SECONDS = env_int("PI_PROBES_STALE_PENDING_SECONDS", 300)

# Control (commands): long-polls (`GET /agent/commands?wait=`) one server process holds
# at once. Each holds a request thread while it waits, so this must stay below the
# process's thread count; past it, polls answer at once and agents simply poll again.
PI_LONG_POLL_MAX_CONCURRENT = env_int("PI_LONG_POLL_MAX_CONCURRENT", 4)

# Alerts (issue 11): a host or agent is late, then down, this many seconds after its
# last heartbeat (agents beat every 30 s); overrides per host or tag in the UI. Rules
# are evaluated every PI_ALERTS_EVALUATE_SECONDS by Celery beat.
PI_LIVENESS_LATE_SECONDS = env_int("PI_LIVENESS_LATE_SECONDS", 90)
PI_LIVENESS_DOWN_SECONDS = env_int("PI_LIVENESS_DOWN_SECONDS", 300)
PI_ALERTS_EVALUATE_SECONDS = env_int("PI_ALERTS_EVALUATE_SECONDS", 60)
# /metrics: a bearer token, or client addresses allowed without one (comma list of
# IPs or CIDR networks). Both empty: /metrics answers 404.
PI_METRICS_TOKEN = env_str("PI_METRICS_TOKEN")
PI_METRICS_ALLOW = env_list("PI_METRICS_ALLOW")
