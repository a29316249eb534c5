"""Reads of users and their API tokens (for the admins' pages)."""

from django.contrib.auth.models import User

from pi_dashboard.accounts.models import ApiToken


def api_token_list(*, user: User) -> list[ApiToken]:
    """The user's tokens, active first, newest first."""
    return list(
        ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at")
    )


def user_list() -> list[User]:
    """Every user with the role each has, active ones first, by name."""
    return list(
        User.objects.select_related("profile").order_by("-is_active", "username")
    )
