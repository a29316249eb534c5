"""API schemas of the probes app."""

from datetime import datetime
from typing import Any, Literal

from ninja import Field, Schema


class EndpointIn(Schema):
    name: str = Field(max_length=200)
    base_url: str = Field(max_length=500)
    server_model: str = Field(
        max_length=300, description="Model id as the server names it."
    )
    model_key: str = Field(max_length=600, description="pi's provider/modelId key.")
    api_key: str | None = Field(
        None, description="Stored encrypted; write-only. Omit to keep, empty to clear."
    )
    api_key_env: str = Field(
        "",
        description="Read the key from this worker variable: one that "
        "PI_PROBE_KEY_ENV_ALLOWED allows (default PI_PROBE_KEY_*); setting or "
        "changing it needs the admin role.",
    )
    headers: dict[str, str] | None = Field(
        None, description="Write-only; omit to keep."
    )
    timeout_seconds: float = 60.0
    token_param: Literal["max_tokens", "max_completion_tokens"] = (
        "max_completion_tokens"  # noqa: S105 (a parameter name)
    )
    is_streaming: bool = True
    tags: list[str] = []
    trials: int = Field(1, description="k: each trial must pass k of k times.")
    max_concurrent_probes: int | None = Field(
        None,
        description="Probes at once against this endpoint's server (scheme, host, "
        "port); null: no limit but the fleet-wide cap. 1 for llama.cpp-like servers.",
    )
    is_enabled: bool = True


class EndpointOut(Schema):
    id: int
    name: str
    base_url: str
    server_model: str
    model_key: str
    provider: str
    has_api_key: bool
    api_key_env: str
    header_names: list[str]
    timeout_seconds: float
    token_param: str
    is_streaming: bool
    tags: list[str]
    trials: int
    max_concurrent_probes: int | None
    is_enabled: bool
    last_verdict: str
    last_grade: str
    last_variant: str
    last_probed_at: datetime | None


class ProbeRunOut(Schema):
    id: int
    endpoint_id: int
    endpoint_name: str
    slot: str
    trigger: str
    state: str
    verdict: str
    native_grade: str
    variant: str
    diagnostic: str
    tool_probe: dict[str, Any] | None = Field(
        None, description="What pi writes as toolProbe."
    )
    protocol: dict[str, Any] | None = Field(
        None, description="pi's protocol, when calibrated."
    )
    error: str
    warning: str
    completions: int
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class ExchangeOut(Schema):
    seq: int
    kind: str
    passed: bool
    request: dict[str, Any]
    response: dict[str, Any]


class ProbeRunDetailOut(ProbeRunOut):
    exchanges: list[ExchangeOut]
