"""API schemas every router shares."""

from ninja import Schema


class ErrorOut(Schema):
    """The body of every API error (see pi_dashboard.api's exception handlers)."""

    detail: str
    code: str
