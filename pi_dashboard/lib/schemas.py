"""API schemas every router shares."""

from datetime import datetime
from typing import Annotated

from ninja import Schema
from pydantic import AfterValidator

from pi_dashboard.lib import isotime

# A date-time from a request, in UTC; offsets past ±18:00 are a 422, not a 500.
ApiDateTime = Annotated[datetime, AfterValidator(isotime.utc_checked)]


class ErrorOut(Schema):
    """The body of every API error (see pi_dashboard.api's exception handlers)."""

    detail: str
    code: str
