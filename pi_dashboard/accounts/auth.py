"""API authentication for people: an operator token (Bearer) or a browser session."""

from typing import Any

from django.http import HttpRequest
from ninja.security import APIKeyCookie, HttpBearer

from pi_dashboard.accounts import services
from pi_dashboard.accounts.models import OPERATOR_TOKEN_PREFIX, ApiToken, Role
from pi_dashboard.accounts.roles import has_role
from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.lib.errors import Forbidden
from pi_dashboard.lib.tokens import token_hash


class OperatorTokenAuth(HttpBearer):
    """`Authorization: Bearer pid_op_…`; sets request.user to the token's owner."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if not token.startswith(OPERATOR_TOKEN_PREFIX + "_"):
            return None
        api_token = (
            ApiToken.objects.select_related("user", "user__profile")
            .filter(token_hash=token_hash(token), revoked_at__isnull=True)
            .first()
        )
        if api_token is None or not api_token.user.is_active:
            return None
        services.api_token_touch(token=api_token)
        request.user = api_token.user
        return api_token.user


class SessionAuth(APIKeyCookie):
    """The browser's session cookie, with Django's CSRF check on unsafe methods."""

    param_name = "sessionid"

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.is_active:
            return user
        return None


operator_auth = [OperatorTokenAuth(), SessionAuth(csrf=True)]


def require_role(request: HttpRequest, needed: Role, *, action: str) -> None:
    """Raise Forbidden (and audit the refusal) unless the caller has `needed`."""
    if has_role(request.user, needed):
        return
    audit.audit_record(
        request=request,
        action=action,
        outcome=AuditOutcome.REFUSED,
        detail={"needed_role": needed.value, "path": request.path},
    )
    raise Forbidden(f"This needs the {needed.label.lower()} role.", code="forbidden")
