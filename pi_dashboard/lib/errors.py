"""Domain errors: raised by services, rendered as `{"detail", "code"}` by the API."""


class DomainError(Exception):
    """A rule of the domain was violated; `code` is stable, `detail` is for people."""

    status = 400
    code = "invalid"

    def __init__(self, detail: str, *, code: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class Forbidden(DomainError):
    status = 403
    code = "forbidden"
