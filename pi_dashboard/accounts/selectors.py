"""Reads of users, their API tokens, and agents (for the admins' pages)."""

from django.contrib.auth.models import User
from django.db.models import F

from pi_dashboard.accounts.models import ApiToken
from pi_dashboard.fleet.models import Agent


def api_token_list(*, user: User) -> list[ApiToken]:
    """The user's tokens, active first, newest first."""
    return list(
        ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at")
    )


def agent_list() -> list[Agent]:
    """Every agent, active ones first, by name, with the host each reports."""
    active_first = F("revoked_at").asc(nulls_first=True)
    return list(Agent.objects.select_related("host").order_by(active_first, "name"))


def user_list() -> list[User]:
    """Every user with the role each has, active ones first, by name."""
    return list(
        User.objects.select_related("profile").order_by("-is_active", "username")
    )
