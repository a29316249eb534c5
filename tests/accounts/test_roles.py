import pytest
from django.test import Client

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import has_role
from pi_dashboard.audit.models import AuditEntry, AuditOutcome


@pytest.mark.django_db
def test_roles_rank(viewer, operator, admin_user, outsider) -> None:
    assert has_role(viewer, Role.VIEWER)
    assert not has_role(viewer, Role.OPERATOR)
    assert has_role(operator, Role.OPERATOR)
    assert not has_role(operator, Role.ADMIN)
    assert has_role(admin_user, Role.ADMIN)
    assert not has_role(outsider, Role.VIEWER)


@pytest.mark.django_db
def test_anonymous_is_sent_to_login(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


@pytest.mark.django_db
def test_login_page_renders(client: Client) -> None:
    response = client.get("/login/")
    assert response.status_code == 200
    assert b"Log in" in response.content


@pytest.mark.django_db
def test_viewer_sees_overview(client: Client, viewer) -> None:
    client.force_login(viewer)
    assert client.get("/").status_code == 200
    assert not AuditEntry.objects.filter(outcome=AuditOutcome.REFUSED).exists()
