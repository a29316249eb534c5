"""API schemas every router shares."""

from datetime import datetime
from typing import Annotated, Any

from ninja import Schema
from pydantic import AfterValidator

from pi_dashboard.lib import isotime

# A date-time from a request, in UTC; offsets past ±18:00 are a 422, not a 500.
ApiDateTime = Annotated[datetime, AfterValidator(isotime.utc_checked)]


class ErrorOut(Schema):
    """The body of every API error (see pi_dashboard.api's exception handlers)."""

    detail: str
    code: str


class ValidationErrorOut(ErrorOut):
    """A 422: the body did not match the operation's schema, field by field."""

    errors: list[Any]


# What an operator's write operation may answer besides success (probes, alerts).
WRITE_ERRORS = {
    400: ErrorOut,
    401: ErrorOut,
    403: ErrorOut,
    404: ErrorOut,
    409: ErrorOut,
    422: ValidationErrorOut,
}
