from django.urls import path

from pi_dashboard.accounts import user_views, views

app_name = "accounts"
urlpatterns = [
    path("account/tokens/", views.tokens, name="tokens"),
    path(
        "account/tokens/<int:token_id>/revoke/",
        views.token_revoke,
        name="token_revoke",
    ),
    path("users/", user_views.users, name="users"),
    path("users/<int:user_id>/role/", user_views.user_role, name="user_role"),
    path(
        "users/<int:user_id>/deactivate/",
        user_views.user_active,
        {"is_active": False},
        name="user_deactivate",
    ),
    path(
        "users/<int:user_id>/activate/",
        user_views.user_active,
        {"is_active": True},
        name="user_activate",
    ),
]
