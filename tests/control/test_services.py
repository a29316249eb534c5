"""Command services: validation, duplicates, actions, delivery, ack, expiry,
confirmation."""

import copy
from datetime import timedelta

import pytest
from django.utils import timezone

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.control import services
from pi_dashboard.control.lifecycle import CommandExpired
from pi_dashboard.control.models import Command, CommandKind, CommandState
from pi_dashboard.fleet.models import Host, HostModel
from pi_dashboard.lib.errors import Conflict, DomainError, NotFound
from tests.control.conftest import (
    AMD,
    APPLE,
    GLM,
    GPT,
    XEON,
    ack,
    make_agent,
    remove_rule,
)

pytestmark = pytest.mark.django_db


def remove(operator, mode="numberFromString", **extra):
    # From a known address, so that the audit entries carry one.
    return remove_rule(operator, mode=mode, ip_address="10.0.0.7", **extra)


def test_create_queues_a_pending_command_with_a_deadline(fleet, operator, settings):
    settings.PI_COMMAND_TTL_SECONDS = 600
    before = timezone.now()
    command = remove(operator)
    assert command.state == CommandState.PENDING
    assert command.params == {"mode": "numberFromString"}
    assert command.created_by == operator
    ttl = command.expires_at - before
    assert timedelta(seconds=599) < ttl < timedelta(seconds=610)
    entry = AuditEntry.objects.get(action="command.create")
    assert (entry.actor, entry.outcome, entry.command) == (
        operator,
        AuditOutcome.OK,
        command,
    )
    assert (entry.host.pi_id, entry.model.key, entry.ip_address) == (
        AMD,
        GPT,
        "10.0.0.7",
    )


def test_remove_of_absent_rule_names_the_rules_there(fleet, operator):
    with pytest.raises(DomainError) as exc:
        remove(operator, mode="bashCommandUnwrap")
    assert exc.value.code == "rule_not_present"
    assert "nullOptionalDrop, jsonStringParse, numberFromString" in exc.value.detail
    refused = AuditEntry.objects.get(outcome=AuditOutcome.REFUSED)
    assert refused.detail["code"] == "rule_not_present"
    assert refused.host.pi_id == AMD
    assert not Command.objects.exists()


def test_remove_on_a_model_without_rules_says_so(fleet, operator):
    with pytest.raises(DomainError, match="it has no rules"):
        remove(operator, host=APPLE, model=GPT)


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"host": "no-such-host-1c-1g"}, "unknown_host"),
        ({"model": "nobody/nothing"}, "unknown_model"),
        ({"host": XEON, "model": GPT}, "unknown_host_model"),
        ({"kind": "reboot"}, "invalid_kind"),
        ({"params": {}}, "invalid_params"),
        ({"params": {"mode": ""}}, "invalid_params"),
        ({"params": {"mode": "numberFromString", "extra": 1}}, "invalid_params"),
        ({"kind": "probe", "params": {"mode": "x"}}, "invalid_params"),
        ({"kind": "reset_protocol", "params": {}}, "no_protocol"),
    ],
)
def test_create_refuses_bad_requests_with_a_clear_code(fleet, operator, kwargs, code):
    args = {
        "actor": operator,
        "host": AMD,
        "model": GPT,
        "kind": CommandKind.REMOVE_RULE,
        "params": {"mode": "numberFromString"},
    } | kwargs
    with pytest.raises(DomainError) as exc:
        services.command_create(**args)
    assert exc.value.code == code
    assert exc.value.detail
    assert not Command.objects.exists()
    assert AuditEntry.objects.get().outcome == AuditOutcome.REFUSED


def test_reset_protocol_and_forget_mode(fleet, operator):
    reset = services.command_create(
        actor=operator, host=AMD, model=GLM, kind="reset_protocol", params={}
    )
    forget = services.command_create(
        actor=operator,
        host=AMD,
        model=GPT,
        kind="forget_mode",
        params={"mode": "boolFromString"},
    )
    assert (reset.kind, forget.params) == ("reset_protocol", {"mode": "boolFromString"})


def test_duplicate_open_command_returns_the_existing_one(fleet, operator):
    first = remove(operator)
    again = remove(operator)
    assert again.pk == first.pk
    assert Command.objects.count() == 1
    duplicate_audit = AuditEntry.objects.filter(action="command.create").first()
    assert duplicate_audit.detail["duplicate_of"] == str(first.pk)
    Command.objects.filter(pk=first.pk).update(state=CommandState.FAILED)
    assert remove(operator).pk != first.pk


def test_action_remove_and_forget_makes_two_commands_in_order(fleet, operator):
    commands = services.action_remove_rule(
        actor=operator,
        host_model=fleet[(AMD, GPT)],
        mode="jsonStringParse",
        forget=True,
        ip_address=None,
    )
    assert [c.kind for c in commands] == ["remove_rule", "forget_mode"]
    assert all(c.params == {"mode": "jsonStringParse"} for c in commands)


def test_action_is_all_or_nothing_and_audits_the_refusal(fleet, operator):
    with pytest.raises(DomainError):
        services.action_remove_rule(
            actor=operator,
            host_model=fleet[(AMD, GPT)],
            mode="notARule",
            forget=True,
            ip_address=None,
        )
    assert not Command.objects.exists()
    refused = AuditEntry.objects.get()
    assert (refused.action, refused.outcome) == ("action.remove_rule", "refused")


def test_reset_and_reprobe(fleet, operator):
    commands = services.action_reset_protocol(
        actor=operator, host_model=fleet[(XEON, GLM)], reprobe=True, ip_address=None
    )
    assert [c.kind for c in commands] == ["reset_protocol", "probe"]
    assert commands[1].params == {}
    probe = services.action_probe_on_host(
        actor=operator, host_model=fleet[(XEON, GLM)], ip_address=None
    )
    assert probe == [commands[1]]  # still open: the same command


def test_remove_everywhere_targets_only_hosts_with_the_rule(fleet, operator):
    glm = fleet[(AMD, GLM)].model
    commands = services.action_remove_rule_everywhere(
        actor=operator, model=glm, mode="bashCommandUnwrap", ip_address=None
    )
    assert sorted(c.host.pi_id for c in commands) == [AMD, XEON]
    with pytest.raises(DomainError, match="No host has a boolFromString rule"):
        services.action_remove_rule_everywhere(
            actor=operator, model=glm, mode="boolFromString", ip_address=None
        )


# --- delivery -------------------------------------------------------------


def test_pull_delivers_to_the_host_agent_only(fleet, operator, amd_agent, xeon_agent):
    command = remove(operator)
    assert services.commands_pull(agent=xeon_agent[0], wait_seconds=0) == []
    pulled = services.commands_pull(agent=amd_agent[0], wait_seconds=0)
    assert [c.pk for c in pulled] == [command.pk]
    command.refresh_from_db()
    assert command.state == CommandState.DELIVERED
    assert command.delivered_to == amd_agent[0]
    assert AuditEntry.objects.filter(action="command.delivered").count() == 1
    # Redelivered until acked (an agent may crash between pull and ack).
    again = services.commands_pull(agent=amd_agent[0], wait_seconds=0)
    assert [c.pk for c in again] == [command.pk]
    assert AuditEntry.objects.filter(action="command.delivered").count() == 1


def test_expired_command_is_never_handed_out(fleet, operator, amd_agent):
    command = remove(operator)
    Command.objects.filter(pk=command.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert services.commands_pull(agent=amd_agent[0], wait_seconds=0) == []


def test_unbound_agent_is_told_to_heartbeat_first(db):
    agent, _ = make_agent("fresh", None)
    with pytest.raises(Conflict) as exc:
        services.commands_pull(agent=agent, wait_seconds=0)
    assert exc.value.code == "agent_not_bound"


def test_pull_records_contact(fleet, amd_agent):
    agent = amd_agent[0]
    services.commands_pull(agent=agent, wait_seconds=0)
    agent.refresh_from_db()
    assert agent.last_contact_at is not None
    assert Host.objects.get(pi_id=AMD).last_contact_at is not None


# --- ack ------------------------------------------------------------------


def test_ack_applies_and_is_idempotent(fleet, operator, amd_agent):
    agent = amd_agent[0]
    command = remove(operator)
    services.commands_pull(agent=agent, wait_seconds=0)
    acked = ack(agent, command)
    assert acked.state == CommandState.APPLIED
    assert acked.result == {"removed": True, "via": "file"}
    finished = acked.finished_at
    again = ack(agent, command)
    assert (again.state, again.finished_at) == (CommandState.APPLIED, finished)
    with pytest.raises(Conflict) as exc:
        ack(agent, command, status="failed")
    assert exc.value.code == "already_acked"
    acks = AuditEntry.objects.filter(action="command.ack").order_by("id")
    assert [a.outcome for a in acks] == ["ok", "ok", "refused"]
    assert all(a.actor_label == "agent:amd-box" for a in acks)
    assert services.commands_pull(agent=agent, wait_seconds=0) == []


def test_failed_ack_keeps_the_reason(fleet, operator, amd_agent):
    command = remove(operator)
    failed = services.command_ack(
        agent=amd_agent[0],
        command_id=command.pk,
        status="failed",
        result={},
        detail="lock held for 30 s by pid 4242",
    )
    assert (failed.state, failed.error) == ("failed", "lock held for 30 s by pid 4242")
    assert AuditEntry.objects.get(action="command.ack").outcome == "failed"


def test_ack_of_another_hosts_command_is_not_found(fleet, operator, xeon_agent):
    command = remove(operator)
    with pytest.raises(NotFound):
        ack(xeon_agent[0], command)
    assert Command.objects.get().state == CommandState.PENDING
    refused = AuditEntry.objects.get(action="command.ack")
    assert (refused.outcome, refused.actor_label) == ("refused", "agent:xeon-box")


def test_late_ack_is_refused_and_the_command_expires(fleet, operator, amd_agent):
    agent = amd_agent[0]
    command = remove(operator)
    services.commands_pull(agent=agent, wait_seconds=0)
    Command.objects.filter(pk=command.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    with pytest.raises(CommandExpired) as exc:
        ack(agent, command)
    assert exc.value.status == 409
    command.refresh_from_db()
    assert command.state == CommandState.EXPIRED
    assert AuditEntry.objects.filter(action="command.expired").count() == 1
    assert AuditEntry.objects.get(action="command.ack").outcome == "refused"
    with pytest.raises(CommandExpired):  # and stays refused
        ack(agent, command)


# --- expiry ---------------------------------------------------------------


def test_expire_sweeps_only_open_commands_past_deadline(fleet, operator, amd_agent):
    past = timezone.now() - timedelta(seconds=1)
    pending = remove(operator)
    delivered = remove(operator, mode="jsonStringParse")
    services.commands_pull(agent=amd_agent[0], wait_seconds=0)
    applied = remove(operator, mode="nullOptionalDrop")
    ack(amd_agent[0], applied)
    fresh = remove(operator, host=XEON, model=GLM, mode="numberFromString")
    Command.objects.exclude(pk=fresh.pk).update(expires_at=past)
    Command.objects.filter(pk=pending.pk).update(state=CommandState.PENDING)

    assert services.commands_expire() == 2
    states = dict(Command.objects.values_list("pk", "state"))
    assert states == {
        pending.pk: "expired",
        delivered.pk: "expired",
        applied.pk: "applied",
        fresh.pk: "pending",
    }
    assert services.commands_expire() == 0
    assert AuditEntry.objects.filter(action="command.expired").count() == 2


# --- confirmation -----------------------------------------------------------


def entry_without_rule(host_model: HostModel, mode: str) -> dict:
    entry = copy.deepcopy(host_model.entry)
    entry["profile"]["rules"] = [
        r for r in entry["profile"]["rules"] if r["mode"] != mode
    ]
    return entry


def confirm(host_model, entry, taken_at=None):
    return services.commands_confirm_from_snapshot(
        host=host_model.host,
        model=host_model.model,
        entry=entry,
        taken_at=taken_at or timezone.now(),
    )


def test_snapshot_confirms_applied_commands_whose_effect_shows(
    fleet, operator, amd_agent
):
    host_model = fleet[(AMD, GPT)]
    command = remove(operator, mode="jsonStringParse")
    other = remove(operator, mode="numberFromString")
    # Not applied yet: a snapshot without the rule does not confirm it.
    assert confirm(host_model, entry_without_rule(host_model, "jsonStringParse")) == 0
    ack(amd_agent[0], command)
    ack(amd_agent[0], other)
    # The rule still stands in this snapshot (written before the agent applied it).
    assert confirm(host_model, host_model.entry) == 0
    assert confirm(host_model, entry_without_rule(host_model, "jsonStringParse")) == 1
    command.refresh_from_db()
    other.refresh_from_db()
    assert command.confirmed_at is not None
    assert other.confirmed_at is None
    assert AuditEntry.objects.filter(action="command.confirmed").count() == 1


def test_snapshot_confirms_reset_forget_and_probe(fleet, operator, amd_agent):
    host_model = fleet[(AMD, GLM)]
    agent = amd_agent[0]
    reset, probe = services.action_reset_protocol(
        actor=operator, host_model=host_model, reprobe=True, ip_address=None
    )
    forget = services.command_create(
        actor=operator,
        host=AMD,
        model=GLM,
        kind="forget_mode",
        params={"mode": "bareScalarWrap"},
    )
    for command in (reset, probe, forget):
        ack(agent, command, result={"via": "file"})
    entry = copy.deepcopy(host_model.entry)
    assert confirm(host_model, entry) == 0
    del entry["profile"]["protocol"]
    del entry["profile"]["teachStats"]["bareScalarWrap"]
    assert confirm(host_model, entry) == 2
    entry["profile"]["toolProbe"]["probedAt"] = "2099-01-01T00:00:00.000Z"
    assert confirm(host_model, entry) == 1
    assert Command.objects.filter(confirmed_at__isnull=True).count() == 0


def test_ack_confirms_when_the_snapshot_arrived_first(fleet, operator, amd_agent):
    host_model = fleet[(AMD, GPT)]
    command = remove(operator, mode="jsonStringParse")
    services.commands_pull(agent=amd_agent[0], wait_seconds=0)
    # The agent ships the rewritten store before its ack reaches the server.
    host_model.entry = entry_without_rule(host_model, "jsonStringParse")
    host_model.save()
    assert confirm(host_model, host_model.entry) == 0
    acked = ack(amd_agent[0], command)
    assert acked.confirmed_at is not None
