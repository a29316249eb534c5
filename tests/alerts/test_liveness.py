"""Liveness: up / late / down from heartbeats, grace per host or tag, on the pages."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from pi_dashboard.alerts import liveness, services
from pi_dashboard.fleet.models import Host


def host_seen(pi_id: str, ago: timedelta | None) -> Host:
    at = None if ago is None else timezone.now() - ago
    return Host.objects.create(pi_id=pi_id, last_contact_at=at)


def badge(html: str, pi_id: str) -> str:
    """The liveness badge text in the host list row of pi_id."""
    row = html.split(f">{pi_id}</a>", 1)[1].split("</tr>", 1)[0]
    return row.split('class="badge', 1)[1].split(">", 1)[1].split("<", 1)[0]


@pytest.fixture
def viewer_client(viewer: User) -> Client:
    client = Client()
    client.force_login(viewer)
    return client


@pytest.mark.django_db
def test_host_list_shows_up_late_and_down_since(viewer_client: Client) -> None:
    host_seen("h-up", timedelta(seconds=5))
    host_seen("h-late", timedelta(seconds=120))
    down = host_seen("h-down", timedelta(minutes=30))
    host_seen("h-never", None)
    html = viewer_client.get("/hosts/").content.decode()
    assert badge(html, "h-up") == "up"
    assert badge(html, "h-late").startswith("late since ")
    since = down.last_contact_at + timedelta(seconds=300)  # type: ignore[operator]
    assert badge(html, "h-down") == f"down since {since:%Y-%m-%d %H:%M} UTC"
    assert badge(html, "h-never") == "never seen"


@pytest.mark.django_db
def test_host_override_beats_tag_override_beats_default(viewer_client: Client) -> None:
    slow = host_seen("h-slow-link", timedelta(minutes=30))
    tagged = host_seen("h-tagged", timedelta(minutes=30))
    services.host_tag_add(host=tagged, tag="satellite")
    services.grace_set(host=None, tag="satellite", late_seconds=600, down_seconds=3600)
    services.grace_set(host=slow, tag="", late_seconds=3000, down_seconds=7200)
    html = viewer_client.get("/hosts/").content.decode()
    assert badge(html, "h-tagged").startswith("late since ")
    assert badge(html, "h-slow-link") == "up"


@pytest.mark.django_db
def test_host_page_says_down_since(viewer_client: Client) -> None:
    host = host_seen("h-page", timedelta(hours=2))
    html = viewer_client.get(f"/hosts/{host.pi_id}/").content.decode()
    assert 'data-liveness="down"' in html
    assert "down since " in html


@pytest.mark.django_db
def test_matrix_lists_a_host_without_models_with_its_liveness(
    viewer_client: Client,
) -> None:
    host_seen("h-bare", timedelta(minutes=10))
    html = viewer_client.get("/").content.decode()
    matrix = html.split('id="fleet-matrix"', 1)[1]
    assert "h-bare" in matrix
    assert 'data-liveness="down"' in matrix


def test_grace_edges() -> None:
    now = timezone.now()
    grace = liveness.Grace(60, 120)

    def status(seconds: int) -> str:
        return liveness.liveness_of(now - timedelta(seconds=seconds), grace, now).status

    assert status(59) == "up"
    assert status(60) == "late"
    state = liveness.liveness_of(now - timedelta(seconds=120), grace, now)
    assert state.status == "down"
    assert state.since == now


@pytest.mark.django_db
def test_grace_refuses_late_after_down() -> None:
    from pi_dashboard.lib.errors import DomainError

    with pytest.raises(DomainError, match="shorter than down"):
        services.grace_set(host=None, tag="x", late_seconds=600, down_seconds=60)
