from django.http import HttpRequest

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import has_role, role_of


def role(request: HttpRequest) -> dict[str, object]:
    """`user_role`, `can_operate` and `can_admin` for every template."""
    user = getattr(request, "user", None)
    if user is None:
        return {}
    return {
        "user_role": role_of(user),
        "can_operate": has_role(user, Role.OPERATOR),
        "can_admin": has_role(user, Role.ADMIN),
    }
