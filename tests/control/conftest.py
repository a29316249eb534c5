"""Hosts, models and agents for control tests, built from the shared pi fixtures."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from pi_dashboard.accounts.models import ApiToken
from pi_dashboard.control import services
from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.lib.tokens import token_display_prefix, token_generate, token_hash

AMD = "amd-ryzen-9-7950x-16-core-processor-32c-64g"
APPLE = "apple-m3-max-16c-128g"
XEON = "intel-r-xeon-r-gold-6338-cpu-2-00ghz-128c-512g"
GLM = "llamacpp/glm-4.6"  # rules on AMD and Xeon, both with a protocol
GPT = "openai/gpt-5.1"  # AMD: 3 rules, no protocol; Apple: no rules


@pytest.fixture
def store(pi_fixtures: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (pi_fixtures / "model-adaptation.json").read_text()
    )
    return data


def host_model_from(entry: dict[str, Any]) -> HostModel:
    """A HostModel row as snapshot ingest would leave it (only what control reads)."""
    fp = entry["host"]
    host, _ = Host.objects.get_or_create(
        pi_id=fp["id"],
        defaults={
            "cpu": fp["cpu"],
            "cores": fp["cores"],
            "total_mem_gb": fp["totalMemGb"],
        },
    )
    provider, _, model_id = entry["model"].partition("/")
    model, _ = Model.objects.get_or_create(
        key=entry["model"], defaults={"provider": provider, "model_id": model_id}
    )
    host_model, _ = HostModel.objects.update_or_create(
        host=host,
        model=model,
        defaults={"entry": entry, "rule_count": len(entry["profile"]["rules"])},
    )
    return host_model


@pytest.fixture
def fleet(db: None, store: dict[str, Any]) -> dict[tuple[str, str], HostModel]:
    """Every host × model of the shared store, keyed by (pi host id, model key)."""
    return {
        (host_id, key): host_model_from(entry)
        for host_id, bucket in store["hosts"].items()
        for key, entry in bucket.items()
    }


def make_agent(name: str, host: Host | None) -> tuple[Agent, str]:
    token = token_generate("pid_ag")
    agent = Agent.objects.create(
        name=name,
        token_prefix=token_display_prefix(token),
        token_hash=token_hash(token),
        host=host,
    )
    return agent, token


@pytest.fixture
def amd_agent(fleet: dict[tuple[str, str], HostModel]) -> tuple[Agent, str]:
    return make_agent("amd-box", Host.objects.get(pi_id=AMD))


@pytest.fixture
def xeon_agent(fleet: dict[tuple[str, str], HostModel]) -> tuple[Agent, str]:
    return make_agent("xeon-box", Host.objects.get(pi_id=XEON))


def make_operator_token(user: Any, name: str = "ci") -> str:
    token = token_generate("pid_op")
    ApiToken.objects.create(
        user=user,
        name=name,
        prefix=token_display_prefix(token),
        token_hash=token_hash(token),
    )
    return token


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def api() -> Callable[..., Any]:
    """POST/GET JSON against /api/v1 with a bearer token; returns the response."""
    client = Client()

    def call(method: str, path: str, token: str | None = None, body: Any = None) -> Any:
        headers = bearer(token) if token else {}
        if method == "GET":
            return client.get(f"/api/v1{path}", **headers)
        return client.post(
            f"/api/v1{path}",
            data=json.dumps(body if body is not None else {}),
            content_type="application/json",
            **headers,
        )

    return call


def remove_rule(
    operator: Any,
    *,
    host: str = AMD,
    model: str = GPT,
    mode: str = "jsonStringParse",
    **extra: Any,
) -> Command:
    """A remove_rule command, created through the service as an operator would."""
    return services.command_create(
        actor=operator,
        host=host,
        model=model,
        kind="remove_rule",
        params={"mode": mode},
        **extra,
    )


def ack(
    agent: Agent,
    command: Command,
    status: str = "applied",
    result: dict[str, Any] | None = None,
) -> Command:
    """The agent's ack of `command` (by default: applied, the rule removed)."""
    return services.command_ack(
        agent=agent,
        command_id=command.pk,
        status=status,
        result=result if result is not None else {"removed": True, "via": "file"},
        detail="done",
    )
