"""The published JSON Schemas (draft 2020-12) of every record kind; their validators.

The schema files in `schemas/` are the contract served at /api/v1/schemas/. Checking
a line first runs a predicate compiled to Python source from the record's schema
(types, const, required, items, local $ref, bounds): one function with every check
inline, a few microseconds per log line. A predicate only ever says "valid";
otherwise, or for a schema with keywords it does not cover, Draft202012Validator
decides, so errors are exactly jsonschema's. That validator's `properties` uses the
same predicates per value before descending (the adaptation store's root has `oneOf`).
"""

import itertools
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
# A `$ref` chain deeper than this is left to jsonschema (ours nest two levels).
_MAX_DEPTH = 24
_TYPE_SOURCE = {
    "string": "isinstance({v}, str)",
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
    "number": "type({v}) in _NUMBERS",
    "integer": "type({v}) is int or (type({v}) is float and {v}.is_integer())",
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
}
_BOUNDS = {
    "minimum": ">=",
    "exclusiveMinimum": ">",
    "maximum": "<=",
    "exclusiveMaximum": "<",
}
_LENGTHS = {"minLength": ">=", "maxLength": "<="}
# JSON numbers parse to exactly these; bool is an int subclass and is not a number.
_NUMBERS = (int, float)
_MISSING = object()


class _PredicateSource:
    """Python source of one boolean expression that is True only for valid values.

    Generated once per schema and compiled: one function with every check inline
    runs several times faster than a tree of closures or jsonschema's descent.
    Property names and constants enter the source through repr(), and the schemas
    are files of this package, never request data.
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self.names = itertools.count()

    def fresh(self) -> str:
        return f"_v{next(self.names)}"

    def schema(self, sub: Any, var: str, depth: int = 0) -> str | None:
        if not isinstance(sub, dict) or depth > _MAX_DEPTH:
            return None
        keys = set(sub) - _ANNOTATIONS
        if keys == {"$ref"}:
            target = self.resolve(sub["$ref"])
            return None if target is None else self.schema(target, var, depth + 1)
        parts = [self.keyword(key, sub[key], sub, var, depth) for key in sorted(keys)]
        if any(part is None for part in parts):
            return None
        return " and ".join(f"({part})" for part in parts) or "True"

    def resolve(self, ref: str) -> Any:
        name = ref.removeprefix("#/$defs/")
        if name == ref:
            return None
        return self.root.get("$defs", {}).get(name)

    def keyword(  # noqa: PLR0911 (one return per keyword)
        self, key: str, arg: Any, sub: dict[str, Any], var: str, depth: int
    ) -> str | None:
        if key == "const" and type(arg) in (str, int):
            return f"type({var}) is {type(arg).__name__} and {var} == {arg!r}"
        if key == "type":
            names = [arg] if isinstance(arg, str) else arg
            checks = [_TYPE_SOURCE.get(name) for name in names]
            if not checks or any(check is None for check in checks):
                return None
            return " or ".join(f"({check})".format(v=var) for check in checks)
        if key == "required" and all(isinstance(name, str) for name in arg):
            present = " and ".join(f"{name!r} in {var}" for name in arg) or "True"
            return f"not isinstance({var}, dict) or ({present})"
        if key in _BOUNDS and type(arg) in _NUMBERS:
            return f"type({var}) not in _NUMBERS or {var} {_BOUNDS[key]} {arg!r}"
        if key in _LENGTHS and type(arg) is int:
            return f"not isinstance({var}, str) or len({var}) {_LENGTHS[key]} {arg!r}"
        if key == "items":
            return self.each(arg, var, f"{var}", "list", depth)
        if key == "properties":
            return self.properties(arg, var, depth)
        if key == "additionalProperties" and "properties" not in sub:
            return self.each(arg, var, f"{var}.values()", "dict", depth)
        return None

    def each(
        self, sub: Any, var: str, members: str, container: str, depth: int
    ) -> str | None:
        item = self.fresh()
        check = self.schema(sub, item, depth + 1)
        if check is None:
            return None
        every = f"all(({check}) for {item} in {members})"
        return f"not isinstance({var}, {container}) or {every}"

    def properties(self, props: dict[str, Any], var: str, depth: int) -> str | None:
        checks = []
        for name, sub in props.items():
            value = self.fresh()
            check = self.schema(sub, value, depth + 1)
            if check is None:
                return None
            got = f"({value} := {var}.get({name!r}, _MISSING))"
            checks.append(f"({got} is _MISSING or ({check}))")
        return f"not isinstance({var}, dict) or ({' and '.join(checks) or 'True'})"


def _compile(sub: Any, root: Any) -> Check | None:
    """A predicate that is True only when `sub` accepts the instance.

    Covers the keywords our schemas use (local `$ref` included); None means "not
    covered", and jsonschema's own descent decides.
    """
    expression = _PredicateSource(root).schema(sub, "value")
    if expression is None:
        return None
    namespace: dict[str, Any] = {"_MISSING": _MISSING, "_NUMBERS": _NUMBERS}
    code = f"def check(value):\n    return bool({expression})\n"
    exec(compile(code, "<schema predicate>", "exec"), namespace)  # noqa: S102 (see _PredicateSource)
    check: Check = namespace["check"]
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
