from django.urls import path

from pi_dashboard.alerts import views, views_health

app_name = "alerts"
urlpatterns = [
    path("alerts/", views.alert_list, name="list"),
    path("alerts/<int:alert_id>/ack/", views.alert_ack, name="ack"),
    path("alerts/rules/", views.rule_list, name="rules"),
    path("alerts/rules/new/", views.rule_form, name="rule_new"),
    path("alerts/rules/<int:rule_id>/", views.rule_form, name="rule_edit"),
    path("alerts/rules/<int:rule_id>/delete/", views.rule_delete, name="rule_delete"),
    path("alerts/channels/", views.channel_list, name="channels"),
    path("alerts/channels/new/", views.channel_form, name="channel_new"),
    path("alerts/channels/<int:channel_id>/", views.channel_form, name="channel_edit"),
    path(
        "alerts/channels/<int:channel_id>/delete/",
        views.channel_delete,
        name="channel_delete",
    ),
    path(
        "alerts/channels/<int:channel_id>/test/",
        views.channel_test,
        name="channel_test",
    ),
    path("alerts/silences/", views.silence_list, name="silences"),
    path(
        "alerts/silences/<int:silence_id>/end/", views.silence_end, name="silence_end"
    ),
    path("alerts/maintenance/", views.maintenance_create, name="maintenance_create"),
    path(
        "alerts/maintenance/<int:window_id>/",
        views.maintenance_edit,
        name="maintenance_edit",
    ),
    path(
        "alerts/maintenance/<int:window_id>/delete/",
        views.maintenance_delete,
        name="maintenance_delete",
    ),
    path("alerts/grace/", views.grace_save, name="grace_save"),
    path(
        "alerts/grace/<int:grace_id>/delete/", views.grace_delete, name="grace_delete"
    ),
    path("alerts/tags/", views.host_tag, name="host_tag"),
    path("healthz", views_health.healthz, name="healthz"),
    path("readyz", views_health.readyz, name="readyz"),
    path("metrics", views_health.metrics_view, name="metrics"),
]
