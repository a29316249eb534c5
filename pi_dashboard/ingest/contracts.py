"""The published JSON Schemas (draft 2020-12) of every record kind; their validators.

The schema files in `schemas/` are the contract served at /api/v1/schemas/. Validators
are built once per process. They are Draft202012Validator with one change that keeps
the semantics: `properties` checks each value against a predicate compiled from its
subschema (types, const, required, items, local $ref, bounds) instead of descending
into a new validator object per value, which is most of the time jsonschema spends
on a log line. A predicate only ever says "valid"; otherwise, or for a keyword it
does not cover, the standard descent runs, so errors are exactly jsonschema's.
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
# Keywords that never make an instance invalid (format is an annotation by default;
# $defs only holds subschemas for $ref).
_ANNOTATIONS = frozenset(
    {
        "description",
        "examples",
        "format",
        "title",
        "$schema",
        "$id",
        "$defs",
        "$comment",
    }
)

Check = Callable[[Any], bool]
_NUMBER_TYPES = (int, float)


def _type_check(name: str) -> Check | None:
    checks: dict[str, Check] = {
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "number": lambda v: type(v) in _NUMBER_TYPES or _is_num(v),
        "integer": lambda v: (
            (isinstance(v, int) and not isinstance(v, bool))
            or (isinstance(v, float) and v.is_integer())
        ),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    return checks.get(name)


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _keyword_check(key: str, arg: Any, sub: dict[str, Any], root: Any) -> Check | None:
    """The predicate of one keyword, applied only to the instance types it governs."""
    if key == "const" and type(arg) in (str, int):
        return lambda v: type(v) is type(arg) and v == arg
    if key == "type":
        names = [arg] if isinstance(arg, str) else arg
        checks = [_type_check(n) if isinstance(n, str) else None for n in names]
        if not checks or any(c is None for c in checks):
            return None
        if len(checks) == 1:
            return checks[0]
        return lambda v: any(c(v) for c in checks)  # type: ignore[misc]
    if key == "required" and all(isinstance(r, str) for r in arg):
        return lambda v: not isinstance(v, dict) or all(r in v for r in arg)
    if key in ("minimum", "exclusiveMinimum") and _is_num(arg):
        if key == "minimum":
            return lambda v: not _is_num(v) or v >= arg
        return lambda v: not _is_num(v) or v > arg
    if key in ("minLength", "maxLength") and isinstance(arg, int):
        if key == "minLength":
            return lambda v: not isinstance(v, str) or len(v) >= arg
        return lambda v: not isinstance(v, str) or len(v) <= arg
    if key == "items":
        item = _compile(arg, root)
        if item is None:
            return None
        return lambda v: not isinstance(v, list) or all(item(x) for x in v)
    if key == "properties":
        props = {name: _compile(s, root) for name, s in arg.items()}
        if any(c is None for c in props.values()):
            return None
        return _properties_check(list(props.items()))  # type: ignore[arg-type]
    if key == "additionalProperties" and "properties" not in sub:
        extra = _compile(arg, root)
        if extra is None:
            return None
        return lambda v: not isinstance(v, dict) or all(extra(x) for x in v.values())
    return None


def _compile(sub: Any, root: Any) -> Check | None:
    """A fast predicate that is True exactly when `sub` accepts the instance.

    Covers the keywords our schemas use (local `$ref` included); None means "not
    covered", and jsonschema's own descent decides.
    """
    if not isinstance(sub, dict):
        return None
    keys = set(sub) - _ANNOTATIONS
    if keys == {"$ref"}:
        ref = sub["$ref"]
        name = ref.removeprefix("#/$defs/")
        target = root.get("$defs", {}).get(name) if name != ref else None
        return _compile(target, root) if target is not None else None
    checks = [_keyword_check(key, sub[key], sub, root) for key in sorted(keys)]
    if any(c is None for c in checks):
        return None
    return _all_of(checks)  # type: ignore[arg-type]


# Plain loops: generator expressions cost more than the checks they run.
def _all_of(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> bool:
        for one in checks:  # noqa: SIM110 (a loop is cheaper than all() + genexpr)
            if not one(value):
                return False
        return True

    return check


def _properties_check(pairs: list[tuple[str, Check]]) -> Check:
    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name, one in pairs:  # noqa: SIM110 (cheaper than all() + genexpr)
            if name in value and not one(value[name]):
                return False
        return True

    return check


def _precompile(document: Any, root: Any) -> None:
    """Compile every subschema under a `properties` keyword, anywhere in `document`."""
    if isinstance(document, dict):
        props = document.get("properties")
        if isinstance(props, dict):
            for sub in props.values():
                _checks[id(sub)] = (sub, _compile(sub, root))
        for value in document.values():
            _precompile(value, root)
    elif isinstance(document, list):
        for value in document:
            _precompile(value, root)


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
        if cached is not None and cached[1] is not None and cached[1](instance[prop]):
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
    _precompile(document, document)
    built: Validator = FastValidator(document)
    return built


@cache
def _root_check(name: str) -> Check | None:
    document = schema_document(name)
    return _compile(document, document)


def violation(name: str, instance: Any) -> str | None:
    """None when `instance` is valid, else one specific, bounded reason."""
    checker = validator(name)
    quick = _root_check(name)
    if quick is not None and quick(instance):
        return None
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
