"""Rule evaluation: signals from rollups and state, hysteresis, reminders,
resolved notices, silences and maintenance (delivery only), scopes."""

from datetime import time, timedelta

import pytest
from django.utils import timezone

from pi_dashboard.alerts import services
from pi_dashboard.alerts.models import Alert, AlertEvent, Notification
from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Change, Host, HostModel
from pi_dashboard.ingest.models import Dimension, Rollup
from tests.alerts.conftest import add_counts, deliver_queued, evaluate, pair, rule

pytestmark = pytest.mark.django_db


def test_failure_rate_fires_after_n_and_resolves_after_m(channel, receiver) -> None:
    hm = pair("h1", "openai/gpt-5.1")
    rule(
        "exec failures",
        "failure_rate",
        param="execution",
        threshold=3,
        fire_after=2,
        resolve_after=2,
        channels=[channel],
    )
    add_counts(hm, {(Dimension.PHASE, "execution"): 5})
    assert not evaluate().fired  # 1 of 2: pending
    assert Alert.objects.get().state == "pending"
    fired = evaluate().fired
    assert len(fired) == 1
    assert not evaluate().fired  # already firing: not again
    deliver_queued()
    assert receiver.titles() == [
        "[pi-dashboard] FIRING: exec failures: h1 × openai/gpt-5.1"
    ]
    assert "/hosts/h1/models/openai/gpt-5.1/?range=24h" in receiver.bodies[0]["message"]
    # The failures leave the window: two clear cycles to resolve.
    later = timezone.now() + timedelta(hours=3)
    assert not evaluate(later).resolved
    assert evaluate(later).resolved
    deliver_queued()
    assert receiver.titles()[-1].startswith("[pi-dashboard] RESOLVED: exec failures")
    kinds = list(AlertEvent.objects.order_by("at", "id").values_list("kind", flat=True))
    assert kinds == ["fired", "resolved"]


def test_a_pending_alert_that_clears_never_existed() -> None:
    hm = pair("h1", "openai/gpt-5.1")
    rule(
        "codes", "failure_rate", param="code:file_not_found", threshold=1, fire_after=3
    )
    add_counts(hm, {(Dimension.FAILURE_CODE, "file_not_found"): 2})
    evaluate()
    assert Alert.objects.count() == 1
    evaluate(timezone.now() + timedelta(hours=3))
    assert Alert.objects.count() == 0


def test_failure_rate_per_model_sums_the_fleet() -> None:
    for i in range(3):
        add_counts(
            pair(f"h{i}", "openai/gpt-5.1"),
            {(Dimension.OUTCOME, "execution:failed"): 2},
        )
    rule("model failures", "failure_rate_model", threshold=6)
    assert len(evaluate().fired) == 1
    alert = Alert.objects.get()
    assert alert.subject == "model:openai/gpt-5.1"
    assert alert.value == 6


def test_bounce_rate_is_bounced_over_all_validations() -> None:
    add_counts(
        pair("h1", "openai/gpt-5.1"),
        {
            (Dimension.OUTCOME, "validation:bounced"): 9,
            (Dimension.OUTCOME, "validation:repaired"): 3,
        },
    )
    add_counts(
        pair("h2", "openai/gpt-5.1"),
        {(Dimension.OUTCOME, "validation:repaired"): 9},
    )
    # Too few validations to say anything: 2 bounced of 2.
    add_counts(
        pair("h3", "openai/gpt-5.1"),
        {(Dimension.OUTCOME, "validation:bounced"): 2},
    )
    rule("bounces", "bounce_rate", threshold=0.5)
    evaluate()
    alert = Alert.objects.get()
    assert alert.label == "h1 × openai/gpt-5.1"
    assert alert.value == 0.75


def test_scope_by_host_tag_and_provider() -> None:
    a = pair("h-a", "openai/gpt-5.1")
    b = pair("h-b", "anthropic/claude")
    for hm in (a, b):
        add_counts(hm, {(Dimension.OUTCOME, "execution:failed"): 4})
    services.host_tag_add(host=a.host, tag="gpu")
    rule("gpu only", "failure_rate", threshold=1, scope_kind="tag", scope_value="gpu")
    rule(
        "anthropic only",
        "failure_rate",
        threshold=1,
        scope_kind="provider",
        scope_value="anthropic",
    )
    evaluate()
    fired = dict(Alert.objects.values_list("rule__name", "label"))
    assert fired == {
        "gpu only": "h-a × openai/gpt-5.1",
        "anthropic only": "h-b × anthropic/claude",
    }


def test_agent_down_fires_and_resolves_when_it_returns(channel, receiver) -> None:
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(minutes=30))
    pair("h-fine", "openai/gpt-5.1")
    rule("down", "agent_down", channels=[channel])
    evaluate()
    alert = Alert.objects.get()
    assert alert.state == "firing"
    assert alert.label.startswith("h-gone down since ")
    Host.objects.filter(pi_id="h-gone").update(last_contact_at=timezone.now())
    evaluate()
    alert.refresh_from_db()
    assert alert.state == "resolved"
    deliver_queued()
    assert [t.split(":")[0] for t in receiver.titles()] == [
        "[pi-dashboard] FIRING",
        "[pi-dashboard] RESOLVED",
    ]


def test_reminders_while_firing(channel, receiver) -> None:
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    rule("down", "agent_down", remind_minutes=30, channels=[channel])
    now = timezone.now()
    evaluate(now)
    assert not evaluate(now + timedelta(minutes=10)).reminded
    assert evaluate(now + timedelta(minutes=31)).reminded
    deliver_queued()
    assert receiver.titles()[1].startswith("[pi-dashboard] STILL FIRING: down")


def test_silence_suppresses_delivery_not_state(channel, receiver) -> None:
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    r = rule("down", "agent_down", channels=[channel])
    services.silence_create(
        rule=r,
        scope_kind="host",
        scope_value="h-gone",
        ends_at=timezone.now() + timedelta(hours=1),
        reason="moving racks",
        actor="otto",
    )
    evaluate()
    deliver_queued()
    assert Alert.objects.get().state == "firing"
    n = Notification.objects.get()
    assert n.state == "suppressed"
    assert n.error.startswith("silenced until ")
    assert receiver.bodies == []


def test_recurring_maintenance_suppresses_delivery(channel, receiver) -> None:
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    rule("down", "agent_down", channels=[channel])
    now = timezone.now()
    start = (now - timedelta(minutes=5)).time().replace(second=0, microsecond=0)
    services.maintenance_save(
        window=None,
        name="nightly reboot",
        scope_kind="fleet",
        scope_value="",
        weekdays=[(now - timedelta(minutes=5)).isoweekday()],
        start_time=start,
        duration_minutes=30,
    )
    evaluate()
    assert Notification.objects.get().error == "maintenance: nightly reboot"
    assert Alert.objects.get().state == "firing"


def test_maintenance_needs_one_kind_of_schedule() -> None:
    from pi_dashboard.lib.errors import DomainError

    with pytest.raises(DomainError, match="either one-off"):
        services.maintenance_save(
            window=None,
            name="x",
            scope_kind="fleet",
            scope_value="",
            starts_at=timezone.now(),
            ends_at=timezone.now() + timedelta(hours=1),
            weekdays=[1],
            start_time=time(2, 0),
            duration_minutes=30,
        )


def test_a_failing_channel_does_not_block_the_others(channel, receiver) -> None:
    broken = services.channel_save(
        channel=None, name="dead", url="json://127.0.0.1:1/x", is_enabled=True
    )
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    rule("down", "agent_down", channels=[broken, channel])
    evaluate()
    deliver_queued()
    states = dict(Notification.objects.values_list("channel__name", "state"))
    assert states == {"dead": "failed", "ops-hook": "sent"}
    broken.refresh_from_db()
    assert "Connection error" in broken.last_error
    assert len(receiver.bodies) == 1


def test_rule_learned_and_evictions_from_changes() -> None:
    hm = pair("h1", "openai/gpt-5.1")
    now = timezone.now()
    for i in range(3):
        Change.objects.create(host_model=hm, kind="rule_evicted", at=now, mode=f"m{i}")
    Change.objects.create(host_model=hm, kind="rule_added", at=now, mode="x")
    rule("thrash", "rule_evictions", threshold=3)
    rule("learned", "rule_learned", threshold=1)
    evaluate()
    assert set(Alert.objects.values_list("rule__name", "value")) == {
        ("thrash", 3.0),
        ("learned", 1.0),
    }


def test_text_protocol_demoted() -> None:
    hm = pair("h1", "openai/gpt-5.1")
    Change.objects.create(
        host_model=hm,
        kind="verdict_changed",
        at=timezone.now(),
        before={"status": "text-protocol"},
        after={"status": "none"},
    )
    Change.objects.create(
        host_model=hm,
        kind="verdict_changed",
        at=timezone.now(),
        before={"status": "none"},
        after={"status": "native"},
    )
    rule("demoted", "text_protocol_demoted")
    evaluate()
    assert Alert.objects.get().value == 1


def test_command_trouble(operator) -> None:
    hm = pair("h1", "openai/gpt-5.1")
    now = timezone.now()
    for state in ("failed", "expired", "applied"):
        Command.objects.create(
            host=hm.host,
            model=hm.model,
            kind="remove_rule",
            state=state,
            expires_at=now,
            finished_at=now,
        )
    rule("commands", "command_trouble", threshold=1)
    evaluate()
    assert Alert.objects.get().value == 2


@pytest.mark.django_db(transaction=True)
def test_a_second_cycle_while_one_runs_is_skipped() -> None:
    import threading

    from django.db import connection, transaction

    from pi_dashboard.alerts.evaluation import EVALUATION_LOCK

    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [EVALUATION_LOCK])
            held.set()
            release.wait(10)
        connection.close()

    thread = threading.Thread(target=hold_the_lock)
    thread.start()
    try:
        assert held.wait(10)
        assert evaluate().skipped
    finally:
        release.set()
        thread.join()
    assert not evaluate().skipped


def test_an_alert_storm_is_written_in_bulk(
    django_assert_max_num_queries, django_capture_on_commit_callbacks, receiver
) -> None:
    """Bulk writes: alerts, events and notifications in one statement per table,
    and one delivery task per channel (not per message)."""
    from unittest import mock

    from pi_dashboard.alerts import notifying
    from pi_dashboard.alerts import services as alert_services

    channels = [
        alert_services.channel_save(
            channel=None, name=f"hook-{i}", url=receiver.url(), is_enabled=True
        )
        for i in range(2)
    ]
    rule("storm", "failure_rate", threshold=1, channels=channels)
    for n in range(40):
        add_counts(
            pair(f"h{n}", "openai/gpt-5.1"),
            {(Dimension.OUTCOME, "execution:failed"): 2},
        )
    # 40 alerts × 2 channels = 80 messages: in the statements a single alert takes.
    with (
        mock.patch.object(notifying, "send_by_name") as sent,
        django_capture_on_commit_callbacks(execute=True),
        django_assert_max_num_queries(25),
    ):
        result = evaluate()
    assert len(result.fired) == 40
    assert Alert.objects.filter(state="firing").count() == 40
    assert AlertEvent.objects.filter(kind="fired").count() == 40
    assert Notification.objects.filter(state="queued").count() == 80
    # One task per channel, 40 messages each.
    assert [call.args[0] for call in sent.call_args_list] == [
        notifying.NOTIFICATIONS_SEND_TASK
    ] * 2
    assert sorted(len(call.args[1][0]) for call in sent.call_args_list) == [40, 40]
    # Resolving all of them is as cheap.
    for hm in HostModel.objects.all():
        Rollup.objects.filter(host_id=hm.host_id).delete()
    with (
        mock.patch.object(notifying, "send_by_name"),
        django_assert_max_num_queries(25),
    ):
        assert len(evaluate().resolved) == 40
    assert Alert.objects.filter(state="resolved").count() == 40
