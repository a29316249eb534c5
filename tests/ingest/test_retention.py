"""Retention: old snapshots, lines and rollups go; re-sent old lines never recount."""

import hashlib
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.db.models import Sum
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from pi_dashboard.fleet.models import Host
from pi_dashboard.ingest import retention, tasks
from pi_dashboard.ingest.models import (
    CorpusRecord,
    DailyRollup,
    EventRecord,
    RetentionMark,
    Rollup,
    Snapshot,
)
from tests.ingest.support import AgentClient
from tests.ingest.test_batches import FINGERPRINT, event, line

NOW = timezone.now()


def stamp(days_ago: float, n: int = 0) -> str:
    moment = NOW - timedelta(days=days_ago, seconds=n)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def events_of(days_ago: float, count: int, first: int = 0) -> list[bytes]:
    return [line(event(first + n, ts=stamp(days_ago, n))) for n in range(count)]


def outcome_total() -> int:
    total = Rollup.objects.filter(dimension="outcome").aggregate(n=Sum("count"))["n"]
    return int(total or 0)


@pytest.fixture
def agent(db: None) -> AgentClient:
    agent = AgentClient.enroll()
    assert agent.heartbeat(FINGERPRINT).status_code == 200
    return agent


def test_old_event_lines_go_in_batches_and_never_count_twice(
    agent: AgentClient,
) -> None:
    old, recent = events_of(100, 7), events_of(10, 3, first=100)
    assert agent.lines("events", old + recent)[0]["stored"] == 10
    assert outcome_total() == 10

    result = retention.retention_apply(now=NOW, batch=3)  # 3 + 3 + 1: loops

    assert result.events == 7
    assert EventRecord.objects.count() == 3
    assert outcome_total() == 10  # rollups keep what was counted
    # The agent re-sends its rotated log, plus a 100-day-old line never seen before.
    unseen = events_of(100, 1, first=500)
    answer = agent.lines("events", old + recent + unseen)[0]
    assert (answer["stored"], answer["duplicate"], answer["rejected"]) == (0, 11, 0)
    by_line = {r["line"]: r for r in answer["results"]}
    assert by_line[1]["code"] == "expired"
    assert "retention" in by_line[1]["reason"]
    assert by_line[8] == {"line": 8, "status": "duplicate"}  # still stored: plain
    assert by_line[11]["code"] == "expired"
    assert EventRecord.objects.count() == 3
    assert outcome_total() == 10


def test_old_corpus_lines_go_and_provider_counts_stay(agent: AgentClient) -> None:
    rows = [
        {
            "ts": stamp(days),
            "provider": "openrouter",
            "modelId": "qwen/qwen3-coder",
            "reason": "rate_limit",
            "retryable": True,
            "message": f"429 #{days}",
        }
        for days in (120, 95, 30)
    ]
    body = [line(r) for r in rows]
    assert agent.lines("corpus", body)[0]["stored"] == 3

    assert retention.retention_apply(now=NOW).corpus == 2

    assert [r.payload["message"] for r in CorpusRecord.objects.all()] == ["429 #30"]
    answer = agent.lines("corpus", body)[0]
    assert [r.get("code") for r in answer["results"]] == ["expired", "expired", None]
    assert answer["duplicate"] == 3
    assert outcome_total() == 3


def test_lines_are_kept_until_retention_deletes_some(
    agent: AgentClient, settings: Any
) -> None:
    # Nothing deleted yet, so nothing is forgotten: old lines are stored as usual.
    assert agent.lines("events", events_of(300, 2))[0]["stored"] == 2
    settings.PI_EVENT_RETENTION_DAYS = 0  # keep raw lines forever
    assert retention.retention_apply(now=NOW).events == 0
    assert EventRecord.objects.count() == 2
    assert not RetentionMark.objects.exists()
    assert agent.lines("events", events_of(300, 1, first=9))[0]["stored"] == 1


def test_the_mark_never_moves_back(agent: AgentClient, settings: Any) -> None:
    retention.retention_apply(now=NOW)
    first = RetentionMark.objects.get(table="events").horizon
    settings.PI_EVENT_RETENTION_DAYS = 365  # keeping more from now on
    retention.retention_apply(now=NOW)
    assert RetentionMark.objects.get(table="events").horizon == first
    # Lines between the two horizons may have been deleted: still refused.
    answer = agent.lines("events", events_of(200, 1))[0]
    assert answer["results"][0]["code"] == "expired"


def test_snapshots_keep_each_agents_newest_and_recent_ones(db: None) -> None:
    first, second = AgentClient.enroll("a"), AgentClient.enroll("b")
    ages = {first.agent: [100, 80, 60, 5], second.agent: [300, 200]}
    for agent, hours in ages.items():
        for age in hours:
            snapshot = Snapshot.objects.create(
                agent=agent,
                content_hash=hashlib.sha256(f"{agent.pk}:{age}".encode()).digest(),
                document={"version": 1, "hosts": {}},
            )
            received = NOW - timedelta(hours=age)
            Snapshot.objects.filter(pk=snapshot.pk).update(received_at=received)

    assert retention.retention_apply(now=NOW).snapshots == 4

    left = {
        (
            s.agent.name if s.agent else None,
            round((NOW - s.received_at).total_seconds() / 3600),
        )
        for s in Snapshot.objects.select_related("agent")
    }
    assert left == {("a", 5), ("b", 200)}  # a's recent one; b's newest, though old


def test_old_rollups_go(agent: AgentClient) -> None:
    host = Host.objects.get(pi_id=FINGERPRINT["id"])
    for days in (500, 401, 399):
        bucket = (NOW - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)
        Rollup.objects.create(
            bucket=bucket, host=host, dimension="tool", key="bash", count=days
        )
    assert retention.retention_apply(now=NOW).rollups == 2
    assert list(Rollup.objects.values_list("count", flat=True)) == [399]


def test_old_daily_rollups_go_once_their_whole_day_is_past(agent: AgentClient) -> None:
    host = Host.objects.get(pi_id=FINGERPRINT["id"])
    cutoff = datetime(2026, 7, 14, 13, 30, tzinfo=UTC)  # 400 days before `now`
    for day in (12, 13, 14, 15):
        DailyRollup.objects.create(
            bucket=datetime(2026, 7, day, tzinfo=UTC),
            host=host,
            dimension="outcome",
            key="execution:failed",
            count=day,
        )
    result = retention.retention_apply(now=cutoff + timedelta(days=400))
    # The 14th holds the cutoff: kept whole until the day has passed.
    assert result.daily_rollups == 2
    assert sorted(DailyRollup.objects.values_list("count", flat=True)) == [14, 15]


def test_beat_runs_the_task_hourly(db: None) -> None:
    task = PeriodicTask.objects.get(name="ingest: retention")
    assert task.task == "ingest.retention_apply"
    assert task.enabled
    assert task.interval is not None
    assert (task.interval.every, task.interval.period) == (1, "hours")
    assert tasks.retention_apply.name == task.task
    assert tasks.retention_apply() == {
        "snapshots": 0,
        "events": 0,
        "corpus": 0,
        "rollups": 0,
        "daily_rollups": 0,
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_raising_the_mark_waits_for_ingest_in_flight() -> None:
    # An ingest transaction that read the old mark must finish before rows below
    # the new one can be deleted: else it could store a line deleted meanwhile.
    in_flight, release = threading.Event(), threading.Event()

    def ingest_batch() -> None:
        try:
            with transaction.atomic():
                assert retention.mark_read(table="events") is None
                in_flight.set()
                release.wait(20)
        finally:
            connections.close_all()

    worker = threading.Thread(target=ingest_batch)
    worker.start()
    assert in_flight.wait(20)
    raised: list[datetime] = []
    raiser = threading.Thread(
        target=lambda: (
            raised.append(retention.mark_raise(table="events", horizon=NOW)),
            connections.close_all(),
        )
    )
    raiser.start()
    time.sleep(0.5)
    assert not raised  # blocked by the batch in flight
    release.set()
    worker.join(20)
    raiser.join(20)
    assert raised == [NOW]
    connection.close()
