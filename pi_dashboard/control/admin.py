"""Admin: commands, read-only (they change only through services)."""

from django.contrib import admin

from pi_dashboard.audit.admin import ReadOnlyForAdmins
from pi_dashboard.control.models import Command


@admin.register(Command)
class CommandAdmin(ReadOnlyForAdmins):
    list_display = ["created_at", "kind", "host", "model", "state", "confirmed_at"]
    list_filter = ["state", "kind"]
    list_select_related = ["host", "model"]
    search_fields = ["host__pi_id", "model__key"]
