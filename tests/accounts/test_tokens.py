"""Operator API tokens: the page (secret shown once), revoking, the CLI, the admin."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from pi_dashboard.accounts import services
from pi_dashboard.accounts.models import ApiToken
from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.lib.errors import Forbidden
from pi_dashboard.lib.tokens import token_hash

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_create_shows_the_secret_once_and_it_works(operator):
    client = logged_in(operator)
    response = client.post("/account/tokens/", {"name": "CI pipeline"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    secret = html.split('id="new-token">')[1].split("<")[0]
    assert secret.startswith("pid_op_")
    token = ApiToken.objects.get()
    assert token.token_hash == token_hash(secret)
    assert secret not in client.get("/account/tokens/").content.decode()
    assert "CI pipeline" in client.get("/account/tokens/").content.decode()
    api = Client().get("/api/v1/commands", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert api.status_code == 200
    audit = AuditEntry.objects.get(action="token.issue")
    assert audit.actor == operator
    assert secret not in str(audit.detail)


def test_create_without_a_name_is_refused_clearly(viewer):
    response = logged_in(viewer).post("/account/tokens/", {"name": "  "})
    assert "This field is required" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_revoke_from_the_page(operator):
    _, secret = services.api_token_issue(actor=operator, user=operator, name="laptop")
    token = ApiToken.objects.get()
    client = logged_in(operator)
    response = client.post(f"/account/tokens/{token.pk}/revoke/", follow=True)
    assert "is revoked" in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None
    api = Client().get("/api/v1/commands", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert api.status_code == 401


def test_nobody_revokes_someone_elses_token_but_an_admin(operator, viewer, admin_user):
    services.api_token_issue(actor=operator, user=operator, name="laptop")
    token = ApiToken.objects.get()
    response = logged_in(viewer).post(
        f"/account/tokens/{token.pk}/revoke/", follow=True
    )
    assert "Only admins" in response.content.decode()
    assert ApiToken.objects.get().revoked_at is None
    assert AuditEntry.objects.get(outcome="refused").action == "token.revoke"
    with pytest.raises(Forbidden):
        services.api_token_issue(actor=viewer, user=operator, name="sneaky")
    services.api_token_revoke(actor=admin_user, token=token)
    assert ApiToken.objects.get().revoked_at is not None


def test_revoke_needs_post_and_csrf(operator):
    services.api_token_issue(actor=operator, user=operator, name="laptop")
    token = ApiToken.objects.get()
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert client.get(f"/account/tokens/{token.pk}/revoke/").status_code == 405
    assert client.post(f"/account/tokens/{token.pk}/revoke/").status_code == 403
    assert ApiToken.objects.get().revoked_at is None


def test_operator_token_command(operator):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "operator_token", "issue", "--user", operator.username, "--name", "ci",
        stdout=out, stderr=err,
    )  # fmt: skip
    secret = out.getvalue().strip()
    assert secret.startswith("pid_op_")
    assert "shown once" in err.getvalue()
    listing = io.StringIO()
    call_command("operator_token", "list", "--user", operator.username, stdout=listing)
    assert "active" in listing.getvalue()
    assert secret[:12] in listing.getvalue()
    call_command(
        "operator_token", "revoke", "--user", operator.username,
        "--prefix", secret[:12], stdout=io.StringIO(),
    )  # fmt: skip
    assert ApiToken.objects.get().revoked_at is not None
    assert AuditEntry.objects.filter(actor_label="cli").count() == 2
    with pytest.raises(CommandError, match="No user"):
        call_command("operator_token", "list", "--user", "nobody")


def test_admin_role_manages_users_and_tokens(admin_user, operator, viewer):
    services.api_token_issue(actor=operator, user=operator, name="laptop")
    admin_user.is_staff = True
    admin_user.save()
    client = logged_in(admin_user)
    assert client.get("/admin/accounts/apitoken/").status_code == 200
    assert client.get(f"/admin/auth/user/{viewer.pk}/change/").status_code == 200
    staff_operator = operator
    staff_operator.is_staff = True
    staff_operator.save()
    assert logged_in(staff_operator).get("/admin/accounts/apitoken/").status_code == 403
