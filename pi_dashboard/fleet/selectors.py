"""Reads of the fleet: hosts, models, current state of host × model, history."""

from datetime import datetime
from typing import Any
from uuid import UUID

from django.db.models import Count, F, Prefetch, QuerySet

from pi_dashboard.fleet import adaptation
from pi_dashboard.fleet import entry as entry_format
from pi_dashboard.fleet.models import Agent, Change, Host, HostModel, Model
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import NotFound


def host_list() -> QuerySet[Host]:
    return (
        Host.objects.annotate(model_count=Count("host_models"))
        .prefetch_related(Prefetch("agents", queryset=Agent.objects.order_by("name")))
        .order_by("pi_id")
    )


def host_get(*, pi_id: str) -> Host:
    host = host_list().filter(pi_id=pi_id).first()
    if host is None:
        raise NotFound(f"No host {pi_id!r}.")
    return host


def host_models_of_host(*, host: Host) -> QuerySet[HostModel]:
    return host.host_models.select_related("host", "model").order_by("model__key")


def model_list() -> QuerySet[Model]:
    return Model.objects.annotate(host_count=Count("host_models")).order_by("key")


def model_get(*, key: str) -> Model:
    model = model_list().filter(key=key).first()
    if model is None:
        raise NotFound(f"No model {key!r}.")
    return model


def host_models_of_model(*, model: Model) -> QuerySet[HostModel]:
    return model.host_models.select_related("host", "model").order_by("host__pi_id")


def host_model_get(*, pi_id: str, key: str) -> HostModel:
    host_model = (
        HostModel.objects.select_related("host", "model")
        .filter(host__pi_id=pi_id, model__key=key)
        .first()
    )
    if host_model is None:
        raise NotFound(f"Host {pi_id!r} has no state for model {key!r}.")
    return host_model


def host_model_entry(host_model: HostModel) -> dict[str, Any]:
    """pi's entry exactly as received (faithful even when it had to be sanitised)."""
    entry: dict[str, Any] = jsonsafe.faithful(
        host_model.entry, host_model.entry_original
    )
    return entry


def rules_described(entry: dict[str, Any], *, now: datetime) -> list[dict[str, Any]]:
    """Each stored rule with its retirement date and efficacy verdict at `now`."""
    stats = entry_format.teach_stats(entry)
    described = []
    for rule in entry_format.rules(entry):
        pi_rule = dict(rule)
        mode_stats = stats.get(rule["mode"])
        verdict = adaptation.rule_efficacy(dict(mode_stats) if mode_stats else None)
        described.append(
            {
                **pi_rule,
                "retires_at": adaptation.rule_retires_at(pi_rule),
                "is_expired": adaptation.rule_is_expired(pi_rule, now=now),
                "efficacy": verdict.verdict,
            }
        )
    return described


def change_list(*, host_model: HostModel, limit: int) -> list[Change]:
    return list(host_model.changes.order_by("-at", "-id")[:limit])


def agent_list(*, active_first: bool = False) -> list[Agent]:
    """Every agent with the host it reports; for the admins' page active ones first,
    by name."""
    qs = Agent.objects.select_related("host")
    if active_first:
        qs = qs.order_by(F("revoked_at").asc(nulls_first=True), "name")
    return list(qs)


def agent_get(*, agent_id: UUID) -> Agent:
    agent = Agent.objects.select_related("host").filter(pk=agent_id).first()
    if agent is None:
        raise NotFound(f"No agent {agent_id}.")
    return agent
