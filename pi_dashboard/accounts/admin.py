"""Admin: users with their role (Profile inline) and operator API tokens.

People with the admin role manage users and tokens here even when they are not
Django superusers; giving someone the admin role also lets them into this site.
"""

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest

from pi_dashboard.accounts import services
from pi_dashboard.accounts.models import ApiToken, Profile, Role
from pi_dashboard.accounts.roles import has_role
from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome


class RoleAdminPermissions:
    """Model permissions follow our roles: admins manage, nobody else."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return has_role(request.user, Role.ADMIN)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return has_role(request.user, Role.ADMIN)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return has_role(request.user, Role.ADMIN)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return has_role(request.user, Role.ADMIN)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return has_role(request.user, Role.ADMIN)


class ProfileInline(RoleAdminPermissions, admin.StackedInline):  # type: ignore[type-arg]
    model = Profile
    can_delete = False
    verbose_name_plural = "role"
    fields = ["role"]


admin.site.unregister(User)


@admin.register(User)
class PiUserAdmin(RoleAdminPermissions, UserAdmin):  # type: ignore[type-arg]
    inlines = [ProfileInline]
    list_display = ["username", "email", "role", "is_active", "last_login"]
    list_select_related = ["profile"]

    @admin.display(description="role")
    def role(self, user: User) -> str:
        profile = getattr(user, "profile", None)
        if user.is_superuser:
            return "admin (superuser)"
        return profile.role if profile is not None else "viewer (no profile)"

    def save_related(
        self, request: HttpRequest, form: Any, formsets: Any, change: Any
    ) -> None:
        super().save_related(request, form, formsets, change)
        user = form.instance
        profile = Profile.objects.filter(user=user).first()
        role = profile.role if profile is not None else Role.VIEWER
        if role == Role.ADMIN and not user.is_staff:
            User.objects.filter(pk=user.pk).update(is_staff=True)
        audit.audit_record(
            request=request,
            action="user.save",
            outcome=AuditOutcome.OK,
            detail={
                "user": user.get_username(),
                "role": role,
                "is_active": user.is_active,
            },
        )


@admin.register(ApiToken)
class ApiTokenAdmin(RoleAdminPermissions, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = [
        "name",
        "user",
        "prefix",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["revoked_at"]
    list_select_related = ["user"]
    search_fields = ["name", "prefix", "user__username"]
    fields = ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        # A secret is shown once, when issued: on “My API tokens” or the CLI.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead: the row stays for the audit trail

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        actor = request.user if isinstance(request.user, User) else None
        for token in queryset.select_related("user"):
            services.api_token_revoke(
                actor=actor, token=token, ip_address=audit.client_ip(request)
            )
        messages.success(request, f"Revoked {queryset.count()} token(s).")
