"""Statuses every operation can answer, added to the OpenAPI document in one place.

Some answers come from layers in front of each operation, so no decorator lists
them: the request guard (400 for NUL in the path or query), ninja's validation (422
for parameters and bodies), token auth (401) and the database-down handler (503).
Documenting them here keeps the published contract true for every operation
(schemathesis checks it, tests/lib/test_openapidoc.py).
"""

from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/ErrorOut"}
DESCRIPTIONS = {
    "400": "Bad request: NUL in the path or query, or a body that is not JSON.",
    "401": "Missing, unknown or revoked token.",
    "422": "A parameter or the body does not match its schema.",
    "503": "The database is unavailable; retry after Retry-After seconds.",
}
METHODS = ("get", "put", "post", "delete", "patch")


def _error_response(status: str) -> dict[str, Any]:
    return {
        "description": DESCRIPTIONS[status],
        "content": {"application/json": {"schema": ERROR_REF}},
    }


def common_errors_document(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the statuses above to every operation that can answer them (in place)."""
    for item in schema.get("paths", {}).values():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            needed = ["400"]
            if operation.get("security"):
                needed += ["401", "503"]
            if operation.get("parameters") or operation.get("requestBody"):
                needed.append("422")
            # ninja keys its own statuses by int: make every key a string, or the
            # JSON holds "401" twice and Swagger UI refuses the whole document.
            responses = {str(k): v for k, v in operation.get("responses", {}).items()}
            operation["responses"] = responses
            for status in needed:
                responses.setdefault(status, _error_response(status))
    return schema
