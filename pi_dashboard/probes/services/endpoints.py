"""Endpoints: create, change, delete; and the decrypted target a probe talks to."""

import os
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import has_role
from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.fleet.models import Model
from pi_dashboard.lib.errors import Conflict, DomainError, Forbidden
from pi_dashboard.probes import chat, conf, crypto, outbound
from pi_dashboard.probes.models import Endpoint, TokenParam

HEADER_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "content-type", "transfer-encoding"}
)


@dataclass
class EndpointData:
    """Fields an operator sets. Secrets: None keeps the stored value, "" clears it."""

    name: str
    base_url: str
    server_model: str
    model_key: str
    api_key: str | None = None
    api_key_env: str = ""
    headers: dict[str, str] | None = None
    timeout_seconds: float = 60.0
    token_param: str = TokenParam.MAX_COMPLETION_TOKENS
    is_streaming: bool = True
    tags: list[str] = field(default_factory=list)
    trials: int = 1
    max_concurrent_probes: int | None = None
    is_enabled: bool = True


def endpoint_validate(data: EndpointData) -> None:
    if not data.name.strip():
        raise DomainError("Give the endpoint a name.", code="invalid_name")
    if not data.base_url.startswith(("http://", "https://")):
        raise DomainError(
            "The base URL must start with http:// or https://.", code="invalid_url"
        )
    provider, _, model_id = data.model_key.partition("/")
    if not provider or not model_id:
        raise DomainError(
            "The pi model key must look like provider/modelId.",
            code="invalid_model_key",
        )
    if not data.server_model.strip():
        raise DomainError(
            "Give the model id the server uses.", code="invalid_server_model"
        )
    if not 0.1 <= data.timeout_seconds <= 600:
        raise DomainError(
            "Timeout must be between 0.1 and 600 seconds.", code="invalid_timeout"
        )
    if not 1 <= data.trials <= 10:
        raise DomainError("Trials (k) must be between 1 and 10.", code="invalid_trials")
    if data.max_concurrent_probes is not None and not (
        1 <= data.max_concurrent_probes <= 1000
    ):
        raise DomainError(
            "Concurrent probes must be between 1 and 1000, or empty for no limit.",
            code="invalid_max_concurrent_probes",
        )
    if data.token_param not in TokenParam.values:
        raise DomainError("Unknown token parameter.", code="invalid_token_param")
    for name in data.headers or {}:
        if (
            not name
            or set(name.lower()) - HEADER_NAME_CHARS
            or name.lower() in RESERVED_HEADERS
        ):
            raise DomainError(
                f"Header name {name!r} is not allowed.", code="invalid_header"
            )
    key_env = data.api_key_env.strip()
    if key_env and not key_env.replace("_", "").isalnum():
        raise DomainError(
            "The API key variable name is not valid.", code="invalid_env_name"
        )
    if key_env and not conf.key_env_is_allowed(key_env):
        raise DomainError(key_env_refusal(key_env), code="api_key_env_not_allowed")
    outbound.url_check(data.base_url.strip())


def key_env_refusal(name: str) -> str:
    allowed = ", ".join(conf.key_env_allowed()) or "none"
    return (
        f"The worker variable {name} may not be used as an API key; an admin allows "
        f"variables in PI_PROBE_KEY_ENV_ALLOWED (now: {allowed})."
    )


def _key_env_authorize(
    *, endpoint: Endpoint | None, data: EndpointData, user: audit.Actor
) -> str | None:
    """The previous `api_key_env` when this save changes it; only admins may.

    The probe sends that variable's value to a URL the endpoint names, so choosing
    the variable is choosing what leaves the worker. `user` None is the system
    (demo, management commands), which is trusted.
    """
    before = endpoint.api_key_env if endpoint is not None else ""
    if data.api_key_env.strip() == before:
        return None
    if user is not None and not has_role(user, Role.ADMIN):
        raise Forbidden(
            "Only an admin may set or change the API key variable.",
            code="api_key_env_admin_only",
        )
    return before


def _key_env_audit(
    *, endpoint: Endpoint, before: str | None, user: audit.Actor
) -> None:
    if before is None:
        return
    audit.audit_log(
        actor=user,
        action="probes.endpoint.api_key_env",
        outcome=AuditOutcome.OK,
        detail={
            "endpoint": endpoint.pk,
            "name": endpoint.name,
            "before": before,
            "after": endpoint.api_key_env,
        },
    )


def _apply(endpoint: Endpoint, data: EndpointData) -> None:
    endpoint.name = data.name.strip()
    endpoint.base_url = data.base_url.strip().rstrip("/")
    endpoint.server_model = data.server_model.strip()
    endpoint.model_key = data.model_key.strip()
    endpoint.provider = endpoint.model_key.split("/", 1)[0]
    endpoint.api_key_env = data.api_key_env.strip()
    endpoint.timeout_seconds = data.timeout_seconds
    endpoint.token_param = data.token_param
    endpoint.is_streaming = data.is_streaming
    endpoint.tags = sorted({t.strip() for t in data.tags if t.strip()})
    endpoint.trials = data.trials
    endpoint.max_concurrent_probes = data.max_concurrent_probes
    endpoint.is_enabled = data.is_enabled
    if data.api_key is not None:
        endpoint.api_key_encrypted = crypto.encrypt(data.api_key.strip())
    if data.headers is not None:
        endpoint.headers_encrypted = crypto.encrypt_json(data.headers)
        endpoint.header_names = sorted(data.headers)


def model_of(model_key: str) -> Model | None:
    """The fleet's model a probe concerns, for the audit entry (None when unknown)."""
    return Model.objects.filter(key=model_key).first() if model_key else None


def endpoint_create(
    *, data: EndpointData, user: audit.Actor = None, ip_address: str | None = None
) -> Endpoint:
    """Create an endpoint; `user` (None: the system) must be an admin to name a key
    variable. Audited as `probes.endpoint.create`, refusals too."""
    with audit.audited(
        actor=user,
        action="probes.endpoint.create",
        model=model_of(data.model_key),
        ip_address=ip_address,
        name=data.name,
    ) as info:
        endpoint = _endpoint_create(data=data, user=user)
        info["endpoint"] = endpoint.pk
    return endpoint


@transaction.atomic
def _endpoint_create(*, data: EndpointData, user: audit.Actor) -> Endpoint:
    endpoint_validate(data)
    before = _key_env_authorize(endpoint=None, data=data, user=user)
    if Endpoint.objects.filter(name=data.name.strip()).exists():
        raise Conflict(
            f"An endpoint named {data.name!r} exists.", code="duplicate_name"
        )
    endpoint = Endpoint()
    _apply(endpoint, data)
    endpoint.save()
    _key_env_audit(endpoint=endpoint, before=before, user=user)
    return endpoint


def endpoint_update(
    *,
    endpoint: Endpoint,
    data: EndpointData,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> Endpoint:
    """Change an endpoint; changing its key variable is the admin's (see create)."""
    with audit.audited(
        actor=user,
        action="probes.endpoint.update",
        model=model_of(data.model_key),
        ip_address=ip_address,
        endpoint=endpoint.pk,
        name=data.name,
    ):
        return _endpoint_update(endpoint=endpoint, data=data, user=user)


@transaction.atomic
def _endpoint_update(
    *, endpoint: Endpoint, data: EndpointData, user: audit.Actor
) -> Endpoint:
    endpoint_validate(data)
    before = _key_env_authorize(endpoint=endpoint, data=data, user=user)
    clash = Endpoint.objects.filter(name=data.name.strip()).exclude(pk=endpoint.pk)
    if clash.exists():
        raise Conflict(
            f"An endpoint named {data.name!r} exists.", code="duplicate_name"
        )
    _apply(endpoint, data)
    endpoint.save()
    _key_env_audit(endpoint=endpoint, before=before, user=user)
    return endpoint


def endpoint_set_enabled(
    *,
    endpoint: Endpoint,
    is_enabled: bool,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> Endpoint:
    """Stop (or resume) probing an endpoint without touching its settings."""
    with audit.audited(
        actor=user,
        action="probes.endpoint.enable" if is_enabled else "probes.endpoint.disable",
        model=model_of(endpoint.model_key),
        ip_address=ip_address,
        endpoint=endpoint.pk,
        name=endpoint.name,
    ):
        endpoint.is_enabled = is_enabled
        endpoint.save(update_fields=["is_enabled"])
    return endpoint


def endpoint_delete(
    *, endpoint: Endpoint, user: audit.Actor = None, ip_address: str | None = None
) -> None:
    """Delete an endpoint and its probe history. Audited as `probes.endpoint.delete`."""
    with audit.audited(
        actor=user,
        action="probes.endpoint.delete",
        model=model_of(endpoint.model_key),
        ip_address=ip_address,
        endpoint=endpoint.pk,
        name=endpoint.name,
    ):
        endpoint.delete()


def endpoint_api_key(endpoint: Endpoint) -> str:
    """The key to send; raises DomainError when it cannot be had (pi: auth missing)."""
    if endpoint.api_key_env:
        if not conf.key_env_is_allowed(endpoint.api_key_env):
            # Checked on save too; a row changed behind the service's back (or a
            # narrowed setting) must still never send the variable anywhere.
            raise outbound.OutboundRefused(
                key_env_refusal(endpoint.api_key_env), code="api_key_env_not_allowed"
            )
        value = os.environ.get(endpoint.api_key_env, "")
        if not value:
            raise DomainError(
                f"No API key: environment variable {endpoint.api_key_env} is not set "
                "on the worker.",
                code="api_key_missing",
            )
        return value
    return crypto.decrypt(endpoint.api_key_encrypted)


def endpoint_target(endpoint: Endpoint) -> tuple[chat.Target | None, str, Any]:
    """(target, setup error, destination). Raises outbound.OutboundRefused.

    A missing or unreadable key is not a refusal: pi records it as the probe's
    diagnostic (its native grading throws), so it comes back as the setup error.
    """
    destination = outbound.destination_check(
        endpoint.base_url, allow_private=conf.allow_private()
    )
    try:
        api_key = endpoint_api_key(endpoint)
        headers = crypto.decrypt_json(endpoint.headers_encrypted)
    except outbound.OutboundRefused:
        raise  # a key variable nobody allowed: the run is refused, nothing is sent
    except DomainError as exc:
        return None, exc.detail, destination
    target = chat.Target(
        destination=destination,
        model=endpoint.server_model,
        api_key=api_key,
        headers=headers,
        timeout=endpoint.timeout_seconds,
        token_param=endpoint.token_param,
        stream=endpoint.is_streaming,
    )
    return target, "", destination
