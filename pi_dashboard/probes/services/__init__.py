"""Every write of the probes app. Call sites use `services.<entity>_<verb>(...)`."""

from pi_dashboard.probes.services.drift import drift_record
from pi_dashboard.probes.services.endpoints import (
    EndpointData,
    endpoint_create,
    endpoint_delete,
    endpoint_set_enabled,
    endpoint_target,
    endpoint_update,
)
from pi_dashboard.probes.services.fleet import fleet_complete_if_done, fleet_probe_start
from pi_dashboard.probes.services.runs import (
    probe_request,
    probe_run_execute,
    run_claim,
    run_finish,
    runs_sweep,
)
from pi_dashboard.probes.services.schedules import (
    MAX_INTERVAL_SECONDS,
    MIN_INTERVAL_SECONDS,
    ScheduleData,
    schedule_delete,
    schedule_save,
    schedule_set_paused,
)

__all__ = [
    "MAX_INTERVAL_SECONDS",
    "MIN_INTERVAL_SECONDS",
    "EndpointData",
    "ScheduleData",
    "drift_record",
    "endpoint_create",
    "endpoint_delete",
    "endpoint_set_enabled",
    "endpoint_target",
    "endpoint_update",
    "fleet_complete_if_done",
    "fleet_probe_start",
    "probe_request",
    "probe_run_execute",
    "run_claim",
    "run_finish",
    "runs_sweep",
    "schedule_delete",
    "schedule_save",
    "schedule_set_paused",
]
