"""Errors the CLI turns into one-line messages and exit codes."""


class AgentError(Exception):
    """Base: `str(exc)` is the one-line message shown to the user."""

    exit_code = 1


class ConfigError(AgentError):
    exit_code = 3


class StateDirMissing(AgentError):
    exit_code = 3


class ServerUnreachable(AgentError):
    """Wrong URL, connection refused, DNS failure, timeout, TLS failure."""

    exit_code = 4


class Unauthorized(AgentError):
    """The server rejects the token (unknown or revoked)."""

    exit_code = 5


class ServerError(AgentError):
    """The server answered with an unexpected status; `status` and `code` tell which."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after

    @property
    def is_retryable(self) -> bool:
        return self.status in (408, 425, 429) or self.status >= 500
