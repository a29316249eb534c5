from django.urls import path

from pi_dashboard.probes.views import endpoints, schedules

# Mounted under "probes/" in pi_dashboard/urls.py.
app_name = "probes"
urlpatterns = [
    path("", endpoints.endpoint_list, name="endpoints"),
    path("endpoints/new/", endpoints.endpoint_form, name="endpoint_new"),
    path(
        "endpoints/<int:endpoint_id>/",
        endpoints.endpoint_detail,
        name="endpoint",
    ),
    path(
        "endpoints/<int:endpoint_id>/edit/",
        endpoints.endpoint_form,
        name="endpoint_edit",
    ),
    path(
        "endpoints/<int:endpoint_id>/delete/",
        endpoints.endpoint_delete,
        name="endpoint_delete",
    ),
    path(
        "endpoints/<int:endpoint_id>/probe/",
        endpoints.endpoint_probe,
        name="endpoint_probe",
    ),
    path("runs/", endpoints.run_list, name="runs"),
    path("runs/<int:run_id>/", endpoints.run_detail, name="run"),
    path("runs/<int:run_id>/status/", endpoints.run_status, name="run_status"),
    path("drift/", endpoints.drift_list, name="drift"),
    path("schedules/", schedules.schedule_list, name="schedules"),
    path(
        "schedules/<int:schedule_id>/edit/",
        schedules.schedule_edit,
        name="schedule_edit",
    ),
    path(
        "schedules/<int:schedule_id>/pause/",
        schedules.schedule_pause,
        {"paused": True},
        name="schedule_pause",
    ),
    path(
        "schedules/<int:schedule_id>/resume/",
        schedules.schedule_pause,
        {"paused": False},
        name="schedule_resume",
    ),
    path(
        "schedules/<int:schedule_id>/delete/",
        schedules.schedule_delete,
        name="schedule_delete",
    ),
    path("fleet/", schedules.fleet_start, name="fleet_start"),
    path("fleet/<int:fleet_id>/", schedules.fleet_detail, name="fleet"),
]
