"""Reads of users' API tokens."""

from django.contrib.auth.models import User

from pi_dashboard.accounts.models import ApiToken


def api_token_list(*, user: User) -> list[ApiToken]:
    """The user's tokens, active first, newest first."""
    return list(
        ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at")
    )
