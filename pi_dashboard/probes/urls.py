from django.urls import path

from pi_dashboard.probes.views import channels, endpoints, schedules

app_name = "probes"
urlpatterns = [
    path("probes/", endpoints.endpoint_list, name="endpoints"),
    path("probes/endpoints/new/", endpoints.endpoint_form, name="endpoint_new"),
    path(
        "probes/endpoints/<int:endpoint_id>/",
        endpoints.endpoint_detail,
        name="endpoint",
    ),
    path(
        "probes/endpoints/<int:endpoint_id>/edit/",
        endpoints.endpoint_form,
        name="endpoint_edit",
    ),
    path(
        "probes/endpoints/<int:endpoint_id>/delete/",
        endpoints.endpoint_delete,
        name="endpoint_delete",
    ),
    path(
        "probes/endpoints/<int:endpoint_id>/probe/",
        endpoints.endpoint_probe,
        name="endpoint_probe",
    ),
    path("probes/runs/", endpoints.run_list, name="runs"),
    path("probes/runs/<int:run_id>/", endpoints.run_detail, name="run"),
    path("probes/runs/<int:run_id>/status/", endpoints.run_status, name="run_status"),
    path("probes/drift/", endpoints.drift_list, name="drift"),
    path("probes/schedules/", schedules.schedule_list, name="schedules"),
    path(
        "probes/schedules/<int:schedule_id>/edit/",
        schedules.schedule_edit,
        name="schedule_edit",
    ),
    path(
        "probes/schedules/<int:schedule_id>/pause/",
        schedules.schedule_pause,
        {"paused": True},
        name="schedule_pause",
    ),
    path(
        "probes/schedules/<int:schedule_id>/resume/",
        schedules.schedule_pause,
        {"paused": False},
        name="schedule_resume",
    ),
    path(
        "probes/schedules/<int:schedule_id>/delete/",
        schedules.schedule_delete,
        name="schedule_delete",
    ),
    path("probes/fleet/", schedules.fleet_start, name="fleet_start"),
    path("probes/fleet/<int:fleet_id>/", schedules.fleet_detail, name="fleet"),
    path("probes/channels/", channels.channel_list, name="channels"),
    path("probes/channels/new/", channels.channel_form, name="channel_new"),
    path(
        "probes/channels/<int:channel_id>/edit/",
        channels.channel_form,
        name="channel_edit",
    ),
    path(
        "probes/channels/<int:channel_id>/delete/",
        channels.channel_delete,
        name="channel_delete",
    ),
    path(
        "probes/channels/<int:channel_id>/test/",
        channels.channel_test,
        name="channel_test",
    ),
]
