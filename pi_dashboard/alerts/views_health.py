"""/healthz, /readyz and /metrics: the dashboard's own health, for probes and
Prometheus. None of them needs a session; /metrics needs a token or an allowed
address (settings.PI_METRICS_TOKEN / PI_METRICS_ALLOW)."""

import hmac
import ipaddress
import time
from typing import Any

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import CollectorRegistry

from pi_dashboard.alerts import health, metrics

WORKER_MAX_AGE = 60.0


@require_GET
@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """The process answers: nothing else is checked (a liveness probe)."""
    return JsonResponse({"status": "ok"})


def _check_db() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"ok": True}


def _check_redis() -> dict[str, Any]:
    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping()
    return {"ok": True}


def _check_age(key: str, max_age: float, what: str) -> dict[str, Any]:
    age = health.age_of(key)
    if age is None:
        return {"ok": False, "detail": f"no {what} seen yet"}
    ok = age <= max_age
    detail = f"{what} seen {age:.0f} s ago" + ("" if ok else f" (> {max_age:.0f} s)")
    return {"ok": ok, "age_seconds": round(age, 1), "detail": detail}


@require_GET
@never_cache
def readyz(request: HttpRequest) -> HttpResponse:
    """Ready to serve: database, Redis, a worker within a minute, beat's last tick."""
    checks: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    for name, check in (("database", _check_db), ("redis", _check_redis)):
        try:
            checks[name] = check()
        except Exception as exc:  # any failure is "not ready", never a 500
            checks[name] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
    if checks["redis"]["ok"]:
        checks["worker"] = _check_age(health.WORKER_KEY, WORKER_MAX_AGE, "worker")
        beat_max = 3.0 * settings.PI_ALERTS_EVALUATE_SECONDS + 30
        checks["beat"] = _check_age(health.BEAT_KEY, beat_max, "beat tick")
    ready = all(c["ok"] for c in checks.values()) and len(checks) == 4
    body = {
        "status": "ready" if ready else "not_ready",
        "checks": checks,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return JsonResponse(body, status=200 if ready else 503)


def _metrics_allowed(request: HttpRequest) -> bool:
    token = settings.PI_METRICS_TOKEN
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    address = request.META.get("REMOTE_ADDR", "")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for allowed in settings.PI_METRICS_ALLOW:
        try:
            if ip in ipaddress.ip_network(allowed, strict=False):
                return True
        except ValueError:
            continue
    return False


@require_GET
@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not settings.PI_METRICS_TOKEN and not settings.PI_METRICS_ALLOW:
        return JsonResponse(
            {
                "detail": "Metrics are off: set PI_METRICS_TOKEN or PI_METRICS_ALLOW.",
                "code": "metrics_disabled",
            },
            status=404,
        )
    if not _metrics_allowed(request):
        return JsonResponse(
            {
                "detail": "Give the metrics token (Authorization: Bearer …) or "
                "scrape from an allowed address.",
                "code": "unauthorized",
            },
            status=401,
        )
    registry = CollectorRegistry()
    registry.register(metrics.DashboardCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
