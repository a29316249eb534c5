"""/healthz, /readyz and /metrics."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client

from pi_dashboard.alerts import health
from pi_dashboard.ingest.models import Dimension
from pi_dashboard.lib import counters
from tests.alerts.conftest import add_counts, pair

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_keys() -> None:
    cache.delete_many([health.WORKER_KEY, health.BEAT_KEY])
    counters.redis_client().delete(*[f"metrics:{name}" for name in counters.COUNTERS])


def test_healthz_needs_nothing() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_waits_for_a_worker_and_a_beat_tick() -> None:
    response = Client().get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["database"]["ok"] is True
    assert checks["redis"]["ok"] is True
    assert checks["worker"] == {"ok": False, "detail": "no worker seen yet"}
    health.worker_seen()
    health.beat_tick()
    ready = Client().get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"


def test_readyz_says_a_silent_worker_is_stale() -> None:
    cache.set(health.WORKER_KEY, 0.0, timeout=None)  # seen at the epoch
    health.beat_tick()
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert "(> 60 s)" in response.json()["checks"]["worker"]["detail"]


def test_metrics_off_without_token_or_allow_list(settings) -> None:
    settings.PI_METRICS_TOKEN, settings.PI_METRICS_ALLOW = "", []
    response = Client().get("/metrics")
    assert response.status_code == 404
    assert response.json()["code"] == "metrics_disabled"


def test_metrics_need_the_token(settings) -> None:
    settings.PI_METRICS_TOKEN, settings.PI_METRICS_ALLOW = "m3trics", []
    assert Client().get("/metrics").status_code == 401
    wrong = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 401
    hm = pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    pair("h-up", "openai/gpt-5.1")
    add_counts(hm, {(Dimension.PHASE, "execution"): 7})
    counters.ingest_batch(kind="events", stored=5, duplicate=2, rejected=0)
    counters.task_outcome("pi_dashboard.alerts.tasks.alerts_evaluate", "SUCCESS")
    response = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer m3trics")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'pi_dashboard_hosts{liveness="down"} 1.0' in text
    assert 'pi_dashboard_hosts{liveness="up"} 1.0' in text
    assert 'pi_dashboard_pairs{verdict="unprobed"} 2.0' in text
    assert 'pi_dashboard_failures_last_hour{phase="execution"} 7.0' in text
    assert 'pi_dashboard_ingest_lines_total{kind="events",result="stored"} 5.0' in text
    assert (
        'pi_dashboard_celery_tasks_total{outcome="success",'
        'task="pi_dashboard.alerts.tasks.alerts_evaluate"} 1.0'
    ) in text
    assert 'pi_dashboard_http_requests_total{method="GET",status="4xx"} 2.0' in text


def test_metrics_allow_list_by_address(settings) -> None:
    settings.PI_METRICS_TOKEN, settings.PI_METRICS_ALLOW = "", ["127.0.0.0/8"]
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 401
