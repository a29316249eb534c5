"""The published JSON Schemas (draft 2020-12) of every record kind; their validators.

The schema files in `schemas/` are the contract served at /api/v1/schemas/. Validators
are built once per process. They are Draft202012Validator with one change that keeps
the semantics: `properties` checks a value whose subschema is a bare type (or const,
or an array of a bare type) inline instead of descending into a new validator object,
which is most of the time jsonschema spends on a log line. Whenever the inline check
fails, the standard descent runs, so errors are exactly jsonschema's.
"""

import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import extend

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SCHEMA_NAMES = (
    "adaptation-store",
    "event-validation",
    "event-execution-failure",
    "corpus-tool-validation",
    "corpus-tool-execution",
    "corpus-provider",
    "session-stats",
    "heartbeat",
)
# Keywords that never make an instance invalid (format is an annotation by default).
_ANNOTATIONS = frozenset({"description", "examples", "format", "title"})

Check = Callable[[Any], bool]


def _type_check(name: str) -> Check | None:
    checks: dict[str, Check] = {
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "integer": lambda v: (
            (isinstance(v, int) and not isinstance(v, bool))
            or (isinstance(v, float) and v.is_integer())
        ),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    return checks.get(name)


def _inline_check(sub: Any) -> Check | None:
    """A fast predicate equivalent to validating against `sub`, when one is simple."""
    if not isinstance(sub, dict):
        return None
    keys = set(sub) - _ANNOTATIONS
    if keys == {"const"} and type(sub["const"]) in (str, int):
        const = sub["const"]
        return lambda v: type(v) is type(const) and v == const
    if keys == {"type"} and isinstance(sub["type"], str):
        return _type_check(sub["type"])
    if keys == {"type", "items"} and sub["type"] == "array":
        item = _inline_check(sub["items"])
        if item is None:
            return None
        return lambda v: isinstance(v, list) and all(item(x) for x in v)
    return None


# id(subschema) -> (subschema, check); the subschema is held so its id stays unique.
_checks: dict[int, tuple[Any, Check | None]] = {}


def _fast_properties(
    validator: Validator, properties: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for prop, sub in properties.items():
        if prop not in instance:
            continue
        cached = _checks.get(id(sub))
        if cached is None:
            cached = _checks[id(sub)] = (sub, _inline_check(sub))
        check = cached[1]
        if check is not None and check(instance[prop]):
            continue
        yield from validator.descend(instance[prop], sub, path=prop, schema_path=prop)


FastValidator = extend(
    Draft202012Validator, validators={"properties": _fast_properties}
)


@cache
def schema_document(name: str) -> dict[str, Any]:
    """The parsed schema file `name` (one of SCHEMA_NAMES)."""
    if name not in SCHEMA_NAMES:
        raise KeyError(name)
    document: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.json").read_text())
    return document


@cache
def validator(name: str) -> Validator:
    document = schema_document(name)
    Draft202012Validator.check_schema(document)
    built: Validator = FastValidator(document)
    return built


def violation(name: str, instance: Any) -> str | None:
    """None when `instance` is valid, else one specific, bounded reason."""
    checker = validator(name)
    if checker.is_valid(instance):
        return None
    error = best_match(checker.iter_errors(instance))
    if error is None:  # pragma: no cover - is_valid said there was one
        return "does not match the schema"
    where = error.json_path
    message = error.message
    if len(message) > 200:
        message = message[:200] + "…"
    return f"{where}: {message}"
