"""Alerts API: rules (CRUD) at /alert-rules, alerts (list, acknowledge) at /alerts,
maintenance windows (CRUD) at /maintenance-windows.

People authenticate with an operator token or their session; viewers read,
operators change rules and acknowledge. Every change is audited.
"""

from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Query, Router, Status

from pi_dashboard.accounts.auth import operator_auth, require_role
from pi_dashboard.accounts.models import Role
from pi_dashboard.alerts import notifying, selectors, services
from pi_dashboard.alerts.models import Alert, AlertRule, AlertState, MaintenanceWindow
from pi_dashboard.alerts.schemas import (
    AlertFilters,
    AlertOut,
    MaintenanceIn,
    MaintenanceOut,
    RuleIn,
    RuleOut,
    RulePatch,
)
from pi_dashboard.audit import audit
from pi_dashboard.lib.errors import DomainError, NotFound
from pi_dashboard.lib.schemas import WRITE_ERRORS

router = Router(tags=["alerts"], auth=operator_auth)
ERRORS = WRITE_ERRORS


def rule_out(rule: AlertRule) -> dict[str, Any]:
    return {
        **{f: getattr(rule, f) for f in RuleOut.model_fields if f != "channel_ids"},
        "channel_ids": sorted(c.pk for c in rule.channels.all()),
    }


def alert_out(alert: Alert) -> dict[str, Any]:
    by = alert.acknowledged_by
    return {
        **{f: getattr(alert, f) for f in AlertOut.model_fields if hasattr(alert, f)},
        "rule_name": alert.rule.name,
        "acknowledged_by": by.get_username() if by else None,
    }


def _rule(rule_id: int) -> AlertRule:
    rule = selectors.rules().filter(pk=rule_id).first()
    if rule is None:
        raise NotFound(f"No alert rule {rule_id}.", code="unknown_rule")
    return rule


def _alert(alert_id: int) -> Alert:
    alert = selectors.alerts_list().filter(pk=alert_id).first()
    if alert is None:
        raise NotFound(f"No alert {alert_id}.", code="unknown_alert")
    return alert


@router.get("/alert-rules", response={200: list[RuleOut], **ERRORS})
def list_rules(request: HttpRequest) -> Any:
    """Every alert rule (viewer)."""
    require_role(request, Role.VIEWER, action="api:list_alert_rules")
    return [rule_out(r) for r in selectors.rules()]


@router.post("/alert-rules", response={201: RuleOut, **ERRORS})
def create_rule(request: HttpRequest, payload: RuleIn) -> Any:
    """Create a rule (operator): 400 for an unknown signal, scope or bad window."""
    require_role(request, Role.OPERATOR, action="api:create_alert_rule")
    data = payload.dict()
    channel_ids = data.pop("channel_ids")
    rule = services.rule_save(
        rule=None, data=data, channel_ids=channel_ids, **audit.who(request)
    )
    return Status(201, rule_out(rule))


@router.get("/alert-rules/{rule_id}", response={200: RuleOut, **ERRORS})
def get_rule(request: HttpRequest, rule_id: int) -> Any:
    require_role(request, Role.VIEWER, action="api:get_alert_rule")
    return rule_out(_rule(rule_id))


@router.patch("/alert-rules/{rule_id}", response={200: RuleOut, **ERRORS})
def update_rule(request: HttpRequest, rule_id: int, payload: RulePatch) -> Any:
    """Change the given fields of a rule (operator)."""
    require_role(request, Role.OPERATOR, action="api:update_alert_rule")
    rule = _rule(rule_id)
    data = {k: v for k, v in payload.dict().items() if v is not None}
    channel_ids = data.pop("channel_ids", None)
    rule = services.rule_save(
        rule=rule, data=data, channel_ids=channel_ids, **audit.who(request)
    )
    return rule_out(_rule(rule.pk))


@router.delete("/alert-rules/{rule_id}", response={204: None, **ERRORS})
def delete_rule(request: HttpRequest, rule_id: int) -> Any:
    """Delete a rule and its alerts' history (operator)."""
    require_role(request, Role.OPERATOR, action="api:delete_alert_rule")
    rule = _rule(rule_id)
    services.rule_delete(rule=rule, **audit.who(request))
    return Status(204, None)


@router.get("/alerts", response={200: list[AlertOut], **ERRORS})
def list_alerts(request: HttpRequest, filters: Query[AlertFilters]) -> Any:
    """Alerts, newest first; `state` is pending, firing or resolved (viewer)."""
    require_role(request, Role.VIEWER, action="api:list_alerts")
    if filters.state and filters.state not in AlertState.values:
        raise DomainError(
            f"Unknown state; one of {', '.join(AlertState.values)}.",
            code="invalid_state",
        )
    alerts = selectors.alerts_list(state=filters.state, rule_id=filters.rule_id)
    return [alert_out(a) for a in alerts[: filters.limit]]


@router.get("/alerts/{alert_id}", response={200: AlertOut, **ERRORS})
def get_alert(request: HttpRequest, alert_id: int) -> Any:
    require_role(request, Role.VIEWER, action="api:get_alert")
    return alert_out(_alert(alert_id))


@router.post("/alerts/{alert_id}/ack", response={200: AlertOut, **ERRORS})
def acknowledge_alert(request: HttpRequest, alert_id: int) -> Any:
    """Acknowledge a firing alert (operator); 409 when it is not firing."""
    require_role(request, Role.OPERATOR, action="api:acknowledge_alert")
    alert = _alert(alert_id)
    alert = services.alert_acknowledge(alert=alert, **audit.who(request))
    return alert_out(alert)


def window_out(window: MaintenanceWindow) -> dict[str, Any]:
    return {
        **{f: getattr(window, f) for f in MaintenanceIn.model_fields},
        "id": window.pk,
        "active_now": notifying.maintenance_active(window, timezone.now()),
    }


def _window(window_id: int) -> MaintenanceWindow:
    window = selectors.maintenance_windows().filter(pk=window_id).first()
    if window is None:
        raise NotFound(f"No maintenance window {window_id}.", code="unknown_window")
    return window


def _utc(moment: datetime | None) -> datetime | None:
    """A time given without an offset is UTC, as the pages say."""
    if moment is not None and timezone.is_naive(moment):
        return moment.replace(tzinfo=UTC)
    return moment


def _window_save(
    request: HttpRequest, window: MaintenanceWindow | None, payload: MaintenanceIn
) -> MaintenanceWindow:
    data = payload.dict()
    data["starts_at"], data["ends_at"] = _utc(data["starts_at"]), _utc(data["ends_at"])
    return services.maintenance_save(window=window, **data, **audit.who(request))


@router.get("/maintenance-windows", response={200: list[MaintenanceOut], **ERRORS})
def list_maintenance_windows(request: HttpRequest) -> Any:
    """Every maintenance window, with whether it is on now (viewer)."""
    require_role(request, Role.VIEWER, action="api:list_maintenance_windows")
    return [window_out(w) for w in selectors.maintenance_windows()]


@router.post("/maintenance-windows", response={201: MaintenanceOut, **ERRORS})
def create_maintenance_window(request: HttpRequest, payload: MaintenanceIn) -> Any:
    """Create a window (operator): 400 when it is neither one-off nor weekly."""
    require_role(request, Role.OPERATOR, action="api:create_maintenance_window")
    return Status(201, window_out(_window_save(request, None, payload)))


@router.get(
    "/maintenance-windows/{window_id}", response={200: MaintenanceOut, **ERRORS}
)
def get_maintenance_window(request: HttpRequest, window_id: int) -> Any:
    require_role(request, Role.VIEWER, action="api:get_maintenance_window")
    return window_out(_window(window_id))


@router.put(
    "/maintenance-windows/{window_id}", response={200: MaintenanceOut, **ERRORS}
)
def update_maintenance_window(
    request: HttpRequest, window_id: int, payload: MaintenanceIn
) -> Any:
    """Replace a window's fields (operator): one-off ↔ weekly included."""
    require_role(request, Role.OPERATOR, action="api:update_maintenance_window")
    return window_out(_window_save(request, _window(window_id), payload))


@router.delete("/maintenance-windows/{window_id}", response={204: None, **ERRORS})
def delete_maintenance_window(request: HttpRequest, window_id: int) -> Any:
    require_role(request, Role.OPERATOR, action="api:delete_maintenance_window")
    window = _window(window_id)
    services.maintenance_delete(window=window, **audit.who(request))
    return Status(204, None)
