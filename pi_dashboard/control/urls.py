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
]
