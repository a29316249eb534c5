"""Users and roles managed by admins from the pages (issue 12 item 14), audited."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pi_dashboard.accounts.roles import role_of
from pi_dashboard.audit.models import AuditEntry, AuditOutcome


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_admin_invites_someone_who_can_log_in(admin_user) -> None:
    client = logged_in(admin_user)
    assert "Users and roles" in client.get("/").content.decode()
    response = client.post(
        "/users/",
        {"username": "nina", "email": "nina@example.test", "role": "operator"},
    )
    body = response.content.decode()
    assert response.status_code == 200
    password = re.search(r"password: (\S+)</code>", body).group(1)
    assert Client().login(username="nina", password=password)
    nina = User.objects.get(username="nina")
    assert role_of(nina) == "operator"
    entry = AuditEntry.objects.get(action="user.invite")
    assert entry.outcome == AuditOutcome.OK
    assert entry.actor_label == admin_user.username
    assert entry.detail["username"] == "nina"
    assert password not in client.get("/users/").content.decode()


def test_admin_changes_a_role_and_deactivates(admin_user, viewer) -> None:
    client = logged_in(admin_user)
    changed = client.post(f"/users/{viewer.pk}/role/", {"role": "admin"}, follow=True)
    assert f"{viewer.username} is now Admin." in changed.content.decode()
    viewer.refresh_from_db()
    assert role_of(viewer) == "admin"
    gone = client.post(f"/users/{viewer.pk}/deactivate/", follow=True)
    assert f"{viewer.username} is deactivated." in gone.content.decode()
    viewer.refresh_from_db()
    assert not viewer.is_active
    assert role_of(viewer) is None
    client.post(f"/users/{viewer.pk}/activate/")
    viewer.refresh_from_db()
    assert viewer.is_active
    actions = list(AuditEntry.objects.order_by("id").values_list("action", "outcome"))
    assert actions == [
        ("user.role", "ok"),
        ("user.deactivate", "ok"),
        ("user.activate", "ok"),
    ]


def test_the_last_admin_cannot_be_demoted_or_deactivated(admin_user) -> None:
    client = logged_in(admin_user)
    refused = client.post(
        f"/users/{admin_user.pk}/role/", {"role": "viewer"}, follow=True
    )
    assert "last active admin" in refused.content.decode()
    admin_user.refresh_from_db()
    assert role_of(admin_user) == "admin"
    self_off = client.post(f"/users/{admin_user.pk}/deactivate/", follow=True)
    assert "cannot deactivate yourself" in self_off.content.decode()
    outcomes = set(AuditEntry.objects.values_list("action", "outcome"))
    assert outcomes == {("user.role", "refused"), ("user.deactivate", "refused")}


@pytest.mark.parametrize(
    "data",
    [
        {"username": "", "role": "viewer"},
        {"username": "a b", "role": "viewer"},
        {"username": "x" * 151, "role": "viewer"},
        {"username": "ok", "role": "root"},
        {"username": "ok", "role": "viewer", "email": "not-an-email"},
    ],
)
def test_bad_invites_are_form_errors(admin_user, data) -> None:
    response = logged_in(admin_user).post("/users/", data)
    assert response.status_code == 400
    assert not User.objects.filter(username="ok").exists()


def test_a_duplicate_invite_is_refused_and_audited(admin_user, viewer) -> None:
    response = logged_in(admin_user).post(
        "/users/", {"username": viewer.username.upper(), "role": "viewer"}
    )
    assert response.status_code == 400
    assert "already exists" in response.content.decode()
    assert AuditEntry.objects.get(action="user.invite").outcome == "refused"


def test_operators_cannot_manage_users(operator, viewer) -> None:
    client = logged_in(operator)
    assert client.get("/users/").status_code == 403
    assert (
        client.post(f"/users/{viewer.pk}/role/", {"role": "admin"}).status_code == 403
    )
    viewer.refresh_from_db()
    assert role_of(viewer) == "viewer"
