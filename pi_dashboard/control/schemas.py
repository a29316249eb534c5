"""Request and response bodies of the control API (docs/protocol.md, "Commands")."""

import uuid
from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field

from pi_dashboard.control.models import Command

# The longest long-poll an agent may ask for (docs/protocol.md: wait=0..25).
MAX_WAIT_SECONDS = 25


class PullQuery(Schema):
    wait: float = Field(0, ge=0, le=MAX_WAIT_SECONDS)


class AgentCommandOut(Schema):
    id: uuid.UUID
    kind: str
    model: str
    params: dict[str, Any]
    created_at: datetime
    expires_at: datetime

    @staticmethod
    def resolve_model(obj: Command) -> str:
        return obj.model.key


class AgentCommandsOut(Schema):
    commands: list[AgentCommandOut]


class AckIn(Schema):
    status: Literal["applied", "failed"]
    result: dict[str, Any] = {}
    detail: str = ""


class AckOut(Schema):
    id: uuid.UUID
    state: str


class CommandCreateIn(Schema):
    host: str
    model: str
    kind: str
    params: dict[str, Any] = {}


class CommandFiltersIn(Schema):
    host: str = ""
    model: str = ""
    state: str = ""
    kind: str = ""
    limit: int = Field(100, ge=1, le=500)


class CommandOut(Schema):
    id: uuid.UUID
    host: str
    model: str
    kind: str
    params: dict[str, Any]
    state: str
    created_at: datetime
    expires_at: datetime
    delivered_at: datetime | None
    finished_at: datetime | None
    result: dict[str, Any]
    error: str
    confirmed_at: datetime | None
    # Set when a later snapshot undid the confirmed effect (state reverted).
    reverted_at: datetime | None = None
    revert_cause: str = Field("", description="relearned | overwritten | empty")
    created_by: str | None

    @staticmethod
    def resolve_host(obj: Command) -> str:
        return obj.host.pi_id

    @staticmethod
    def resolve_model(obj: Command) -> str:
        return obj.model.key

    @staticmethod
    def resolve_created_by(obj: Command) -> str | None:
        return obj.created_by.get_username() if obj.created_by else None


class CommandsOut(Schema):
    commands: list[CommandOut]
