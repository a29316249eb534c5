from django.urls import path

from pi_dashboard.accounts import agent_token_views, views

app_name = "accounts"
urlpatterns = [
    path("account/tokens/", views.tokens, name="tokens"),
    path(
        "account/tokens/<int:token_id>/revoke/",
        views.token_revoke,
        name="token_revoke",
    ),
    path("agents/", agent_token_views.agents, name="agents"),
    path(
        "agents/<uuid:agent_id>/rotate/",
        agent_token_views.agent_rotate,
        name="agent_rotate",
    ),
    path(
        "agents/<uuid:agent_id>/revoke/",
        agent_token_views.agent_revoke,
        name="agent_revoke",
    ),
]
