from django.urls import path

from pi_dashboard.control import views

app_name = "control"
urlpatterns = [
    path("commands/", views.commands, name="commands"),
    path(
        "commands/<uuid:command_id>/status/",
        views.command_status,
        name="command_status",
    ),
    path(
        "commands/<uuid:command_id>/retry/",
        views.command_retry,
        name="command_retry",
    ),
    path("audit/", views.audit, name="audit"),
    path("audit.csv", views.audit_csv, name="audit_csv"),
]
