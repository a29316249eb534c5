"""Last contact: written when it is older than the resolution, else not at all."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from pi_dashboard.fleet import services
from pi_dashboard.fleet.models import Agent, Host


def bound_agent(seen_ago: timedelta | None) -> Agent:
    moment = None if seen_ago is None else timezone.now() - seen_ago
    host = Host.objects.create(pi_id="contact-host", last_contact_at=moment)
    agent, _ = services.agent_issue(name="contact", actor="test")
    Agent.objects.filter(pk=agent.pk).update(host=host, last_contact_at=moment)
    return Agent.objects.select_related("host").get(pk=agent.pk)


@pytest.mark.django_db
@pytest.mark.parametrize("seen_ago", [None, services.CONTACT_RESOLUTION * 2])
def test_stale_contact_is_written_for_agent_and_host(seen_ago: timedelta) -> None:
    agent = bound_agent(seen_ago)
    before = timezone.now()
    services.agent_contact(agent=agent)
    agent.refresh_from_db()
    host = Host.objects.get(pk=agent.host_id)
    assert agent.last_contact_at is not None
    assert agent.last_contact_at >= before
    assert host.last_contact_at is not None
    assert host.last_contact_at >= before


@pytest.mark.django_db
def test_recent_contact_costs_no_query() -> None:
    agent = bound_agent(timedelta(seconds=1))
    with CaptureQueriesContext(connection) as queries:
        services.agent_contact(agent=agent)
    assert len(queries) == 0


@pytest.mark.django_db
def test_a_recent_agent_with_a_stale_host_updates_the_host() -> None:
    agent = bound_agent(timedelta(seconds=1))
    Host.objects.filter(pk=agent.host_id).update(last_contact_at=None)
    agent = Agent.objects.select_related("host").get(pk=agent.pk)
    services.agent_contact(agent=agent)
    assert Host.objects.get(pk=agent.host_id).last_contact_at is not None
