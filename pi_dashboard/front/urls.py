from django.urls import path

from pi_dashboard.front import actions, agent_token_views, corpus_views, views

# The namespace stays "fleet": every template and redirect names these URLs by it.
app_name = "fleet"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("models/", views.model_list, name="models"),
    # Model keys hold slashes (`openrouter/deepseek/deepseek-v3.2`): `path:` keeps them.
    path("models/<path:key>/", views.model_detail, name="model"),
    path("hosts/", views.host_list, name="hosts"),
    path("corpus/", corpus_views.corpus_page, name="corpus"),
    path(
        "corpus/failure-corpus.jsonl",
        corpus_views.corpus_export_jsonl,
        name="corpus_export",
    ),
    path("hosts/<str:host_id>/", views.host_detail, name="host"),
    path(
        "hosts/<str:host_id>/models/<path:key>/",
        views.host_model_detail,
        name="host_model",
    ),
    # Actions name host and model in the form, so no URL has to follow a model key.
    path("actions/remove-rule/", actions.remove_rule, name="action_remove_rule"),
    path(
        "actions/reset-protocol/", actions.reset_protocol, name="action_reset_protocol"
    ),
    path("actions/probe/", actions.probe, name="action_probe"),
    path("actions/probe-model/", actions.probe_model, name="action_probe_model"),
    path(
        "actions/remove-rule-everywhere/",
        actions.remove_rule_everywhere,
        name="action_remove_rule_everywhere",
    ),
    # Agents and their tokens (admins): fleet owns agents; the page lives here.
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
