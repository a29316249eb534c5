"""JSON that pi can write but PostgreSQL cannot store, made safe and kept faithful.

pi truncates strings by UTF-16 code unit, so a cut can split a surrogate pair and the
JSON then holds a lone escaped surrogate such as `\\ud83d` (docs/pi-host-pitfalls.md
§35). Python's `json` accepts it, but the string cannot be encoded to UTF-8, and
PostgreSQL rejects it in text and jsonb; the same goes for NUL (`\\u0000`). Such values
are stored twice: a sanitised copy (U+FFFD in place of each bad code point) that the
database accepts, and the exact value as ASCII-escaped JSON, which survives any store
and reads back exactly.
"""

import hashlib
import json
import math
import re
from typing import Any

import orjson

from pi_dashboard.lib import jsonlimits
from pi_dashboard.lib.jsonlimits import JSONLineError

__all__ = ["JSONLineError"]

REPLACEMENT = "\ufffd"
# Lone surrogates and NUL: the code points PostgreSQL text cannot hold.
_UNSAFE = re.compile("[\ud800-\udfff\x00]")


def _no_constants(name: str) -> Any:
    # NaN/Infinity are not JSON (pi's JSON.stringify never writes them) and jsonb
    # refuses them.
    raise JSONLineError(f"non-standard JSON constant {name}")


def loads(data: bytes | str) -> tuple[Any, bool]:
    """Parse one JSON text; returns (value, is_safe).

    `is_safe` is False when a string anywhere holds a lone surrogate or NUL, in which
    case the value must go through `sanitise` before it reaches the database.
    orjson is the fast path; it refuses lone surrogates, so the standard library
    parses what orjson refuses, and reports the error when both refuse. Raises
    JSONLineError (or its TooDeep / NumberTooLarge, see `jsonlimits`).
    """
    jsonlimits.depth_check(
        data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    )
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        raw = data if isinstance(data, bytes) else data.encode()
        # orjson accepts an escaped NUL; a quick byte test avoids walking the value.
        return value, b"\\u0000" not in raw or not contains_unsafe(value)
    try:
        value = json.loads(
            data,
            parse_constant=_no_constants,
            parse_int=jsonlimits.parse_int,
            parse_float=jsonlimits.parse_float,
        )
    except UnicodeDecodeError as exc:
        raise JSONLineError(f"not UTF-8: {exc.reason} at byte {exc.start}") from exc
    except json.JSONDecodeError as exc:
        raise JSONLineError(
            f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    return value, not contains_unsafe(value)


class UnsafeText(JSONLineError):
    code = "unsafe_text"


def loads_strict(data: bytes | str) -> Any:
    """Parse a JSON text that must already be safe for PostgreSQL (what people type:
    an operator's request body); NUL or a lone surrogate is refused, not replaced."""
    value, is_safe = loads(data)
    if not is_safe:
        raise UnsafeText("a string holds NUL or a lone surrogate")
    return value


def contains_unsafe(value: Any) -> bool:
    """True when any string (key or value) inside holds a lone surrogate or NUL."""
    if isinstance(value, str):
        return _UNSAFE.search(value) is not None
    if isinstance(value, dict):
        return any(contains_unsafe(k) or contains_unsafe(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_unsafe(v) for v in value)
    return False


def sanitise(value: Any) -> Any:
    """A copy with every lone surrogate and NUL replaced by U+FFFD."""
    if isinstance(value, str):
        return _UNSAFE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {sanitise(k): sanitise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitise(v) for v in value]
    return value


# Integers a reader in any language takes exactly (JavaScript's safe range is smaller;
# 64 bits is what orjson and most JSON libraries read as an integer).
_INT_RANGE = range(-(2**63), 2**64)


def storable(value: Any) -> Any:
    """`sanitise`, and integers past 64 bits as their decimal text: a value any
    JSON writer and reader copes with (for logs such as the audit)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)  # jsonb refuses NaN
    if isinstance(value, int):
        return value if value in _INT_RANGE else str(value)
    if isinstance(value, str):
        return _UNSAFE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {sanitise_text(str(k)): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return sanitise_text(str(value))


def sanitise_text(text: str) -> str:
    return _UNSAFE.sub(REPLACEMENT, text)


def canonical(value: Any) -> bytes:
    """Sorted keys, no spaces, ASCII-escaped: equal content gives equal bytes.

    orjson writes this form for most records (all-ASCII content) several times faster
    than the standard library; anything else (non-ASCII text, lone surrogates, huge
    integers) takes the standard library's `ensure_ascii` path. Which path a value
    takes depends only on the value, so the bytes stay a function of the content.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        text = b""
    if text and text.isascii():
        return text
    return json.dumps(
        value, sort_keys=True, ensure_ascii=True, separators=(",", ":")
    ).encode("ascii")


def content_hash(value: Any) -> bytes:
    """SHA-256 of the canonical JSON: the identity of a record's content."""
    return hashlib.sha256(canonical(value)).digest()


def escaped(value: Any) -> str:
    """The exact value as ASCII-escaped JSON (key order kept); safe in any column."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def faithful(payload: Any, original: str) -> Any:
    """What a reader should see: the exact value when one was kept, else `payload`."""
    return json.loads(original) if original else payload


def dumps(value: Any) -> str:
    """Compact JSON text of a safe value (for jsonb parameters)."""
    return orjson.dumps(value).decode()
