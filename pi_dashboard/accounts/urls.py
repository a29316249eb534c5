from django.urls import path

from pi_dashboard.accounts import views

app_name = "accounts"
urlpatterns = [
    path("account/tokens/", views.tokens, name="tokens"),
    path(
        "account/tokens/<int:token_id>/revoke/",
        views.token_revoke,
        name="token_revoke",
    ),
]
