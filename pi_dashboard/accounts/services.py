"""Operator API tokens (secret shown once) and users' roles; every call audited."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from pi_dashboard.accounts.models import OPERATOR_TOKEN_PREFIX, ApiToken, Profile, Role
from pi_dashboard.accounts.roles import has_role
from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.lib.errors import DomainError, Forbidden
from pi_dashboard.lib.tokens import token_display_prefix, token_generate, token_hash

MAX_TOKEN_NAME = 100
# `actor=None` means the command line (manage.py operator_token): shell access to
# the server already grants everything.
CLI_LABEL = "cli"


def api_token_issue(
    *, actor: User | None, user: User, name: str, ip_address: str | None = None
) -> tuple[ApiToken, str]:
    """A new `pid_op_…` token for `user`; returns it with its secret (shown once)."""
    with audit.refusals_audited(
        actor=actor,
        label=None if actor else CLI_LABEL,
        action="token.issue",
        detail={"owner": user.get_username(), "name": name},
        ip_address=ip_address,
    ):
        return _api_token_issue(
            actor=actor, user=user, name=name, ip_address=ip_address
        )


@transaction.atomic
def _api_token_issue(
    *, actor: User | None, user: User, name: str, ip_address: str | None
) -> tuple[ApiToken, str]:
    _check_may_manage(actor=actor, owner=user)
    name = name.strip()
    if not name or len(name) > MAX_TOKEN_NAME:
        raise DomainError(
            f"Give the token a name of 1 to {MAX_TOKEN_NAME} characters, "
            "e.g. where it will be used.",
            code="invalid_name",
        )
    if not user.is_active:
        raise DomainError(f"User {user.get_username()} is inactive.", code="inactive")
    secret = token_generate(OPERATOR_TOKEN_PREFIX)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=token_display_prefix(secret),
        token_hash=token_hash(secret),
    )
    _audit(actor=actor, action="token.issue", token=token, ip_address=ip_address)
    return token, secret


def api_token_revoke(
    *, actor: User | None, token: ApiToken, ip_address: str | None = None
) -> ApiToken:
    """Revoke a token at once; revoking a revoked token changes nothing."""
    with audit.refusals_audited(
        actor=actor,
        label=None if actor else CLI_LABEL,
        action="token.revoke",
        detail={"owner": token.user.get_username(), "prefix": token.prefix},
        ip_address=ip_address,
    ):
        return _api_token_revoke(actor=actor, token=token, ip_address=ip_address)


@transaction.atomic
def _api_token_revoke(
    *, actor: User | None, token: ApiToken, ip_address: str | None
) -> ApiToken:
    _check_may_manage(actor=actor, owner=token.user)
    locked = ApiToken.objects.select_for_update().get(pk=token.pk)
    if locked.revoked_at is None:
        locked.revoked_at = timezone.now()
        locked.save(update_fields=["revoked_at"])
        _audit(actor=actor, action="token.revoke", token=locked, ip_address=ip_address)
    return locked


def api_token_touch(*, token: ApiToken) -> None:
    """Record that the token was just used (shown in the token list)."""
    # One UPDATE is atomic by itself; no transaction block on every API call.
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())


@transaction.atomic
def admin_ensure() -> str | None:
    """Create user `admin` with a random password unless an admin exists.

    Returns the password (to be shown once), or None when nothing was created.
    """
    users = get_user_model()
    if users.objects.filter(is_superuser=True).exists():
        return None
    password = secrets.token_urlsafe(12)
    user = users.objects.create_superuser("admin", "", password)
    Profile.objects.update_or_create(user=user, defaults={"role": Role.ADMIN})
    return password


def _check_may_manage(*, actor: User | None, owner: User) -> None:
    """People manage their own tokens; admins anyone's."""
    if actor is None or actor.pk == owner.pk or has_role(actor, Role.ADMIN):
        return
    raise Forbidden("Only admins manage other people's tokens.", code="forbidden")


def _audit(
    *, actor: User | None, action: str, token: ApiToken, ip_address: str | None
) -> None:
    audit.audit_log(
        actor=actor,
        label=None if actor else CLI_LABEL,
        action=action,
        outcome=AuditOutcome.OK,
        detail={
            "owner": token.user.get_username(),
            "name": token.name,
            "prefix": token.prefix,
        },
        ip_address=ip_address,
    )


# --- users and roles, managed by admins from the pages (issue 12 item 14) -----------

MAX_USERNAME = 150  # User.username


def user_invite(
    *,
    actor: User,
    username: str,
    email: str,
    role: Role,
    ip_address: str | None = None,
) -> tuple[User, str]:
    """A new active user with `role` and a one-time password (shown once)."""
    with audit.refusals_audited(
        actor=actor,
        action="user.invite",
        detail={"username": username[:MAX_USERNAME], "role": str(role)},
        ip_address=ip_address,
    ):
        return _user_invite(
            actor=actor, username=username, email=email, role=role, ip=ip_address
        )


@transaction.atomic
def _user_invite(
    *, actor: User, username: str, email: str, role: Role, ip: str | None
) -> tuple[User, str]:
    _check_admin(actor)
    users = get_user_model()
    username = username.strip()
    if users.objects.filter(username__iexact=username).exists():
        raise DomainError(f"User {username} already exists.", code="user_exists")
    password = secrets.token_urlsafe(12)
    user = users.objects.create_user(username, email.strip(), password)
    Profile.objects.create(user=user, role=role)
    _audit_user(actor=actor, action="user.invite", user=user, ip=ip, role=str(role))
    return user, password


def user_set_role(
    *, actor: User, user: User, role: Role, ip_address: str | None = None
) -> None:
    """Give `user` another role; the last active admin keeps theirs."""
    with audit.refusals_audited(
        actor=actor,
        action="user.role",
        detail={"username": user.get_username(), "role": str(role)},
        ip_address=ip_address,
    ):
        _user_set_role(actor=actor, user=user, role=role, ip=ip_address)


@transaction.atomic
def _user_set_role(*, actor: User, user: User, role: Role, ip: str | None) -> None:
    _check_admin(actor)
    if role != Role.ADMIN:
        _check_not_last_admin(user, doing="take the admin role from")
    if user.is_superuser and role != Role.ADMIN:
        raise DomainError(
            f"{user.get_username()} is a superuser and always an admin; change that "
            "in the Django admin.",
            code="superuser",
        )
    before = role_label(user)
    Profile.objects.update_or_create(user=user, defaults={"role": role})
    _audit_user(
        actor=actor, action="user.role", user=user, ip=ip, role=str(role), was=before
    )


def user_set_active(
    *, actor: User, user: User, is_active: bool, ip_address: str | None = None
) -> None:
    """Deactivate (no login, no API tokens) or re-activate a user."""
    action = "user.activate" if is_active else "user.deactivate"
    with audit.refusals_audited(
        actor=actor,
        action=action,
        detail={"username": user.get_username()},
        ip_address=ip_address,
    ):
        _user_set_active(actor=actor, user=user, is_active=is_active, ip=ip_address)


@transaction.atomic
def _user_set_active(
    *, actor: User, user: User, is_active: bool, ip: str | None
) -> None:
    _check_admin(actor)
    action = "user.activate" if is_active else "user.deactivate"
    if not is_active:
        if user.pk == actor.pk:
            raise DomainError("You cannot deactivate yourself.", code="self")
        _check_not_last_admin(user, doing="deactivate")
    if user.is_active != is_active:
        user.is_active = is_active
        user.save(update_fields=["is_active"])
    _audit_user(actor=actor, action=action, user=user, ip=ip)


def role_label(user: User) -> str:
    if user.is_superuser:
        return str(Role.ADMIN)
    profile = Profile.objects.filter(user=user).first()
    return str(profile.role) if profile else str(Role.VIEWER)


def _check_admin(actor: User) -> None:
    if not has_role(actor, Role.ADMIN):
        raise Forbidden("Only admins manage users and roles.", code="forbidden")


def _check_not_last_admin(user: User, *, doing: str) -> None:
    if role_label(user) != Role.ADMIN:
        return
    users = get_user_model()
    admins = users.objects.filter(is_active=True).filter(
        Q(is_superuser=True) | Q(profile__role=Role.ADMIN)
    )
    if not admins.exclude(pk=user.pk).exists():
        raise DomainError(
            f"{user.get_username()} is the last active admin; make another admin "
            f"before you {doing} them.",
            code="last_admin",
        )


def _audit_user(
    *, actor: User, action: str, user: User, ip: str | None, **detail: str
) -> None:
    audit.audit_log(
        actor=actor,
        action=action,
        outcome=AuditOutcome.OK,
        detail={"username": user.get_username(), **detail},
        ip_address=ip,
    )
