"""Admin: the audit log, read-only (it changes only through services)."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import has_role
from pi_dashboard.audit.models import AuditEntry


class ReadOnlyForAdmins(admin.ModelAdmin):  # type: ignore[type-arg]
    def has_module_permission(self, request: HttpRequest) -> bool:
        return has_role(request.user, Role.ADMIN)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return has_role(request.user, Role.ADMIN)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyForAdmins):
    list_display = ["at", "actor_label", "action", "outcome", "host", "model"]
    list_filter = ["outcome", "action"]
    list_select_related = ["host", "model"]
    search_fields = ["actor_label", "action"]
